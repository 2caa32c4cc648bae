"""The linear-chain model: labels, the flat weight vector and its layouts, constraints and forced
labels, decoding and the model file. Imports features and the kernels.
"""
