"""One epoch of the (averaged) ranking perceptron over groups of candidates (Collins 2002, reranking).

Candidates are rows of a CSR matrix; groups are runs of consecutive rows::

    group_offsets   int64 (G + 1,)   candidates of group g are rows [group_offsets[g], group_offsets[g + 1])
    row_offsets     int64 (C + 1,)   features of row j are feature_ids/values[row_offsets[j]: row_offsets[j + 1]]
    feature_ids     int64 (nnz,)     indices into w
    values          float64 (nnz,)
    targets         float64 (C,)     task score of each candidate (higher is better)
    best            int64 (G,)       row of the gold "best" candidate of each group

Prediction: ŷ = argmax_j w · x_j over the group, ties to the first row. A mistake is a prediction whose
target is below the best one's; then w += x_best - x_ŷ.
"""
import numpy as np
from numba import njit

# Lazy averaging, as in ``perceptron.py``. With w_s the weights after the s-th group of the run
# (s = 1..c, every visited group counts, updated or not), the averaged weights are
# avg = (1/c) sum_s w_s. An update delta made at group s is part of c - s + 1 of the w_s, so
#     c * avg = c * w_0 + sum_updates delta * (c - s + 1) = c * w - sum_updates delta * (s - 1)
# (w_0, the initial weights, is in every w_s). Keeping u = sum_updates (s - 1) * delta gives
# avg = w - u / c, at the cost of touching only the non-zeros of x_best and x_ŷ per update.
# ``counter`` is s - 1.


@njit(cache=True)
def row_dot(w, row_offsets, feature_ids, values, j):
    total = 0.0
    for k in range(row_offsets[j], row_offsets[j + 1]):
        total += w[feature_ids[k]] * values[k]
    return total


@njit(cache=True)
def add_row(target, scale, row_offsets, feature_ids, values, j):
    """target += scale * x_j."""
    for k in range(row_offsets[j], row_offsets[j + 1]):
        target[feature_ids[k]] += scale * values[k]


@njit(cache=True)
def group_argmax(values, group_offsets):
    """Row of the largest value of every group (ties to the first row); -1 for an empty group."""
    n_groups = group_offsets.shape[0] - 1
    chosen = np.full(n_groups, -1, dtype=np.int64)
    for g in range(n_groups):
        for j in range(group_offsets[g], group_offsets[g + 1]):
            if chosen[g] < 0 or values[j] > values[chosen[g]]:
                chosen[g] = j
    return chosen


@njit(cache=True)
def predict_groups(w, group_offsets, row_offsets, feature_ids, values):
    """Row of argmax_j w · x_j of every group (ties to the first row); -1 for an empty group."""
    n_groups = group_offsets.shape[0] - 1
    chosen = np.full(n_groups, -1, dtype=np.int64)
    for g in range(n_groups):
        top = -np.inf
        for j in range(group_offsets[g], group_offsets[g + 1]):
            s = row_dot(w, row_offsets, feature_ids, values, j)
            if s > top or chosen[g] < 0:
                top = s
                chosen[g] = j
    return chosen


@njit(cache=True)
def ranking_epoch(w, u, counter, groups, visit_order):
    """Visit the groups in ``visit_order`` (of a ``records.Groups``); on a mistake, w += x_best - x_ŷ
    (and u += counter * the same).

    w, u : float64 (n_weights,); u may have length 0 (no averaging). counter : float, groups seen so far
    in the run. Returns (counter, number of mistakes).
    """
    group_offsets, row_offsets = groups.group_offsets, groups.row_offsets
    feature_ids, values, targets, best = groups.feature_ids, groups.values, groups.targets, groups.best
    averaging = u.shape[0] > 0
    mistakes = 0
    for g in visit_order:
        a, b = group_offsets[g], group_offsets[g + 1]
        if b - a > 1:
            predicted = a
            top = row_dot(w, row_offsets, feature_ids, values, a)
            for j in range(a + 1, b):
                s = row_dot(w, row_offsets, feature_ids, values, j)
                if s > top:
                    top = s
                    predicted = j
            gold = best[g]
            if targets[predicted] < targets[gold]:
                mistakes += 1
                add_row(w, 1.0, row_offsets, feature_ids, values, gold)
                add_row(w, -1.0, row_offsets, feature_ids, values, predicted)
                if averaging:
                    add_row(u, counter, row_offsets, feature_ids, values, gold)
                    add_row(u, -counter, row_offsets, feature_ids, values, predicted)
        counter += 1.0
    return counter, mistakes
