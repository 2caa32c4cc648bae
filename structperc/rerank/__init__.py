"""Reranking n-best lists: ranking data and its file formats (``data``), global features of candidates
(``features``) and the features that see the rest of the document, gazetteers and the whole label
sequence (``context``), the rerankers (``learners``: perceptron, voted and kernel perceptron, boosting,
MIRA and the loss-scaled perceptron), the reranked tagger as one model (``tagger.RerankedTagger``)
and the file pipelines of the commands (``pipeline``). Imports n-best lists and the rank kernels.
"""
