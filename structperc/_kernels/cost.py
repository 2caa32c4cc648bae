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


@njit(cache=True)
def add_hamming_cost(emission, gold, cost):
    """Emission scores plus a Hamming cost: decoding them maximizes score(y) + cost * #{t: y_t != gold_t}.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    gold : ndarray of shape (n,), int64
    cost : float
        Added to every label except the gold one at each token.

    Returns
    -------
    ndarray of shape (n, L)
        A new array; ``emission`` is not modified. -inf entries stay -inf.
    """
    return emission + hamming_cost(gold, emission.shape[1], cost)
