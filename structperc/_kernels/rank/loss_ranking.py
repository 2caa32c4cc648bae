"""One epoch of a ranking learner that uses the loss: MIRA (Crammer & Singer 2003; McDonald et al. 2005)
or the loss-scaled ranking perceptron (Collins & Koo 2005), over the groups of ``records.Groups``
(see ``ranking.py`` for the CSR layout).

With loss_j = targets[best] - targets[j] >= 0 and margin m >= 0, a group predicts the loss-augmented
    ŷ = argmax_j  w · x_j + m * loss_j          (ties to the first row)
and, when loss_ŷ > 0 and the violation v = m * loss_ŷ - w · (x_best - x_ŷ) is positive (or, for the
perceptron, w · x_ŷ >= w · x_best), updates
    w += τ (x_best - x_ŷ),   MIRA: τ = min(C, v / ||x_best - x_ŷ||²);  scaled perceptron: τ = loss_ŷ.
Averaging is lazy as in ``ranking.py``: u += counter * τ (x_best - x_ŷ), avg = w - u / counter.
"""
import numpy as np
from numba import njit

from structperc._kernels.rank.ranking import add_row, row_dot


@njit(cache=True)
def squared_distance(row_offsets, feature_ids, values, a, b):
    """||x_a - x_b||² of two rows whose feature ids ascend."""
    i, i_end = row_offsets[a], row_offsets[a + 1]
    k, k_end = row_offsets[b], row_offsets[b + 1]
    total = 0.0
    while i < i_end or k < k_end:
        if k >= k_end or (i < i_end and feature_ids[i] < feature_ids[k]):
            total += values[i] * values[i]
            i += 1
        elif i >= i_end or feature_ids[k] < feature_ids[i]:
            total += values[k] * values[k]
            k += 1
        else:
            d = values[i] - values[k]
            total += d * d
            i += 1
            k += 1
    return total


@njit(cache=True)
def loss_epoch(w, u, counter, groups, visit_order, margin, aggressiveness, mira):
    """Visit the groups in ``visit_order``; update as the module docstring states.

    w, u : float64 (n_weights,); u may have length 0 (no averaging). counter : groups seen so far.
    margin : m; aggressiveness : C of MIRA; mira : True for MIRA, False for the scaled perceptron.
    Returns (counter, number of updates).
    """
    group_offsets, row_offsets = groups.group_offsets, groups.row_offsets
    feature_ids, values, targets, best = groups.feature_ids, groups.values, groups.targets, groups.best
    averaging = u.shape[0] > 0
    updates = 0
    for g in visit_order:
        a, b = group_offsets[g], group_offsets[g + 1]
        if b - a > 1:
            gold = best[g]
            gold_score = row_dot(w, row_offsets, feature_ids, values, gold)
            predicted = a
            top = -np.inf
            predicted_score = 0.0
            for j in range(a, b):
                s = row_dot(w, row_offsets, feature_ids, values, j)
                augmented = s + margin * (targets[gold] - targets[j])
                if augmented > top:
                    top = augmented
                    predicted = j
                    predicted_score = s
            loss = targets[gold] - targets[predicted]
            if loss > 0:
                violation = margin * loss - (gold_score - predicted_score)
                step = 0.0
                if mira:
                    if violation > 0:
                        norm = squared_distance(row_offsets, feature_ids, values, gold, predicted)
                        if norm > 0:
                            step = min(aggressiveness, violation / norm)
                elif predicted_score >= gold_score or violation > 0:
                    step = loss
                if step > 0:
                    updates += 1
                    add_row(w, step, row_offsets, feature_ids, values, gold)
                    add_row(w, -step, row_offsets, feature_ids, values, predicted)
                    if averaging:
                        add_row(u, counter * step, row_offsets, feature_ids, values, gold)
                        add_row(u, -counter * step, row_offsets, feature_ids, values, predicted)
        counter += 1.0
    return counter, updates
