"""The score of a path with one label changed, for every token and label at once, and the weights of
a path's emission features: what ``structperc.model.explain`` lists for each token.

Tokens [a, b) of ``data``, n = b - a, a labeling y (int64 (n,)), L labels, the start state L. The
terms of w · Φ(x, y) that read y_t are::

    local[t, x] = emission[t, x] + T_t(y_{t-1}, x) [+ T2(y_{t-2}, y_{t-1}, x)]
                  + T_{t+1}(x, y_{t+1}) [+ T2(y_{t-1}, x, y_{t+1})]     when t + 1 < n
                  [+ T2(x, y_{t+1}, y_{t+2})]                            when t + 2 < n
                  + end[x]                                               when t = n - 1

with T_t(p, c) the transition weight plus the weights of the pair features of token t with p -> c
plus the constraint's mask, T2 the second-order block (order 2 only) and y_{-1} = y_{-2} = L. So
score(y with y_t = x) = score(y) - local[t, y_t] + local[t, x]. A label outside the token's
candidates, or one whose transitions the constraint forbids, is -inf.
"""
import numpy as np
from numba import njit

from .emission import emission_index
from .scoring import emission_scores


@njit(cache=True, no_cpython_wrapper=True)
def _transition(w, layout, data, token, p, c):
    """T(p, c) into ``token``: the weight, the pair features' weights, the constraint's mask."""
    n_labels = layout.n_labels
    total = w[layout.off_trans + p * n_labels + c] + layout.mask_penalty[p, c]
    if data.pair_offsets.shape[0] > 0:
        for k in range(data.pair_offsets[token], data.pair_offsets[token + 1]):
            total += w[layout.off_pair + (data.pair_ids[k] * (n_labels + 1) + p) * n_labels + c]
    return total


@njit(cache=True, no_cpython_wrapper=True)
def _second(w, layout, q, p, c):
    n_labels = layout.n_labels
    return w[layout.off_trans2 + (q * (n_labels + 1) + p) * n_labels + c]


@njit(cache=True)
def one_label_changes(w, layout, data, a, b, y):
    """local (n, L) of the module's docstring, and the emission scores (n, L) of tokens [a, b)."""
    n, n_labels = b - a, layout.n_labels
    second = layout.order == 2
    emission = emission_scores(w, layout, data, a, b)
    local = np.empty((n, n_labels))
    for t in range(n):
        p = y[t - 1] if t > 0 else n_labels
        q = y[t - 2] if t > 1 else n_labels
        for x in range(n_labels):
            total = emission[t, x] + _transition(w, layout, data, a + t, p, x)
            if second:
                total += _second(w, layout, q, p, x)
            if t + 1 < n:
                total += _transition(w, layout, data, a + t + 1, x, y[t + 1])
                if second:
                    total += _second(w, layout, p, x, y[t + 1])
            if second and t + 2 < n:
                total += _second(w, layout, x, y[t + 1], y[t + 2])
            if t == n - 1:
                total += w[layout.off_end + x]
            local[t, x] = total
    return local, emission


@njit(cache=True)
def feature_weights(w, layout, data, a, b, labels):
    """float64 (k,): the weight of each emission feature occurrence of tokens [a, b) with the
    label labels[t] of its token t (0 where the model has no such pair, or labels[t] < 0);
    k = feature_offsets[b] - feature_offsets[a]."""
    offsets, ids = data.feature_offsets, data.feature_ids
    out = np.zeros(offsets[b] - offsets[a])
    for t in range(b - a):
        c = labels[t]
        if c < 0:
            continue
        for j in range(offsets[a + t], offsets[a + t + 1]):
            index = emission_index(layout, ids[j], c)
            if index >= 0:
                out[j - offsets[a]] = w[index]
    return out
