"""Second-order (trigram) Viterbi restricted to per-token candidate labels.

Conventions (L labels, n tokens, S = L is the start symbol)::

    emission    float64 (n, L)
    transition2 float64 (m, L+1, L+1, L)  m is 1 or n; transition2[t', pp, p, c]: score of c at t
                                          after y_{t-2} = pp, y_{t-1} = p (pp = p = S at t = 0,
                                          pp = S at t = 1), t' = t if m == n else 0
    end         float64 (L,)

    score(y) = sum_t emission[t, y_t] + transition2[t', y_{t-2}, y_{t-1}, y_t] + end[y_{n-1}]

Candidates: the labels allowed at token t are cand_labels[cand_offsets[t]:cand_offsets[t+1]],
in ascending order. Labelings outside the candidate sets are never considered.
"""
import numpy as np
from numba import njit


@njit(cache=True, no_cpython_wrapper=True)
def history_block(cand_offsets, t):
    """Where the candidates of y_{t-2}, y_{t-1} and y_t lie in cand_labels: (base_h, n_h, base_i,
    n_i, base_j, n_j). Before the sentence the history is the start symbol alone (base 0, count 1)."""
    base_h = cand_offsets[t - 2] if t >= 2 else 0
    n_h = cand_offsets[t - 1] - base_h if t >= 2 else 1
    base_i = cand_offsets[t - 1] if t >= 1 else 0
    n_i = cand_offsets[t] - base_i if t >= 1 else 1
    base_j = cand_offsets[t]
    n_j = cand_offsets[t + 1] - base_j
    return base_h, n_h, base_i, n_i, base_j, n_j


@njit(cache=True)
def viterbi2(emission, transition2, end, cand_offsets, cand_labels):
    """Best labeling inside the candidate sets under the second-order score.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    transition2 : ndarray of shape (m, L+1, L+1, L), m in {1, n}
    end : ndarray of shape (L,)
    cand_offsets : ndarray of shape (n + 1,), int64
    cand_labels : ndarray of shape (cand_offsets[n],), int64
        Ascending label ids per token.

    Returns
    -------
    path : ndarray of shape (n,), int64
    score : float
        -inf (and the first candidate of every token) if no labeling has a finite score.

    The state at t is the pair (y_{t-1}, y_t); the cost is sum_t |C_{t-2}| |C_{t-1}| |C_t|. Ties
    break like ``viterbi``: the final state is the lowest optimal (y_{n-1}, then y_{n-2}) and each
    back-pointer the lowest optimal y_{t-2}, so among optimal labelings the one returned is the
    smallest in the order of the reversed sequence (y_{n-1}, ..., y_0).
    """
    return viterbi2_context(emission, transition2, np.zeros((0, 1, 1)), end, cand_offsets, cand_labels)


@njit(cache=True)
def viterbi2_context(emission, transition2, context, end, cand_offsets, cand_labels):
    """``viterbi2`` with a score for each history (y_{t-2}, y_{t-1}) at each token:

        score(y) = sum_t emission[t, y_t] + transition2[t', y_{t-2}, y_{t-1}, y_t]
                         + context[t, y_{t-2}, y_{t-1}] + end[y_{n-1}]

    context : ndarray of shape (n, L+1, L+1), or (0, 1, 1) for none
        Only the histories inside the candidate sets are read (the start symbol S = L for y_{-1}
        and y_{-2}); -inf forbids every continuation of a history. The second-order MEMM passes
        -log Z_t(y_{t-2}, y_{t-1}) (``scoring.local_context_scores2``).

    Other parameters, result, cost and tie-breaking as ``viterbi2``. Without a context the scores
    are bit for bit those of the plain recursion (x + 0.0 == x).
    """
    n, n_labels = emission.shape
    path = np.zeros(n, dtype=np.int64)
    if n == 0:
        return path, 0.0
    per_token = transition2.shape[0] > 1
    start = n_labels
    use_context = context.shape[0] > 0

    # States of token t are indexed i * |C_t| + j, with i over C_{t-1} (just the start symbol
    # at t = 0, |C_{-1}| = 1) and j over C_t; state_offsets[t] is where token t's block begins.
    state_offsets = np.empty(n + 1, dtype=np.int64)
    state_offsets[0] = 0
    n_prev = 1
    max_count = 1
    for t in range(n):
        count = cand_offsets[t + 1] - cand_offsets[t]
        state_offsets[t + 1] = state_offsets[t] + n_prev * count
        n_prev = count
        if count > max_count:
            max_count = count
    delta = np.empty(state_offsets[n])
    # incoming[t, (p, c)] = delta[t, (p, c)] - emission[t, c], kept exactly as computed so that
    # the walk back can find the optimal predecessor by equality instead of storing it.
    incoming = np.empty(state_offsets[n])
    best = np.empty(max_count)

    # delta[0, (S, c)] = emission[0, c] + context[0, S, S] + transition2[0, S, S, c]
    first = context[0, start, start] if use_context else 0.0
    base = cand_offsets[0]
    for j in range(cand_offsets[1] - base):
        c = cand_labels[base + j]
        incoming[j] = first + transition2[0, start, start, c]
        delta[j] = emission[0, c] + incoming[j]

    # incoming[t, (p, c)] = max_pp ((delta[t-1, (pp, p)] + context[t, pp, p]) + transition2[t', pp, p, c]),
    # pp = S at t = 1;  delta[t, (p, c)] = emission[t, c] + incoming[t, (p, c)]
    for t in range(1, n):
        tt = t if per_token else 0
        base_h, n_h, base_i, n_i, base_j, n_j = history_block(cand_offsets, t)
        # ascending distinct labels: a full set means candidate j is label j
        all_labels = n_j == n_labels
        prev_block = state_offsets[t - 1]
        block = state_offsets[t]
        for i in range(n_i):
            p = cand_labels[base_i + i]
            for j in range(n_j):
                best[j] = -np.inf
            for h in range(n_h):
                pp = cand_labels[base_h + h] if t >= 2 else start
                d = delta[prev_block + h * n_i + i] + (context[t, pp, p] if use_context else 0.0)
                if d == -np.inf:
                    continue
                row = transition2[tt, pp, p]
                if all_labels:
                    # direct indexing: this max loop vectorizes
                    for j in range(n_j):
                        best[j] = max(best[j], d + row[j])
                else:
                    for j in range(n_j):
                        best[j] = max(best[j], d + row[cand_labels[base_j + j]])
            for j in range(n_j):
                incoming[block + i * n_j + j] = best[j]
                delta[block + i * n_j + j] = best[j] + emission[t, cand_labels[base_j + j]]

    # Final state: max over (p, c) of delta[n-1, (p, c)] + end[c], scanning c first, then p.
    _, _, base_i, n_i, base_j, n_j = history_block(cand_offsets, n - 1)
    block = state_offsets[n - 1]
    best_score = -np.inf
    best_i = 0
    best_j = 0
    for j in range(n_j):
        c = cand_labels[base_j + j]
        for i in range(n_i):
            s = delta[block + i * n_j + j] + end[c]
            if s > best_score:
                best_score = s
                best_i = i
                best_j = j

    # Walk back: the state (i, j) of token t becomes (h, i) at t-1, h the lowest index in C_{t-2}
    # whose term (delta[t-1, (h, i)] + context) + transition2[t', pp_h, p_i, c_j] equals
    # incoming[t, (i, j)] (the same float expression as in the forward pass, so equality is exact).
    i = best_i
    j = best_j
    for t in range(n - 1, -1, -1):
        c = cand_labels[cand_offsets[t] + j]
        path[t] = c
        if t == 0:
            break
        tt = t if per_token else 0
        n_j = cand_offsets[t + 1] - cand_offsets[t]
        target = incoming[state_offsets[t] + i * n_j + j]
        p = cand_labels[cand_offsets[t - 1] + i]
        n_i = cand_offsets[t] - cand_offsets[t - 1]
        n_h = cand_offsets[t - 1] - cand_offsets[t - 2] if t >= 2 else 1
        h_found = 0
        for h in range(n_h):
            pp = cand_labels[cand_offsets[t - 2] + h] if t >= 2 else start
            d = delta[state_offsets[t - 1] + h * n_i + i] + (context[t, pp, p] if use_context else 0.0)
            if d + transition2[tt, pp, p, c] == target:
                h_found = h
                break
        j = i
        i = h_found
    return path, best_score
