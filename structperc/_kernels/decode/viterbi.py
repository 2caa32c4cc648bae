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


@njit(cache=True, no_cpython_wrapper=True)
def largest_set(cand_offsets):
    """The size of the largest candidate set (at least 1): what a per-token scratch array needs."""
    largest = 1
    for t in range(cand_offsets.shape[0] - 1):
        largest = max(largest, cand_offsets[t + 1] - cand_offsets[t])
    return largest


@njit(cache=True)
def viterbi_candidates(emission, transition, end, cand_offsets, cand_labels):
    """``viterbi`` over the labelings inside per-token candidate sets.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    transition : ndarray of shape (m, L+1, L), m in {1, n}
    end : ndarray of shape (L,)
    cand_offsets : ndarray of shape (n + 1,), int64
        Token t may take cand_labels[cand_offsets[t]: cand_offsets[t + 1]] (rebased: cand_offsets[0] == 0).
    cand_labels : ndarray of shape (cand_offsets[n],), int64
        Ascending, distinct, non-empty per token.

    Returns
    -------
    path : ndarray of shape (n,), int64
    score : float
        -inf (and some labeling inside the sets) when no such labeling has a finite score.

    Token t after token t-1 costs |C_t| |C_{t-1}| instead of L². Ties break as in ``viterbi``
    (lowest optimal final label, then lowest optimal predecessor); with every label at every token
    the floating-point operations are those of ``viterbi``, in the same order, so the result is too.
    """
    # delta[t, j] = emission[t, c_j] + max_i (delta[t-1, i] + transition[t', c_i, c_j]), i over C_{t-1}
    # delta[0, j] = emission[0, c_j] + transition[0, L, c_j];  delta[t] is stored at cand_offsets[t]
    n, n_labels = emission.shape
    path = np.zeros(n, dtype=np.int64)
    if n == 0:
        return path, 0.0
    per_token = transition.shape[0] > 1
    max_count = largest_set(cand_offsets)
    delta = np.empty(cand_offsets[n])
    best_prev = np.empty(max_count)
    for j in range(cand_offsets[1]):
        c = cand_labels[j]
        delta[j] = emission[0, c] + transition[0, n_labels, c]
    for t in range(1, n):
        tt = t if per_token else 0
        base_i, base_j = cand_offsets[t - 1], cand_offsets[t]
        n_i, n_j = base_j - base_i, cand_offsets[t + 1] - base_j
        # ascending distinct labels: a full set means candidate j is label j (this loop vectorizes)
        all_labels = n_j == n_labels
        for j in range(n_j):
            best_prev[j] = -np.inf
        for i in range(n_i):
            dp = delta[base_i + i]
            row = transition[tt, cand_labels[base_i + i]]
            if all_labels:
                for j in range(n_j):
                    best_prev[j] = max(best_prev[j], dp + row[j])
            else:
                for j in range(n_j):
                    best_prev[j] = max(best_prev[j], dp + row[cand_labels[base_j + j]])
        for j in range(n_j):
            delta[base_j + j] = best_prev[j] + emission[t, cand_labels[base_j + j]]
    best = -np.inf
    arg = 0
    base = cand_offsets[n - 1]
    for j in range(cand_offsets[n] - base):
        s = delta[base + j] + end[cand_labels[base + j]]
        if s > best:
            best = s
            arg = j
    path[n - 1] = cand_labels[base + arg]
    # the walk back recomputes the sums of the forward pass and takes the lowest optimal predecessor
    for t in range(n - 1, 0, -1):
        tt = t if per_token else 0
        c = path[t]
        base_i = cand_offsets[t - 1]
        top = -np.inf
        arg = 0
        for i in range(cand_offsets[t] - base_i):
            s = delta[base_i + i] + transition[tt, cand_labels[base_i + i], c]
            if s > top:
                top = s
                arg = i
        path[t - 1] = cand_labels[base_i + arg]
    return path, best
