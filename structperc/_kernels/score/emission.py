"""Where the weight of (emission feature f, label c) lives, for both layouts of the emission block.

All pairs (``layout.emission_offsets`` empty): w[f * L + c]. Only the model's pairs: feature f has
the weights w[lo: hi], lo, hi = emission_offsets[f], emission_offsets[f + 1], for its labels in
ascending order. A row with every label (hi - lo = L) holds c at lo + c and lists no labels: the
frequent features of ``--dense-count`` take no label memory. Another row's labels are
``emission_labels[s: s + hi - lo]``, s = lo - L * emission_full_before[f]. A pair outside the list
has no weight (it scores 0 and takes no update). Every kernel that reads or writes emission weights
goes through these helpers; ``full_labels`` and ``compact_labels`` convert to and from one label per
pair (the model file's form).
"""
import numpy as np
from numba import njit


def full_rows_before(offsets, n_labels):
    """int32 (F + 1,): the rows with every label before feature f (``emission_full_before``)."""
    out = np.zeros(len(offsets), dtype=np.int32)
    np.cumsum(np.diff(offsets) == n_labels, out=out[1:])
    return out


def full_labels(offsets, labels, n_labels):
    """int32 (E,): the label of every pair, from the label lists of the rows that lack some label."""
    counts = np.diff(offsets)
    full_row = counts == n_labels
    in_full_row = np.repeat(full_row, counts)
    out = np.empty(int(offsets[-1]), dtype=np.int32)
    out[in_full_row] = np.tile(np.arange(n_labels, dtype=np.int32), int(full_row.sum()))
    out[~in_full_row] = labels
    return out


def compact_labels(offsets, labels, n_labels):
    """int32: the label lists of the rows that lack some label, from one label per pair (returned
    as it is when it already is that, or when no row has every label)."""
    counts = np.diff(offsets)
    full_row = counts == n_labels
    if len(labels) != offsets[-1] or not full_row.any():
        return np.asarray(labels, dtype=np.int32)
    return np.ascontiguousarray(labels[~np.repeat(full_row, counts)], dtype=np.int32)


@njit(cache=True, inline="always")  # a call would pass the Layout record each time
def emission_index(layout, f, c):
    """Index in w of the weight of (feature f, label c), or -1 when the model has no such pair."""
    offsets = layout.emission_offsets
    if offsets.shape[0] == 0:
        return f * layout.n_labels + c
    return _listed_index(offsets, layout.emission_labels, layout.emission_full_before, layout.n_labels, f, c)


# The two loops below run once per token over the token's feature occurrences [lo, hi). They take
# the layout's branch once per token, not once per feature: numba pays a reference count on every
# array taken out of a record, and at the feature level those counts cost several times the work.
# A feature's row is taken as a slice and indexed from 0: w[base + c] makes numba check for a
# negative index at every label, and that check keeps the label loop from vectorizing (half the time).
@njit(cache=True, inline="always")
def gather_features(w, layout, feature_ids, values, lo, hi, out):
    """out[c] += value_k * w[emission_index(f_k, c)] for the feature occurrences k in [lo, hi) and
    every label c the model has for f_k; ``values`` empty: every value is 1. out : float64 (L,)."""
    offsets = layout.emission_offsets
    n_labels = layout.n_labels
    if offsets.shape[0] == 0:
        if values.shape[0] == 0:
            for k in range(lo, hi):
                base = feature_ids[k] * n_labels
                row = w[base: base + n_labels]
                for c in range(n_labels):
                    out[c] += row[c]
        else:
            for k in range(lo, hi):
                base = feature_ids[k] * n_labels
                row = w[base: base + n_labels]
                x = np.float64(values[k])
                for c in range(n_labels):
                    out[c] += x * row[c]
    else:
        labels, full_before = layout.emission_labels, layout.emission_full_before
        for k in range(lo, hi):
            f = feature_ids[k]
            x = np.float64(values[k]) if values.shape[0] > 0 else 1.0
            row_lo, row_hi = offsets[f], offsets[f + 1]
            row = w[row_lo: row_hi]
            if row_hi - row_lo == n_labels:
                for c in range(n_labels):
                    out[c] += x * row[c]
            else:
                start = row_lo - n_labels * np.int64(full_before[f])
                for j in range(row_hi - row_lo):
                    out[labels[start + j]] += x * row[j]


@njit(cache=True, inline="always")
def scatter_features(target, layout, data, i, scale, row, other, other_scale):
    """target[emission_index(f_k, c)] += scale * value_k * row[c] for the feature occurrences k of
    token i of ``data`` and every label c the model has for f_k; ``values`` empty: every value is 1. When
    ``other`` is not empty, other (indexed like target) gains other_scale * value_k * row[c] in the
    same pass (the SGD rules' weights and their averaging accumulator: one read of each feature's
    id and value and of row for both). row : float64 (L,)."""
    feature_ids, values = data.feature_ids, data.feature_values
    lo, hi = data.feature_offsets[i], data.feature_offsets[i + 1]
    offsets = layout.emission_offsets
    n_labels = layout.n_labels
    both = other.shape[0] > 0
    if offsets.shape[0] == 0:
        for k in range(lo, hi):
            base = feature_ids[k] * n_labels
            x = np.float64(values[k]) if values.shape[0] > 0 else 1.0
            block = target[base: base + n_labels]
            xs = x * scale
            for c in range(n_labels):
                block[c] += xs * row[c]
            if both:
                block = other[base: base + n_labels]
                xs = x * other_scale
                for c in range(n_labels):
                    block[c] += xs * row[c]
    else:
        labels, full_before = layout.emission_labels, layout.emission_full_before
        for k in range(lo, hi):
            f = feature_ids[k]
            x = np.float64(values[k]) if values.shape[0] > 0 else 1.0
            row_lo, row_hi = offsets[f], offsets[f + 1]
            full = row_hi - row_lo == n_labels
            start = row_lo - n_labels * np.int64(full_before[f])
            xs = x * scale
            block = target[row_lo: row_hi]
            if full:
                for c in range(n_labels):
                    block[c] += xs * row[c]
            else:
                for j in range(row_hi - row_lo):
                    block[j] += xs * row[labels[start + j]]
            if both:
                xs = x * other_scale
                block = other[row_lo: row_hi]
                if full:
                    for c in range(n_labels):
                        block[c] += xs * row[c]
                else:
                    for j in range(row_hi - row_lo):
                        block[j] += xs * row[labels[start + j]]


@njit(cache=True, inline="always")
def scatter_occurrences(target, layout, features, tokens, values, lo, hi, node):
    """target[emission_index(f_k, c)] += value_k * node[t_k, c] for the feature occurrences k in
    [lo, hi) of (features, tokens, values) and every label c the model has for f_k; ``values`` empty:
    every value is 1. target is indexed like w; node float64 (n_tokens, L)."""
    n_labels = layout.n_labels
    offsets = layout.emission_offsets
    all_pairs = offsets.shape[0] == 0
    labels, full_before = layout.emission_labels, layout.emission_full_before
    has_values = values.shape[0] > 0
    for k in range(lo, hi):
        f = features[k]
        x = np.float64(values[k]) if has_values else 1.0
        row = node[tokens[k]]
        if all_pairs:
            row_lo, row_hi = f * n_labels, (f + 1) * n_labels
        else:
            row_lo, row_hi = offsets[f], offsets[f + 1]
        out = target[row_lo: row_hi]
        if row_hi - row_lo == n_labels:
            for c in range(n_labels):
                out[c] += x * row[c]
        else:
            start = row_lo - n_labels * np.int64(full_before[f])
            for i in range(row_hi - row_lo):
                out[i] += x * row[labels[start + i]]


# ``emission_index`` for only some pairs, out of line: kept apart, its code leaves the all-pairs
# kernels as they were (inlined at every call, it made the all-pairs perceptron epochs 10 % slower).
@njit(cache=True, no_cpython_wrapper=True)
def _listed_index(offsets, labels, full_before, n_labels, f, c):
    """``emission_index`` for a model of only some pairs (the arrays of its layout)."""
    row_lo, row_hi = offsets[f], offsets[f + 1]
    if row_hi - row_lo == n_labels:
        return row_lo + c
    start = row_lo - n_labels * np.int64(full_before[f])
    lo, hi = start, start + row_hi - row_lo
    # binary search for c in the ascending labels of f
    while lo < hi:
        mid = (lo + hi) // 2
        if labels[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    if lo < start + row_hi - row_lo and labels[lo] == c:
        return row_lo + (lo - start)
    return -1


@njit(cache=True)
def gold_pairs(feature_offsets, feature_ids, gold, n_features, n_labels, dense_count):
    """(emission_offsets int64 (F + 1,), emission_labels int32 (E,)): the (feature, label) pairs
    seen in training, every feature f of a token with its gold label; labels ascending per feature.
    A feature that occurs at least ``dense_count`` times (0: none) has every label: the frequent
    features, which a mistake is most likely to involve, keep the weights that penalize a label
    they were never seen with, at little cost in memory.

    A bit set over the F L possible pairs marks the seen ones (F L / 8 bytes)."""
    n_words = (n_features * n_labels + 63) // 64
    seen = np.zeros(n_words, dtype=np.uint64)
    occurrences = np.zeros(n_features if dense_count > 0 else 0, dtype=np.int64)
    n_tokens = feature_offsets.shape[0] - 1
    for i in range(n_tokens):
        if dense_count > 0:
            for k in range(feature_offsets[i], feature_offsets[i + 1]):
                occurrences[feature_ids[k]] += 1
        c = gold[i]
        if c < 0:
            continue
        for k in range(feature_offsets[i], feature_offsets[i + 1]):
            bit = np.int64(feature_ids[k]) * n_labels + c
            seen[bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)
    if dense_count > 0:
        for f in range(n_features):
            if occurrences[f] >= dense_count:
                for c in range(n_labels):
                    bit = f * n_labels + c
                    seen[bit >> 6] |= np.uint64(1) << np.uint64(bit & 63)
    offsets = np.zeros(n_features + 1, dtype=np.int64)
    for f in range(n_features):
        count = 0
        for c in range(n_labels):
            bit = f * n_labels + c
            if (seen[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(1):
                count += 1
        offsets[f + 1] = offsets[f] + count
    labels = np.empty(offsets[n_features], dtype=np.int32)
    k = 0
    for f in range(n_features):
        for c in range(n_labels):
            bit = f * n_labels + c
            if (seen[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(1):
                labels[k] = c
                k += 1
    return offsets, labels
