"""The candidates' rows of RankingData from the rows of what they contain.

A candidate's features come from parts (its base score, its chunks, the words it leaves outside, its
label trigrams ...), each a list of (owner, row) pairs into one CSR table of feature entries::

    owners, rows   int64 (P,)        pair p gives candidate owners[p] the entries of row rows[p]
    offsets        int64 (R + 1,)    row r is ids/values[offsets[r]: offsets[r + 1]]
    ids            int64 (n,)        feature ids, -1 for a feature the vocabulary lacks (left out)
    values         float64 (n,)

A candidate's row is its entries in the order of its pairs (the parts' order, then each part's),
sorted by id stably, the values of one id summed in that order.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def candidate_rows(n_candidates, owners, rows, offsets, ids):
    """(entries int64 (m,), starts int64 (k,), row_ids int64 (k,), row_offsets int64 (C + 1,)): the
    known entries of every candidate sorted stably by id (``entries``, into ids/values); ``starts``
    the first position in ``entries`` of every run of one (candidate, id), ``row_ids`` its id, and
    row_offsets the runs of each candidate. np.add.reduceat(values[entries], starts) sums the runs
    (as np.lexsort then np.add.reduceat would)."""
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
    total = entry_counts[n_candidates]
    entries = np.empty(total, dtype=np.int64)
    starts = np.empty(total, dtype=np.int64)
    row_ids = np.empty(total, dtype=np.int64)
    row_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    buffer_ids = np.empty(longest, dtype=np.int64)
    buffer_entries = np.empty(longest, dtype=np.int64)
    m = 0
    for c in range(n_candidates):
        length = 0
        for q in range(pair_counts[c], pair_counts[c + 1]):
            r = rows[pair_order[q]]
            for e in range(offsets[r], offsets[r + 1]):
                f = ids[e]
                if f < 0:
                    continue
                j = length - 1  # insertion sort by id: stable, and rows are short
                while j >= 0 and buffer_ids[j] > f:
                    buffer_ids[j + 1] = buffer_ids[j]
                    buffer_entries[j + 1] = buffer_entries[j]
                    j -= 1
                buffer_ids[j + 1] = f
                buffer_entries[j + 1] = e
                length += 1
        a = entry_counts[c]
        for j in range(length):
            entries[a + j] = buffer_entries[j]
            if j == 0 or buffer_ids[j] != buffer_ids[j - 1]:
                starts[m] = a + j
                row_ids[m] = buffer_ids[j]
                m += 1
        row_offsets[c + 1] = m
    return entries, starts[:m], row_ids[:m], row_offsets
