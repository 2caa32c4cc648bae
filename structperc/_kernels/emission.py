"""Where the weight of (emission feature f, label c) lives, for both layouts of the emission block.

All pairs (``layout.emission_offsets`` empty): w[f * L + c]. Only the model's pairs: the labels of
feature f are ``emission_labels[emission_offsets[f]: emission_offsets[f + 1]]`` (ascending) and the
weight of (f, emission_labels[k]) is w[k]; a pair outside the list has no weight (it scores 0 and
takes no update). Every kernel that reads or writes emission weights goes through these helpers.
"""
import numpy as np
from numba import njit


@njit(cache=True, inline="always")  # a call would pass the Layout record each time
def emission_index(layout, f, c):
    """Index in w of the weight of (feature f, label c), or -1 when the model has no such pair."""
    offsets = layout.emission_offsets
    if offsets.shape[0] == 0:
        return f * layout.n_labels + c
    labels = layout.emission_labels
    lo, hi = offsets[f], offsets[f + 1]
    # binary search for c in the ascending labels of f
    while lo < hi:
        mid = (lo + hi) // 2
        if labels[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    if lo < offsets[f + 1] and labels[lo] == c:
        return lo
    return -1


@njit(cache=True, inline="always")  # a call would pass the Layout record each time
def gather_row(w, layout, f, out):
    """out[c] += w[emission_index(f, c)] for every label c of feature f; out : float64 (L,)."""
    offsets = layout.emission_offsets
    if offsets.shape[0] == 0:
        base = f * layout.n_labels
        for c in range(layout.n_labels):
            out[c] += w[base + c]
    else:
        labels = layout.emission_labels
        for k in range(offsets[f], offsets[f + 1]):
            out[labels[k]] += w[k]


@njit(cache=True, inline="always")  # a call would pass the Layout record each time
def gather_row_scaled(w, layout, f, value, out):
    """out[c] += value * w[emission_index(f, c)] for every label c of feature f (a real-valued
    feature occurrence); out : float64 (L,)."""
    offsets = layout.emission_offsets
    if offsets.shape[0] == 0:
        base = f * layout.n_labels
        for c in range(layout.n_labels):
            out[c] += value * w[base + c]
    else:
        labels = layout.emission_labels
        for k in range(offsets[f], offsets[f + 1]):
            out[labels[k]] += value * w[k]


@njit(cache=True, inline="always")  # a call would pass the Layout record each time
def scatter_row(target, layout, f, scale, values):
    """target[emission_index(f, c)] += scale * values[c] for every label c of feature f;
    values : float64 (L,)."""
    offsets = layout.emission_offsets
    if offsets.shape[0] == 0:
        base = f * layout.n_labels
        for c in range(layout.n_labels):
            target[base + c] += scale * values[c]
    else:
        labels = layout.emission_labels
        for k in range(offsets[f], offsets[f + 1]):
            target[k] += scale * values[labels[k]]


@njit(cache=True)
def gold_pairs(feature_offsets, feature_ids, gold, n_features, n_labels):
    """(emission_offsets int64 (F + 1,), emission_labels int32 (E,)): the (feature, label) pairs
    seen in training, every feature f of a token with its gold label; labels ascending per feature.

    A bit set over the F L possible pairs marks the seen ones (F L / 8 bytes)."""
    n_words = (n_features * n_labels + 63) // 64
    seen = np.zeros(n_words, dtype=np.uint64)
    n_tokens = gold.shape[0]
    for i in range(n_tokens):
        c = gold[i]
        if c < 0:
            continue
        for k in range(feature_offsets[i], feature_offsets[i + 1]):
            bit = np.int64(feature_ids[k]) * n_labels + c
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
