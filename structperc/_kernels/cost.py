"""Cost augmentation for loss-augmented decoding (structured hinge loss)."""
import numpy as np
from numba import njit


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
    # augmented[t, c] = emission[t, c] + cost * [c != gold[t]]
    n, n_labels = emission.shape
    augmented = np.empty((n, n_labels))
    for t in range(n):
        for c in range(n_labels):
            augmented[t, c] = emission[t, c] if c == gold[t] else emission[t, c] + cost
    return augmented
