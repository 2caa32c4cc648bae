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
def candidate_rows(n_candidates, n_features, owners, rows, offsets, ids, values):
    """(sorted_values float64 (m,), starts int64 (k,), row_ids int64 (k,), row_offsets int64 (C + 1,)):
    the known entries' values of every candidate sorted stably by id (ids < n_features); ``starts``
    the first position of every run of one (candidate, id), ``row_ids`` its id, and row_offsets the
    runs of each candidate. np.add.reduceat(sorted_values, starts) sums the runs (as np.lexsort then
    np.add.reduceat would).

    Per candidate, a counting sort over the ids it has: count[f] entries of id f, the ids in order,
    then every entry placed after those of smaller ids and the earlier ones of its own."""
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
    for c in range(n_candidates):
        pair_counts[c + 1] += pair_counts[c]
        entry_counts[c + 1] += entry_counts[c]
    pair_order = np.empty(owners.shape[0], dtype=np.int64)
    fill = pair_counts[:-1].copy()
    for p in range(owners.shape[0]):
        pair_order[fill[owners[p]]] = p
        fill[owners[p]] += 1
    total = entry_counts[n_candidates]
    sorted_values = np.empty(total, dtype=np.float64)
    starts = np.empty(total, dtype=np.int64)
    row_ids = np.empty(total, dtype=np.int64)
    row_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    longest = 0
    for c in range(n_candidates):
        longest = max(longest, entry_counts[c + 1] - entry_counts[c])
    buffer_ids = np.empty(longest, dtype=np.int64)
    buffer_values = np.empty(longest, dtype=np.float64)
    count = np.zeros(n_features, dtype=np.int64)
    position = np.zeros(n_features, dtype=np.int64)
    present = np.empty(n_features, dtype=np.int64)
    m = 0
    for c in range(n_candidates):
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
        at = entry_counts[c]
        for j in range(n_present):
            f = present[j]
            position[f] = at
            starts[m] = at
            row_ids[m] = f
            m += 1
            at += count[f]
            count[f] = 0
        for j in range(length):
            f = buffer_ids[j]
            sorted_values[position[f]] = buffer_values[j]
            position[f] += 1
        row_offsets[c + 1] = m
    return sorted_values, starts[:m], row_ids[:m], row_offsets
