"""Reranking n-best lists: ranking data and its file formats, global features of candidates, the
rerankers (perceptron, voted and kernel perceptron, boosting) and the file pipelines of the commands.
Imports n-best lists and the rank kernels.
"""
