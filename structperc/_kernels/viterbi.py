"""First-order Viterbi."""
import numpy as np
from numba import njit


@njit(cache=True)
def viterbi(emission, transition, end):
    """Best labeling under the score conventions of ``structperc._kernels``.

    Returns (path int64 (n,), score float64). Ties break to the lowest label index: the final
    label is the lowest optimal one and each back-pointer the lowest optimal predecessor, so among
    optimal labelings the one returned is smallest in the order of the reversed sequence.
    """
    # delta[t, c] = emission[t, c] + max_p (delta[t-1, p] + transition[t', p, c])
    # delta[0, c] = emission[0, c] + transition[0, L, c]
    n, n_labels = emission.shape
    path = np.zeros(n, dtype=np.int64)
    if n == 0:
        return path, 0.0
    per_token = transition.shape[0] > 1
    delta = np.empty((n, n_labels))
    backpointer = np.zeros((n, n_labels), dtype=np.int64)
    for c in range(n_labels):
        delta[0, c] = emission[0, c] + transition[0, n_labels, c]
    best_prev = np.empty(n_labels)
    for t in range(1, n):
        tt = t if per_token else 0
        # p outer, c inner: contiguous rows of transition, and a strict > over ascending p keeps
        # the lowest optimal predecessor
        for c in range(n_labels):
            best_prev[c] = -np.inf
            backpointer[t, c] = 0
        for p in range(n_labels):
            dp = delta[t - 1, p]
            for c in range(n_labels):
                s = dp + transition[tt, p, c]
                if s > best_prev[c]:
                    best_prev[c] = s
                    backpointer[t, c] = p
        for c in range(n_labels):
            delta[t, c] = best_prev[c] + emission[t, c]
    best = -np.inf
    arg = 0
    for c in range(n_labels):
        s = delta[n - 1, c] + end[c]
        if s > best:
            best = s
            arg = c
    path[n - 1] = arg
    for t in range(n - 1, 0, -1):
        path[t - 1] = backpointer[t, path[t]]
    return path, best
