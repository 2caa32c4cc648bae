"""First-order Viterbi."""
import numpy as np
from numba import njit


@njit(cache=True)
def viterbi(emission, transition, end):
    """Best labeling under the score conventions of ``structperc._kernels``.

    Returns (path int64 (n,), score float64). Ties break to the lowest label index: the final
    label is the lowest optimal one and each predecessor the lowest optimal one, so among optimal
    labelings the one returned is smallest in the order of the reversed sequence.
    """
    # delta[t, c] = emission[t, c] + max_p (delta[t-1, p] + transition[t', p, c])
    # delta[0, c] = emission[0, c] + transition[0, L, c]
    # The forward pass keeps no back-pointers: a branch-free max over contiguous rows of
    # transition vectorizes. The backtrace recomputes the few sums it needs, in the same
    # floating-point operations, and takes the lowest p that reaches the maximum.
    n, n_labels = emission.shape
    path = np.zeros(n, dtype=np.int64)
    if n == 0:
        return path, 0.0
    per_token = transition.shape[0] > 1
    delta = np.empty((n, n_labels))
    for c in range(n_labels):
        delta[0, c] = emission[0, c] + transition[0, n_labels, c]
    best_prev = np.empty(n_labels)
    for t in range(1, n):
        tt = t if per_token else 0
        for c in range(n_labels):
            best_prev[c] = -np.inf
        for p in range(n_labels):
            dp = delta[t - 1, p]
            for c in range(n_labels):
                best_prev[c] = max(best_prev[c], dp + transition[tt, p, c])
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
        tt = t if per_token else 0
        c = path[t]
        top = -np.inf
        arg = 0
        for p in range(n_labels):
            s = delta[t - 1, p] + transition[tt, p, c]
            if s > top:
                top = s
                arg = p
        path[t - 1] = arg
    return path, best
