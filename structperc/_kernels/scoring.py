"""Sentence scores from the flat weight vector, the global feature vector Φ(x, y), and decoding.

All weights live in one flat float64 vector ``w``; ``dims`` (int64, see ``DIMS``) says where each
block starts. With L labels, F emission features and P pair features::

    w[f * L + c]                              emission: feature f with label c
    w[off_trans + p * L + c]                  transition p -> c; p == L is the start state
    w[off_end + c]                            finishing on c
    w[off_pair + (g * (L + 1) + p) * L + c]   pair feature g with the transition p -> c
    w[off_trans2 + (q * (L + 1) + p) * L + c] second order: q, p -> c (q or p == L: start)

A sentence is tokens [a, b) of the CSR arrays ``feature_offsets``/``feature_ids`` and
``pair_offsets``/``pair_ids``. ``candidates`` restricts the labels of each token (a tag dictionary):
``cand_offsets`` (n_tokens + 1,) and ``cand_labels``; an empty ``cand_offsets`` allows every label.
``mask_penalty`` (L + 1, L) is 0 for an allowed transition and -inf for a forbidden one.
"""
import numpy as np
from numba import njit, prange

from .second_order import history_block, viterbi2, viterbi2_context
from .viterbi import viterbi

# indices into the ``dims`` array; LOCAL is 1 for a locally normalized model (MEMM)
N_LABELS, N_FEATURES, N_PAIR, ORDER, OFF_TRANS, OFF_END, OFF_PAIR, OFF_TRANS2, SIZE, LOCAL = range(10)


@njit(cache=True)
def emission_scores(w, dims, feature_offsets, feature_ids, a, b, cand_offsets, cand_labels):
    """emission[t, c] = sum over features f of token a + t of w[f * L + c]; -inf off the candidates."""
    n_labels = dims[N_LABELS]
    emission = np.zeros((b - a, n_labels))
    for t in range(b - a):
        for k in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            base = feature_ids[k] * n_labels
            for c in range(n_labels):
                emission[t, c] += w[base + c]
    if cand_offsets.shape[0] > 0:
        for t in range(b - a):
            allowed = np.zeros(n_labels, dtype=np.bool_)
            for k in range(cand_offsets[a + t], cand_offsets[a + t + 1]):
                allowed[cand_labels[k]] = True
            for c in range(n_labels):
                if not allowed[c]:
                    emission[t, c] = -np.inf
    return emission


@njit(cache=True)
def transition_scores(w, dims, pair_offsets, pair_ids, a, b, mask_penalty):
    """(m, L + 1, L): the transition block plus pair features; m = b - a when any fire, else 1."""
    n_labels = dims[N_LABELS]
    size = (n_labels + 1) * n_labels
    off_trans = dims[OFF_TRANS]
    per_token = pair_offsets[b] - pair_offsets[a] > 0
    m = b - a if per_token else 1
    transition = np.empty((m, n_labels + 1, n_labels))
    for tt in range(m):
        flat = transition[tt].reshape(size)
        for i in range(size):
            flat[i] = w[off_trans + i]
        if per_token:
            for k in range(pair_offsets[a + tt], pair_offsets[a + tt + 1]):
                base = dims[OFF_PAIR] + pair_ids[k] * size
                for i in range(size):
                    flat[i] += w[base + i]
        transition[tt] += mask_penalty
    return transition


@njit(cache=True)
def second_order_transitions(w, dims, transition):
    """(m, L + 1, L + 1, L): second-order block plus the first-order transition[t', p, c]."""
    n_labels = dims[N_LABELS]
    m = transition.shape[0]
    out = np.empty((m, n_labels + 1, n_labels + 1, n_labels))
    off = dims[OFF_TRANS2]
    for tt in range(m):
        for q in range(n_labels + 1):
            for p in range(n_labels + 1):
                for c in range(n_labels):
                    out[tt, q, p, c] = w[off + (q * (n_labels + 1) + p) * n_labels + c] + transition[tt, p, c]
    return out


@njit(cache=True)
def end_scores(w, dims):
    return w[dims[OFF_END]: dims[OFF_END] + dims[N_LABELS]].copy()


@njit(cache=True)
def sentence_candidates(cand_offsets, cand_labels, a, b, n_labels):
    """Candidate CSR rebased to the sentence [a, b); every label when no tag dictionary is given."""
    n = b - a
    if cand_offsets.shape[0] == 0:
        offsets = np.arange(n + 1) * n_labels
        labels = np.empty(n * n_labels, dtype=np.int64)
        for t in range(n):
            for c in range(n_labels):
                labels[t * n_labels + c] = c
        return offsets.astype(np.int64), labels
    offsets = cand_offsets[a: b + 1] - cand_offsets[a]
    return offsets.copy(), cand_labels[cand_offsets[a]: cand_offsets[b]].copy()


@njit(cache=True)
def local_log_probabilities(emission, transition):
    """MEMM scores: (n, L + 1, L) log P(y_t = c | y_{t-1} = p, x), from the unnormalized
    emission[t, c] + transition[t', p, c], normalized over c for every p (row L: start, used at t = 0)."""
    n, n_labels = emission.shape
    out = np.full((n, n_labels + 1, n_labels), -np.inf)
    per_token = transition.shape[0] > 1
    for t in range(n):
        tt = t if per_token else 0
        for p in range(n_labels + 1):
            if (t == 0) != (p == n_labels):
                continue
            top = -np.inf
            for c in range(n_labels):
                v = emission[t, c] + transition[tt, p, c]
                out[t, p, c] = v
                if v > top:
                    top = v
            if top == -np.inf:
                continue
            total = 0.0
            for c in range(n_labels):
                total += np.exp(out[t, p, c] - top)
            log_norm = top + np.log(total)
            for c in range(n_labels):
                out[t, p, c] -= log_norm
    return out


@njit(cache=True)
def local_context_scores2(emission, transition2, cand_offsets, cand_labels):
    """Second-order MEMM: (n, L + 1, L + 1) context[t, pp, p] = -log Z_t(pp, p), with

        Z_t(pp, p) = sum over the candidates c of token t of exp(emission[t, c] + transition2[t', pp, p, c])

    so that log P(y_t = c | y_{t-2} = pp, y_{t-1} = p, x) = emission[t, c] + transition2[t', pp, p, c]
    + context[t, pp, p]. Only the histories inside the candidate sets are computed (pp in C_{t-2},
    p in C_{t-1}, the start L before the sentence); the others, and a history with no allowed
    continuation (Z = 0), get -inf."""
    n, n_labels = emission.shape
    start = n_labels
    per_token = transition2.shape[0] > 1
    context = np.full((n, n_labels + 1, n_labels + 1), -np.inf)
    for t in range(n):
        tt = t if per_token else 0
        base_h, n_h, base_i, n_i, base_j, n_j = history_block(cand_offsets, t)
        for h in range(n_h):
            pp = cand_labels[base_h + h] if t >= 2 else start
            for i in range(n_i):
                p = cand_labels[base_i + i] if t >= 1 else start
                row = transition2[tt, pp, p]
                top = -np.inf
                for j in range(n_j):
                    c = cand_labels[base_j + j]
                    top = max(top, emission[t, c] + row[c])
                if top == -np.inf:
                    continue
                total = 0.0
                for j in range(n_j):
                    c = cand_labels[base_j + j]
                    total += np.exp(emission[t, c] + row[c] - top)
                context[t, pp, p] = -(top + np.log(total))
    return context


@njit(cache=True)
def decode_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                    mask_penalty, cand_offsets, cand_labels, extra_emission):
    """Best labeling of tokens [a, b) and its score. ``extra_emission`` (n, L) or (0, L) is added
    to the emission scores (the Hamming cost of loss-augmented decoding)."""
    emission = emission_scores(w, dims, feature_offsets, feature_ids, a, b, cand_offsets, cand_labels)
    if extra_emission.shape[0] > 0:
        emission += extra_emission
    transition = transition_scores(w, dims, pair_offsets, pair_ids, a, b, mask_penalty)
    end = end_scores(w, dims)
    if dims[LOCAL] == 1 and dims[ORDER] == 2:
        # sum_t log P(y_t | y_{t-2}, y_{t-1}, x): normalize each history over the candidates of t
        transition2 = second_order_transitions(w, dims, transition)
        offsets, labels = sentence_candidates(cand_offsets, cand_labels, a, b, dims[N_LABELS])
        context = local_context_scores2(emission, transition2, offsets, labels)
        return viterbi2_context(emission, transition2, context, np.zeros_like(end), offsets, labels)
    if dims[LOCAL] == 1:
        transition = local_log_probabilities(emission, transition)
        emission = np.zeros_like(emission)
        end = np.zeros_like(end)
    if dims[ORDER] == 2:
        transition2 = second_order_transitions(w, dims, transition)
        offsets, labels = sentence_candidates(cand_offsets, cand_labels, a, b, dims[N_LABELS])
        return viterbi2(emission, transition2, end, offsets, labels)
    return viterbi(emission, transition, end)


@njit(cache=True, parallel=True)
def decode_corpus(w, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids,
                  mask_penalty, cand_offsets, cand_labels):
    """Best labels of every token (int64 (n_tokens,)) and score of every sentence."""
    n_sentences = sentence_offsets.shape[0] - 1
    labels = np.zeros(sentence_offsets[-1], dtype=np.int64)
    scores = np.zeros(n_sentences)
    no_extra = np.zeros((0, dims[N_LABELS]))
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        path, score = decode_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids,
                                      a, b, mask_penalty, cand_offsets, cand_labels, no_extra)
        labels[a:b] = path
        scores[s] = score
    return labels, scores


@njit(cache=True)
def phi_size(dims, feature_offsets, pair_offsets, a, b):
    n = b - a
    size = feature_offsets[b] - feature_offsets[a] + n + (pair_offsets[b] - pair_offsets[a]) + 1
    if dims[ORDER] == 2:
        size += n
    return size


@njit(cache=True)
def phi_indices(dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b, y):
    """Φ(x, y) of tokens [a, b) as the indices of w it adds 1 to (repeats count twice).

    y : int64 (b - a,) a labeling. w · Φ(x, y) is ``w[phi_indices(...)].sum()``.
    """
    n_labels = dims[N_LABELS]
    out = np.empty(phi_size(dims, feature_offsets, pair_offsets, a, b), dtype=np.int64)
    k = 0
    for t in range(b - a):
        c = y[t]
        prev = y[t - 1] if t > 0 else n_labels
        for j in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            out[k] = feature_ids[j] * n_labels + c
            k += 1
        out[k] = dims[OFF_TRANS] + prev * n_labels + c
        k += 1
        for j in range(pair_offsets[a + t], pair_offsets[a + t + 1]):
            out[k] = dims[OFF_PAIR] + (pair_ids[j] * (n_labels + 1) + prev) * n_labels + c
            k += 1
        if dims[ORDER] == 2:
            prev2 = y[t - 2] if t > 1 else n_labels
            out[k] = dims[OFF_TRANS2] + (prev2 * (n_labels + 1) + prev) * n_labels + c
            k += 1
    out[k] = dims[OFF_END] + y[b - a - 1]
    return out


@njit(cache=True)
def add_phi(target, scale, phi):
    """target[i] += scale for every index i of phi (the sparse update w += scale * Φ)."""
    for i in phi:
        target[i] += scale


@njit(cache=True)
def phi_dot(w, phi):
    total = 0.0
    for i in phi:
        total += w[i]
    return total
