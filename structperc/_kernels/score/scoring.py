"""A sentence's score tables from the flat weight vector, and the global feature vector Φ(x, y).

``sentence_scores`` is the one place where features become scores: every decoder and every
learning rule starts from its (emission, transition, end). The layout of w and the fields of
``data`` and ``layout`` are described in ``records.py``; the score conventions in ``__init__.py``.
A sentence is tokens [a, b) of ``data``.
"""
import numpy as np
from numba import njit

from .emission import emission_index, gather_features
from ..decode.second_order import history_block


@njit(cache=True)
def emission_scores(w, layout, data, a, b):
    """emission[t, c] = sum over features f of token a + t of value_f times the weight of (f, c)
    (``emission.py``; value 1 for a binary corpus); -inf off the candidates."""
    n_labels = layout.n_labels
    feature_offsets, feature_ids = data.feature_offsets, data.feature_ids
    cand_offsets, cand_labels = data.cand_offsets, data.cand_labels
    emission = np.zeros((b - a, n_labels))
    for t in range(b - a):
        gather_features(w, layout, feature_ids, data.feature_values, feature_offsets[a + t],
                        feature_offsets[a + t + 1], emission[t])
    if cand_offsets.shape[0] > 0:
        for t in range(b - a):
            if cand_offsets[a + t + 1] == cand_offsets[a + t]:
                continue  # an empty row: every label
            allowed = np.zeros(n_labels, dtype=np.bool_)
            for k in range(cand_offsets[a + t], cand_offsets[a + t + 1]):
                allowed[cand_labels[k]] = True
            for c in range(n_labels):
                if not allowed[c]:
                    emission[t, c] = -np.inf
    return emission


@njit(cache=True)
def transition_scores(w, layout, data, a, b):
    """(m, L + 1, L): the transition block plus pair features plus the mask; m = b - a when any
    pair feature fires, else 1."""
    n_labels = layout.n_labels
    pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    size = (n_labels + 1) * n_labels
    off_trans = layout.off_trans
    per_token = pair_offsets.shape[0] > 0 and pair_offsets[b] - pair_offsets[a] > 0
    m = b - a if per_token else 1
    transition = np.empty((m, n_labels + 1, n_labels))
    # indexed, not through a flat view: numba's reshape compiles its error messages' string code
    for tt in range(m):
        for p in range(n_labels + 1):
            for c in range(n_labels):
                transition[tt, p, c] = w[off_trans + p * n_labels + c] + layout.mask_penalty[p, c]
        if per_token:
            for k in range(pair_offsets[a + tt], pair_offsets[a + tt + 1]):
                base = layout.off_pair + pair_ids[k] * size
                for p in range(n_labels + 1):
                    for c in range(n_labels):
                        transition[tt, p, c] += w[base + p * n_labels + c]
    return transition


@njit(cache=True, inline="always")
def end_scores(w, layout):
    return w[layout.off_end: layout.off_end + layout.n_labels].copy()


@njit(cache=True, inline="always")
def sentence_scores(w, layout, data, a, b):
    """The first-order score tables of tokens [a, b): emission (n, L), transition (m, L + 1, L)
    and end (L,), as defined in ``structperc._kernels``. A second-order model adds
    ``second_order_transitions``; a locally normalized one normalizes them (``local_scores``)."""
    return emission_scores(w, layout, data, a, b), transition_scores(w, layout, data, a, b), end_scores(w, layout)


@njit(cache=True)
def second_order_transitions(w, layout, transition):
    """(m, L + 1, L + 1, L): second-order block plus the first-order transition[t', p, c]."""
    n_labels = layout.n_labels
    m = transition.shape[0]
    out = np.empty((m, n_labels + 1, n_labels + 1, n_labels))
    off = layout.off_trans2
    for tt in range(m):
        for q in range(n_labels + 1):
            for p in range(n_labels + 1):
                for c in range(n_labels):
                    out[tt, q, p, c] = w[off + (q * (n_labels + 1) + p) * n_labels + c] + transition[tt, p, c]
    return out


@njit(cache=True, no_cpython_wrapper=True)
def second_order_scores(w, layout, data, a, b, transition):
    """transition2 (``second_order_transitions``) and the candidates of tokens [a, b) rebased to the
    sentence (``sentence_candidates``): what a second-order decoder adds to the first-order tables."""
    offsets, labels = sentence_candidates(layout, data, a, b)
    return second_order_transitions(w, layout, transition), offsets, labels


@njit(cache=True)
def sentence_candidates(layout, data, a, b):
    """Candidate CSR rebased to the sentence [a, b), every set written out: every label when no tag
    dictionary is given, and at a token whose row of ``data`` is empty (a word the dictionary leaves
    free)."""
    n = b - a
    n_labels = layout.n_labels
    cand_offsets, cand_labels = data.cand_offsets, data.cand_labels
    no_dictionary = cand_offsets.shape[0] == 0
    offsets = np.zeros(n + 1, dtype=np.int64)
    for t in range(n):
        count = 0 if no_dictionary else cand_offsets[a + t + 1] - cand_offsets[a + t]
        offsets[t + 1] = offsets[t] + (count if count > 0 else n_labels)
    labels = np.empty(offsets[n], dtype=np.int64)
    for t in range(n):
        free = no_dictionary or cand_offsets[a + t + 1] == cand_offsets[a + t]
        if free:
            for c in range(n_labels):
                labels[offsets[t] + c] = c
        else:
            base = cand_offsets[a + t]
            for j in range(offsets[t + 1] - offsets[t]):
                labels[offsets[t] + j] = cand_labels[base + j]
    return offsets, labels


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


@njit(cache=True, no_cpython_wrapper=True)
def local_scores(emission, transition, end):
    """First-order MEMM tables: zero emission and end, transition[t, p, c] = log P(y_t = c | p, x),
    so that a labeling's score is sum_t log P(y_t | y_{t-1}, x)."""
    return np.zeros_like(emission), local_log_probabilities(emission, transition), np.zeros_like(end)


@njit(cache=True, no_cpython_wrapper=True)
def decoder_tables(local, emission, transition, end):
    """The first-order tables a decoder ranks labelings by: as they are for a global model
    (``local`` None), normalized by ``local_scores`` for a locally normalized one (``local`` True;
    the layout's flag, whose type numba compiles for)."""
    if local is None:
        return emission, transition, end
    return local_scores(emission, transition, end)


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
def phi_size(layout, data, a, b):
    n = b - a
    feature_offsets, pair_offsets = data.feature_offsets, data.pair_offsets
    size = feature_offsets[b] - feature_offsets[a] + n + 1
    if pair_offsets.shape[0] > 0:
        size += pair_offsets[b] - pair_offsets[a]
    if layout.order == 2:
        size += n
    return size


@njit(cache=True)
def phi_indices(layout, data, a, b, y):
    """Φ(x, y) of tokens [a, b) as the indices of w it adds to (repeats count twice); a
    (feature, label) pair the model has no weight for is left out. The amount added at each index
    is given by ``phi_values`` of the same labeling (1 everywhere for a binary corpus).

    y : int64 (b - a,) a labeling. w · Φ(x, y) is ``phi_dot(w, phi_indices(...), phi_values(...))``.
    """
    n_labels = layout.n_labels
    feature_offsets, feature_ids = data.feature_offsets, data.feature_ids
    pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    has_pairs = pair_offsets.shape[0] > 0
    out = np.empty(phi_size(layout, data, a, b), dtype=np.int64)
    k = 0
    for t in range(b - a):
        c = y[t]
        prev = y[t - 1] if t > 0 else n_labels
        for j in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            index = emission_index(layout, feature_ids[j], c)
            if index >= 0:
                out[k] = index
                k += 1
        out[k] = layout.off_trans + prev * n_labels + c
        k += 1
        if has_pairs:
            for j in range(pair_offsets[a + t], pair_offsets[a + t + 1]):
                out[k] = layout.off_pair + (pair_ids[j] * (n_labels + 1) + prev) * n_labels + c
                k += 1
        if layout.order == 2:
            prev2 = y[t - 2] if t > 1 else n_labels
            out[k] = layout.off_trans2 + (prev2 * (n_labels + 1) + prev) * n_labels + c
            k += 1
    out[k] = layout.off_end + y[b - a - 1]
    return out[: k + 1]


@njit(cache=True)
def phi_values(layout, data, a, b, y):
    """float64, aligned with ``phi_indices(layout, data, a, b, y)``: the value of each entry (the
    feature's value for an emission entry, 1 for the others). Empty for a binary corpus: every
    entry is 1. With only the model's (feature, label) pairs the positions depend on y (a missing
    pair is left out), so Φ(x, y) and Φ(x, ŷ) each take their own values."""
    if data.feature_values.shape[0] == 0:
        return np.zeros(0)
    feature_offsets, feature_ids, pair_offsets = data.feature_offsets, data.feature_ids, data.pair_offsets
    feature_values = data.feature_values
    has_pairs = pair_offsets.shape[0] > 0
    out = np.ones(phi_size(layout, data, a, b))
    k = 0
    for t in range(b - a):
        c = y[t]
        for j in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            if emission_index(layout, feature_ids[j], c) >= 0:
                out[k] = feature_values[j]
                k += 1
        k += 1
        if has_pairs:
            k += pair_offsets[a + t + 1] - pair_offsets[a + t]
        if layout.order == 2:
            k += 1
    return out[: k + 1]


@njit(cache=True)
def add_phi(target, scale, phi, values):
    """target[phi[i]] += scale * values[i] for every entry i of phi (the sparse update
    w += scale * Φ); ``values`` empty: all 1."""
    if values.shape[0] == 0:
        for i in phi:
            target[i] += scale
    else:
        for i in range(phi.shape[0]):
            target[phi[i]] += scale * values[i]


@njit(cache=True)
def add_phi_difference(target, scale, layout, data, a, b, y, z):
    """target += scale * (Φ(x, y) - Φ(x, z)) for two labelings y, z of tokens [a, b), touching only
    what does not cancel: the emission features of the tokens whose labels differ, and the
    transition (and pair-feature, second-order) entries whose label context differs. The same sum
    as ``add_phi`` of ``phi_indices(y)`` minus that of ``phi_indices(z)``, in time proportional to
    the disagreement instead of the sentence (a perceptron's mistake is mostly a few tokens)."""
    n_labels = layout.n_labels
    feature_offsets, feature_ids, values = data.feature_offsets, data.feature_ids, data.feature_values
    pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    has_pairs = pair_offsets.shape[0] > 0
    size = (n_labels + 1) * n_labels
    n = b - a
    for t in range(n):
        c, d = y[t], z[t]
        py = y[t - 1] if t > 0 else n_labels
        pz = z[t - 1] if t > 0 else n_labels
        if c != d:
            for k in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
                x = scale * values[k] if values.shape[0] > 0 else scale
                i = emission_index(layout, feature_ids[k], c)
                if i >= 0:
                    target[i] += x
                i = emission_index(layout, feature_ids[k], d)
                if i >= 0:
                    target[i] -= x
        if c != d or py != pz:
            target[layout.off_trans + py * n_labels + c] += scale
            target[layout.off_trans + pz * n_labels + d] -= scale
            if has_pairs:
                for k in range(pair_offsets[a + t], pair_offsets[a + t + 1]):
                    base = layout.off_pair + pair_ids[k] * size
                    target[base + py * n_labels + c] += scale
                    target[base + pz * n_labels + d] -= scale
        if layout.order == 2:
            py2 = y[t - 2] if t > 1 else n_labels
            pz2 = z[t - 2] if t > 1 else n_labels
            if c != d or py != pz or py2 != pz2:
                target[layout.off_trans2 + (py2 * (n_labels + 1) + py) * n_labels + c] += scale
                target[layout.off_trans2 + (pz2 * (n_labels + 1) + pz) * n_labels + d] -= scale
    if n > 0 and y[n - 1] != z[n - 1]:
        target[layout.off_end + y[n - 1]] += scale
        target[layout.off_end + z[n - 1]] -= scale


@njit(cache=True)
def phi_dot(w, phi, values):
    """w · Φ for Φ given as (indices, values) (``values`` empty: all 1)."""
    total = 0.0
    if values.shape[0] == 0:
        for i in phi:
            total += w[i]
    else:
        for i in range(phi.shape[0]):
            total += w[phi[i]] * values[i]
    return total


@njit(cache=True)
def has_missing(gold):
    """True when some token of ``gold`` is unlabelled (label id < 0)."""
    for t in range(gold.shape[0]):
        if gold[t] < 0:
            return True
    return False


@njit(cache=True)
def known_label_penalty(gold, n_labels):
    """(n, L) extra emission scores that fix the known labels of a partially labelled sentence:

        penalty[t, c] = 0 if gold[t] < 0 (unlabelled) or c == gold[t], else -inf

    Added to the emission scores, every decoder (first or second order, Viterbi or forward-backward)
    runs over the labelings consistent with the known labels only."""
    penalty = np.zeros((gold.shape[0], n_labels))
    for t in range(gold.shape[0]):
        if gold[t] >= 0:
            for c in range(n_labels):
                if c != gold[t]:
                    penalty[t, c] = -np.inf
    return penalty
