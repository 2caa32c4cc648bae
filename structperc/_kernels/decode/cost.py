"""Cost augmentation for loss-augmented decoding (structured hinge loss)."""
import numpy as np
from numba import njit


@njit(cache=True)
def hamming_cost(gold, n_labels, cost):
    """(n, L) extra emission scores: ``cost`` at every label except the gold one of each token.

    Adding them to the emission scores makes decoding maximize score(y) + cost * #{t: y_t != gold_t}.
    """
    extra = np.full((gold.shape[0], n_labels), cost)
    for t in range(gold.shape[0]):
        extra[t, gold[t]] = 0.0
    return extra
