"""The ranking perceptron in dual form: voted and averaged prediction, linear and polynomial kernels
(Freund & Schapire 1999; Collins & Duffy 2002).

Candidates are CSR rows as in ``ranking.py``. The m-th mistake of training stores the rows of the
gold candidate g_m and of the prediction p_m (indices into the training rows). With initial weights
w0 (applied linearly) the weight vector after m mistakes, in feature space φ, is

    v_m = w0 + sum_{l < m} (φ(x_{g_l}) - φ(x_{p_l})),   so   v_m · φ(x) = w0 · x + sum_{l < m} Δ_l(x),
    Δ_l(x) = K(x_{g_l}, x) - K(x_{p_l}, x),   K(x, z) = x · z (degree 1) or (1 + x · z)^D.

survival[m] counts the groups visited while v_m was the current vector (the group that created it
included), as in Freund & Schapire's c_m. Prediction on a group of candidates:

    voted:     each v_m votes survival[m] for its argmax candidate; the most votes win.
    averaged:  argmax_x sum_m survival[m] v_m · φ(x) = (sum_m c_m) w0 · x + sum_l A_l Δ_l(x),
               A_l = sum_{m > l} survival[m].

Both come from one pass over the mistakes per group: the running sum of Δ_l(x_j) over l gives
v_m · φ(x_j) for every m in turn. Cost: 2 kernel values per (mistake, candidate), so O(M × C) kernel
values for M mistakes and C candidates. The dot products behind them come from a feature index of
the support rows (each candidate walks the postings of its own features: O(Σ_f postings(f))
instead of 2M merges of two rows); training pays the same per visited group with the mistakes made
so far. ``sparse_dot`` (the merge) is the reference the tests check the index against.

With the linear kernel, ``linear_vote`` gives the same votes from the M difference rows
x_{g_l} - x_{p_l} and, per group, only the features in which its candidates differ
(``vote_by_differences``).
"""
from collections import namedtuple

import numpy as np
from numba import njit

# Rows of sparse vectors (CSR): row j is feature_ids / values[row_offsets[j]: row_offsets[j + 1]], ids ascending.
Rows = namedtuple("Rows", "row_offsets feature_ids values")
# The mistakes of training: mistakes int64 (capacity, 2) rows (gold, predicted) of mistake m, and
# survival float64 (capacity + 1,) the survival count of v_m.
Support = namedtuple("Support", "mistakes survival")


@njit(cache=True)
def sparse_dot(ids_a, values_a, a0, a1, ids_b, values_b, b0, b1):
    """x_a · x_b of two rows whose ids ascend (a sorted-index merge)."""
    total = 0.0
    i, j = a0, b0
    while i < a1 and j < b1:
        fa, fb = ids_a[i], ids_b[j]
        if fa == fb:
            total += values_a[i] * values_b[j]
            i += 1
            j += 1
        elif fa < fb:
            i += 1
        else:
            j += 1
    return total


@njit(cache=True)
def kernel_value(dot, degree):
    """x · z for degree 1, else (1 + x · z)^degree."""
    if degree == 1:
        return dot
    return (1.0 + dot) ** degree


# Support rows are also indexed by feature, so that the dot products of one candidate with every
# support row cost the postings of its features instead of a merge per support row: linked lists
# head[f] -> entry e -> next_entry[e] ... (-1 ends), entry e holding (support row owner[e], value[e]);
# n_entries int64 (1,) counts the entries in use.
Postings = namedtuple("Postings", "head next_entry owner entry_values n_entries")


@njit(cache=True)
def add_postings(postings, support_row, rows, j):
    """Index row j of ``rows`` (``Rows``) as support row ``support_row`` in ``postings`` (``Postings``)."""
    head, next_entry, owner, entry_values, count = postings
    row_offsets, ids, values = rows
    n_entries = count[0]
    for k in range(row_offsets[j], row_offsets[j + 1]):
        f = ids[k]
        if f < head.shape[0]:
            owner[n_entries] = support_row
            entry_values[n_entries] = values[k]
            next_entry[n_entries] = head[f]
            head[f] = n_entries
            n_entries += 1
    count[0] = n_entries


@njit(cache=True)
def support_dots(postings, rows, j, dots):
    """dots[s] += x_s · x_j for every support row s of ``postings`` and row j of ``rows`` (dots zeroed
    by the caller)."""
    head, next_entry, owner, entry_values = postings.head, postings.next_entry, postings.owner, postings.entry_values
    row_offsets, ids, values = rows
    for k in range(row_offsets[j], row_offsets[j + 1]):
        f = ids[k]
        if f < head.shape[0]:
            e = head[f]
            v = values[k]
            while e >= 0:
                dots[owner[e]] += v * entry_values[e]
                e = next_entry[e]


@njit(cache=True)
def _linear(w0, row_offsets, ids, values, j):
    total = 0.0
    for k in range(row_offsets[j], row_offsets[j + 1]):
        f = ids[k]
        if f < w0.shape[0]:
            total += w0[f] * values[k]
    return total


@njit(cache=True)
def dual_epoch(w0, w, support, n_mistakes, postings, groups, degree, visit_order):
    """One epoch of the dual ranking perceptron over a ``records.Groups`` (the training rows).

    With the linear kernel (degree 1) the current vector is also kept in primal form, w (n_weights,)
    = v_m, so that a training score costs one sparse dot product instead of a pass over the
    mistakes; the stored mistakes and survival counts are the same. Other degrees ignore w and
    score through ``postings`` (``Postings``), the feature index of the support rows (row 2m =
    gold, 2m + 1 = predicted of mistake m).

    support : ``Support``, the mistakes filled up to n_mistakes. Returns (n_mistakes, mistakes this
    epoch, kernel evaluations), or (-1, 0, 0) when the capacity is exhausted (the caller grows the
    arrays and reruns the epoch from saved copies).
    """
    group_offsets, row_offsets = groups.group_offsets, groups.row_offsets
    ids, values, targets, best = groups.feature_ids, groups.values, groups.targets, groups.best
    mistakes, survival = support
    rows = Rows(row_offsets, ids, values)
    capacity = mistakes.shape[0]
    made = 0
    evaluations = 0
    scores = np.zeros(0)
    dots = np.zeros(2 * capacity)
    for g in visit_order:
        a, b = group_offsets[g], group_offsets[g + 1]
        if b - a > 1:
            if scores.shape[0] < b - a:
                scores = np.zeros(b - a)
            for j in range(a, b):
                if degree == 1:
                    scores[j - a] = _linear(w, row_offsets, ids, values, j)
                    continue
                dots[: 2 * n_mistakes] = 0.0
                support_dots(postings, rows, j, dots)
                s = _linear(w0, row_offsets, ids, values, j)
                for m in range(n_mistakes):
                    s += kernel_value(dots[2 * m], degree) - kernel_value(dots[2 * m + 1], degree)
                scores[j - a] = s
            if degree != 1:
                evaluations += 2 * n_mistakes * (b - a)
            predicted = a
            for j in range(a + 1, b):
                if scores[j - a] > scores[predicted - a]:
                    predicted = j
            gold = best[g]
            if targets[predicted] < targets[gold]:
                if n_mistakes == capacity:
                    return -1, 0, 0
                mistakes[n_mistakes, 0] = gold
                mistakes[n_mistakes, 1] = predicted
                if degree == 1:
                    for k in range(row_offsets[gold], row_offsets[gold + 1]):
                        w[ids[k]] += values[k]
                    for k in range(row_offsets[predicted], row_offsets[predicted + 1]):
                        w[ids[k]] -= values[k]
                else:
                    add_postings(postings, 2 * n_mistakes, rows, gold)
                    add_postings(postings, 2 * n_mistakes + 1, rows, predicted)
                n_mistakes += 1
                made += 1
        survival[n_mistakes] += 1.0
    return n_mistakes, made, evaluations


@njit(cache=True)
def dual_predict(w0, support_rows, survival, group_offsets, rows, degree):
    """Voted choice and averaged scores of every group of candidate ``rows`` (``Rows``), in one pass
    over the mistakes per group.

    The support rows are 2M ``Rows``: row 2m is g_m, row 2m + 1 is p_m. survival : float64 (M + 1,).
    Returns (voted int64 (G,) chosen row, -1 for an empty group; averaged float64 (C,) scores
    sum_m survival[m] v_m · φ(x_j)).
    """
    row_offsets, ids, values = rows
    sv_ids = support_rows.feature_ids
    n_groups = group_offsets.shape[0] - 1
    n_mistakes = survival.shape[0] - 1
    total = 0.0
    for m in range(n_mistakes + 1):
        total += survival[m]
    # after[l] = A_l = sum_{m > l} survival[m]
    after = np.zeros(n_mistakes)
    running = 0.0
    for k in range(n_mistakes - 1, -1, -1):
        running += survival[k + 1]
        after[k] = running
    voted = np.full(n_groups, -1, dtype=np.int64)
    averaged = np.zeros(row_offsets.shape[0] - 1)
    current = np.zeros(0)
    votes = np.zeros(0)
    n_support = 2 * n_mistakes
    n_index = 0
    for k in range(sv_ids.shape[0]):
        n_index = max(n_index, sv_ids[k] + 1)
    postings = Postings(np.full(n_index, -1, dtype=np.int64), np.empty(sv_ids.shape[0], dtype=np.int64),
                        np.empty(sv_ids.shape[0], dtype=np.int64), np.empty(sv_ids.shape[0]),
                        np.zeros(1, dtype=np.int64))
    for s in range(n_support):
        add_postings(postings, s, support_rows, s)
    dots = np.zeros((0, n_support))
    for g in range(n_groups):
        a, b = group_offsets[g], group_offsets[g + 1]
        if b == a:
            continue
        if current.shape[0] < b - a:
            current = np.zeros(b - a)
            votes = np.zeros(b - a)
            dots = np.zeros((b - a, n_support))
        for j in range(a, b):
            dots[j - a, :] = 0.0
            support_dots(postings, rows, j, dots[j - a])
            current[j - a] = _linear(w0, row_offsets, ids, values, j)
            averaged[j] = total * current[j - a]
            votes[j - a] = 0.0
        for m in range(n_mistakes + 1):
            if m > 0:
                for j in range(a, b):
                    d = (kernel_value(dots[j - a, 2 * (m - 1)], degree)
                         - kernel_value(dots[j - a, 2 * (m - 1) + 1], degree))
                    current[j - a] += d
                    averaged[j] += after[m - 1] * d
            if survival[m] > 0:
                top = 0
                for j in range(1, b - a):
                    if current[j] > current[top]:
                        top = j
                votes[top] += survival[m]
        top = 0
        for j in range(1, b - a):
            if votes[j] > votes[top]:
                top = j
        voted[g] = a + top
    return voted, averaged


# The mistakes' differences δ_l = x_{g_l} - x_{p_l} by feature: the entries of feature f are
# [feature_offsets[f], feature_offsets[f + 1]), each a mistake l (ascending) and δ_l's value at f.
Differences = namedtuple("Differences", "feature_offsets mistakes values")


def linear_vote(w0, support_rows, survival, group_offsets, rows):
    """``dual_predict`` for the linear kernel (degree 1), from the differences δ_l instead of the dot
    products with 2M support rows (same returns).

    The gold and predicted rows of a mistake share most features, which cancel in δ_l; the averaged
    scores are x_j · u with u = (Σ_m survival[m]) w0 + Σ_l A_l δ_l. The δ_l and u are made here by
    numpy over the support entries; ``vote_by_differences`` votes group by group.
    """
    offsets, ids, values = support_rows
    n_index = max(w0.shape[0], int(ids.max()) + 1 if len(ids) else 0,
                  int(rows.feature_ids.max()) + 1 if len(rows.feature_ids) else 0)
    row = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    keys, inverse = np.unique((row // 2) * n_index + ids, return_inverse=True)
    # (bincount of no entries gives int64 counts: float64 always)
    sums = np.bincount(inverse, weights=np.where(row % 2 == 0, values, -values), minlength=len(keys)).astype(float)
    kept = sums != 0.0
    mistakes, features, sums = keys[kept] // n_index, keys[kept] % n_index, sums[kept]
    by_feature = np.argsort(features, kind="stable")  # keys ascend by mistake within a feature
    feature_offsets = np.zeros(n_index + 1, dtype=np.int64)
    np.cumsum(np.bincount(features, minlength=n_index), out=feature_offsets[1:])
    differences = Differences(feature_offsets, mistakes[by_feature], sums[by_feature])
    after = np.cumsum(survival[:0:-1])[::-1]  # A_l = Σ_{m > l} survival[m]
    u = np.bincount(features, weights=after[mistakes] * sums, minlength=n_index).astype(float)
    u[: w0.shape[0]] += survival.sum() * w0
    return vote_by_differences(w0, u, differences, survival, group_offsets, rows)


@njit(cache=True)
def vote_by_differences(w0, u, differences, survival, group_offsets, rows):
    """Voted choice and averaged scores (x_j · u) of every group of candidate ``rows``, the mistakes'
    ``Differences`` walked for the features in which the group's candidates differ only: a feature that
    every candidate has with the same value adds the same to each candidate's v_m · x and never changes
    a vote. Same returns as ``dual_predict``."""
    row_offsets, ids, values = rows
    feature_offsets, posting_mistake, posting_values = differences
    n_groups = group_offsets.shape[0] - 1
    n_mistakes = survival.shape[0] - 1
    n_index = u.shape[0]
    voted = np.full(n_groups, -1, dtype=np.int64)
    averaged = np.zeros(row_offsets.shape[0] - 1)
    seen = np.zeros(n_index, dtype=np.int64)
    first_value = np.zeros(n_index)
    differs = np.zeros(n_index, dtype=np.bool_)
    changes = np.zeros((0, 0))
    current = np.zeros(0)
    votes = np.zeros(0)
    for g in range(n_groups):
        a, b = group_offsets[g], group_offsets[g + 1]
        n = b - a
        if n == 0:
            continue
        if current.shape[0] < n:
            current = np.zeros(n)
            votes = np.zeros(n)
            changes = np.zeros((n_mistakes, n))
        for j in range(a, b):
            total_j = 0.0
            score_j = 0.0
            for k in range(row_offsets[j], row_offsets[j + 1]):
                f = ids[k]
                if seen[f] == 0:
                    first_value[f] = values[k]
                elif values[k] != first_value[f]:
                    differs[f] = True
                seen[f] += 1
                total_j += u[f] * values[k]
                if f < w0.shape[0]:
                    score_j += w0[f] * values[k]
            averaged[j] = total_j
            current[j - a] = score_j
            votes[j - a] = 0.0
        changes[:, :n] = 0.0
        for j in range(a, b):
            for k in range(row_offsets[j], row_offsets[j + 1]):
                f = ids[k]
                if seen[f] == n and not differs[f]:
                    continue
                v = values[k]
                for e in range(feature_offsets[f], feature_offsets[f + 1]):
                    changes[posting_mistake[e], j - a] += v * posting_values[e]
        for j in range(a, b):
            for k in range(row_offsets[j], row_offsets[j + 1]):
                seen[ids[k]] = 0
                differs[ids[k]] = False
        for m in range(n_mistakes + 1):
            if m > 0:
                for j in range(n):
                    current[j] += changes[m - 1, j]
            if survival[m] > 0:
                top = 0
                for j in range(1, n):
                    if current[j] > current[top]:
                        top = j
                votes[top] += survival[m]
        top = 0
        for j in range(1, n):
            if votes[j] > votes[top]:
                top = j
        voted[g] = a + top
    return voted, averaged
