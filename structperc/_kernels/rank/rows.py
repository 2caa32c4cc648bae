"""The candidates' rows of RankingData from the rows of what they contain.

A candidate's features come from parts (its base score, its chunks, the words it leaves outside, its
label trigrams ...), each a list of (owner, row) pairs into one CSR table of feature entries::

    owners, rows   int64 (P,)        pair p gives candidate owners[p] the entries of row rows[p]
    offsets        int64 (R + 1,)    row r is ids/values[offsets[r]: offsets[r + 1]]
    ids            int64 (n,)        feature ids, -1 for a feature the vocabulary lacks (left out)
    values         float64 (n,)

A candidate's row is its entries in the order of its pairs (the parts' order, then each part's),
sorted by id stably, the values of one id summed in that order.

A linear model needs no rows to score the candidates: ``add_row_scores`` takes w · x of every part
row once and adds each to the candidates that own it (``add_entry_scores`` for a part of one row per
candidate). The sums are the rows' in another order, equal up to rounding.
"""
from collections import namedtuple

import numpy as np
from numba import njit

# Below this many entries the rows are made in the calling thread: handing out ranges costs more
PARALLEL_FROM_ENTRIES = 20000

# fill_rows' records: the pairs grouped by candidate (``row_layout``'s, with the number of feature ids),
# the parts' CSR rows, and the outputs (each candidate's row from entry_counts[c] on, and its length)
RowLayout = namedtuple("RowLayout", "n_features longest pair_order pair_counts entry_counts")
PartRows = namedtuple("PartRows", "rows offsets ids values")
FilledRows = namedtuple("FilledRows", "row_ids row_values row_lengths")


@njit(cache=True)
def pairwise_sum(values, a, n):
    """The sum of values[a: a + n] as numpy's pairwise summation adds (what np.add.reduce and
    np.add.reduceat use for float64): sequentially from 0 below 8 values, in 8 running sums up to
    128, else the two halves (the first a multiple of 8) apart."""
    if n < 8:
        total = 0.0
        for i in range(a, a + n):
            total += values[i]
        return total
    if n <= 128:
        r0, r1, r2, r3 = values[a], values[a + 1], values[a + 2], values[a + 3]
        r4, r5, r6, r7 = values[a + 4], values[a + 5], values[a + 6], values[a + 7]
        i = 8
        while i < n - n % 8:
            r0 += values[a + i]
            r1 += values[a + i + 1]
            r2 += values[a + i + 2]
            r3 += values[a + i + 3]
            r4 += values[a + i + 4]
            r5 += values[a + i + 5]
            r6 += values[a + i + 6]
            r7 += values[a + i + 7]
            i += 8
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            total += values[a + i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values, a, half) + pairwise_sum(values, a + half, n - half)


@njit(cache=True)
def row_layout(n_candidates, owners, rows, offsets, ids):
    """(pair_order, pair_counts, entry_counts, longest): the pairs grouped by candidate (pair_order,
    stably; candidate c's are pair_order[pair_counts[c]: pair_counts[c + 1]]), the cumulative count of
    each candidate's known entries (ids >= 0) and the most any candidate has."""
    n_rows = offsets.shape[0] - 1
    known = np.zeros(n_rows, dtype=np.int64)
    for r in range(n_rows):
        for e in range(offsets[r], offsets[r + 1]):
            if ids[e] >= 0:
                known[r] += 1
    pair_counts = np.zeros(n_candidates + 1, dtype=np.int64)
    entry_counts = np.zeros(n_candidates + 1, dtype=np.int64)
    for p in range(owners.shape[0]):
        pair_counts[owners[p] + 1] += 1
        entry_counts[owners[p] + 1] += known[rows[p]]
    longest = 0
    for c in range(n_candidates):
        longest = max(longest, entry_counts[c + 1])
        pair_counts[c + 1] += pair_counts[c]
        entry_counts[c + 1] += entry_counts[c]
    pair_order = np.empty(owners.shape[0], dtype=np.int64)
    fill = pair_counts[:-1].copy()
    for p in range(owners.shape[0]):
        pair_order[fill[owners[p]]] = p
        fill[owners[p]] += 1
    return pair_order, pair_counts, entry_counts, longest


@njit(cache=True, nogil=True)
def fill_rows(lo, hi, layout, parts, filled):
    """The rows of candidates [lo, hi): candidate c's distinct ids ascending, with their summed values,
    into row_ids / row_values from entry_counts[c] on, and their number into row_lengths[c].
    layout : ``RowLayout``; parts : ``PartRows``; filled : ``FilledRows``.

    Per candidate, a counting sort over the ids it has: count[f] entries of id f, the ids in order,
    then every entry placed after those of smaller ids and the earlier ones of its own."""
    n_features, longest, pair_order, pair_counts, entry_counts = layout
    rows, offsets, ids, values = parts
    row_ids, row_values, row_lengths = filled
    buffer_ids = np.empty(longest, dtype=np.int64)
    buffer_values = np.empty(longest, dtype=np.float64)
    placed = np.empty(longest, dtype=np.float64)
    present = np.empty(longest, dtype=np.int64)
    count = np.zeros(n_features, dtype=np.int64)
    position = np.zeros(n_features, dtype=np.int64)
    for c in range(lo, hi):
        n_present = 0
        length = 0
        for q in range(pair_counts[c], pair_counts[c + 1]):
            r = rows[pair_order[q]]
            for e in range(offsets[r], offsets[r + 1]):
                f = ids[e]
                if f >= 0:
                    if count[f] == 0:
                        present[n_present] = f
                        n_present += 1
                    count[f] += 1
                    buffer_ids[length] = f
                    buffer_values[length] = values[e]
                    length += 1
        for j in range(1, n_present):  # insertion sort of the distinct ids, few
            f = present[j]
            i = j - 1
            while i >= 0 and present[i] > f:
                present[i + 1] = present[i]
                i -= 1
            present[i + 1] = f
        at = 0
        for j in range(n_present):
            f = present[j]
            position[f] = at
            at += count[f]
        for j in range(length):
            f = buffer_ids[j]
            placed[position[f]] = buffer_values[j]
            position[f] += 1
        at = 0
        m = entry_counts[c]
        for j in range(n_present):
            f = present[j]
            n = count[f]
            row_ids[m] = f
            row_values[m] = placed[at] if n == 1 else placed[at] + pairwise_sum(placed, at + 1, n - 1)
            m += 1
            at += n
            count[f] = 0
        row_lengths[c] = n_present


@njit(cache=True)
def add_row_scores(scores, owners, rows, offsets, ids, values, w):
    """scores[owners[p]] += w · (row rows[p]) for every pair p of one part's CSR rows (ids below 0,
    or past w, weigh 0): each row's product is taken once."""
    n_rows = offsets.shape[0] - 1
    n_weights = w.shape[0]
    row_score = np.zeros(n_rows)
    for r in range(n_rows):
        total = 0.0
        for e in range(offsets[r], offsets[r + 1]):
            f = ids[e]
            if 0 <= f < n_weights:
                total += w[f] * values[e]
        row_score[r] = total
    for p in range(owners.shape[0]):
        scores[owners[p]] += row_score[rows[p]]


@njit(cache=True)
def add_entry_scores(scores, owners, ids, values, w):
    """scores[owners[e]] += w[ids[e]] * values[e] for every entry of a part of one row per candidate
    (ids below 0, or past w, weigh 0)."""
    n_weights = w.shape[0]
    for e in range(ids.shape[0]):
        f = ids[e]
        if 0 <= f < n_weights:
            scores[owners[e]] += w[f] * values[e]


def candidate_rows(n_candidates, n_features, owners, rows, offsets, ids, values, threads=None):
    """(row_ids int64 (k,), row_values float64 (k,), row_offsets int64 (C + 1,)): every candidate's
    known entries (ids >= 0, below n_features) by ascending id, the values of one id summed in the
    order of the pairs as np.add.reduceat sums a run (its first value plus the pairwise sum of the
    rest), so that the rows are those of np.lexsort then np.add.reduceat.

    ``fill_rows`` makes the rows of ranges of candidates on ``threads`` threads (``threads.over_items``;
    None: numba's count), each range into its own slots (a candidate's known entries, at most), and
    the slots are then closed up."""
    from structperc._kernels.threads import over_items

    pair_order, pair_counts, entry_counts, longest = row_layout(n_candidates, owners, rows, offsets, ids)
    total = int(entry_counts[n_candidates])
    row_ids = np.empty(total, dtype=np.int64)
    row_values = np.empty(total, dtype=np.float64)
    row_lengths = np.zeros(n_candidates, dtype=np.int64)

    layout = RowLayout(n_features, longest, pair_order, pair_counts, entry_counts)
    parts = PartRows(rows, offsets, ids, values)
    filled = FilledRows(row_ids, row_values, row_lengths)

    def call(lo, hi):
        fill_rows(lo, hi, layout, parts, filled)

    if total < PARALLEL_FROM_ENTRIES:
        call(0, n_candidates)
    else:
        over_items(call, n_candidates, threads=threads)
    row_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    np.cumsum(row_lengths, out=row_offsets[1:])
    if row_offsets[-1] == total:
        return row_ids, row_values, row_offsets
    starts = entry_counts[:-1]
    keep = np.repeat(starts - row_offsets[:-1], row_lengths) + np.arange(row_offsets[-1])
    return row_ids[keep], row_values[keep], row_offsets
