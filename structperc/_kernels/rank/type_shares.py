"""The types that entity keys take in a document, and the share features of a candidate's chunks and
outside words (``rerank.context`` describes the features; ``rerank.interned`` calls these kernels).

Keys are integers (an entity string's node, its lower-cased string's node, a word); types are
integers (``types``: the chunk types, "O", the gazetteers' types). A *table* counts, per code (a
document's or a sentence's key), the weight of every type in the order the types first came::

    table = (slots Dict[code] -> slot, head, tail int64 (cap,), kind int64 (cap,), weight float64 (cap,),
             next int64 (cap,), used int64 (2,))

slot s's types are the linked entries head[s], next[head[s]], ... (``used``: slots and entries taken).
Counts are kept twice per source (the base's 1-best, ``one``; all candidates, ``many``): per
(document, key), ``total``, and per (sentence, key), ``own``; what a key gets *elsewhere* in its
document is total - own, types at or below 1e-9 left out. A share is count / (sum of the counts, in
their order), as ``rerank.context.shares`` computes it.

Feature tables (ids into the vocabulary, -1 for a feature it lacks)::

    pair_ids   int64 (P, T, T)   "<prefix>:<type>=<other type>"  prefixes d1s d1l d1h dns dnl dnh gs gl
    agree_ids  int64 (P,)        "<prefix>:agree"
    none_ids   int64 (P, T)      "<prefix>:<type>:none"
    outside_ids int64 (2, T)     "d1o:<type>", "dno:<type>"
"""
import numpy as np
from numba import njit, types
from numba.typed import Dict

D1S, D1L, D1H, DNS, DNL, DNH, GS, GL = range(8)


@njit(cache=True)
def new_table(capacity):
    slots = Dict.empty(key_type=types.int64, value_type=types.int64)
    return (slots, np.full(capacity, -1, dtype=np.int64), np.full(capacity, -1, dtype=np.int64),
            np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.float64),
            np.full(capacity, -1, dtype=np.int64), np.zeros(2, dtype=np.int64))


@njit(cache=True)
def table_add(table, code, kind, weight):
    slots, head, tail, kinds, weights, following, used = table
    if code in slots:
        slot = slots[code]
    else:
        slot = used[0]
        used[0] += 1
        slots[code] = slot
    e = head[slot]
    while e >= 0:
        if kinds[e] == kind:
            weights[e] += weight
            return
        e = following[e]
    e = used[1]
    used[1] += 1
    kinds[e] = kind
    weights[e] = weight
    if head[slot] < 0:
        head[slot] = e
    else:
        following[tail[slot]] = e
    tail[slot] = e


@njit(cache=True)
def document_counts(n_keys, n_documents, documents, chunk_sentence, chunk_type, chunk_string, chunk_lower,
                    chunk_start, chunk_end, chunk_share, chunk_in_one, word_key, outside_token, outside_sentence,
                    outside_weight, outside_in_one, outside_type):
    """(one_total, one_own, many_total, many_own, one_documents, many_documents): the tables of the
    base's 1-best and of all candidates, and whether a document has any count in each.

    Every distinct chunk d (of sentence chunk_sentence[d], type chunk_type[d], tokens chunk_start[d]
    to chunk_end[d] - 1 of the corpus) adds chunk_share[d] (its share of its sentence's candidates) to
    many, and 1 to one when chunk_in_one[d], under the keys chunk_string[d], chunk_lower[d] and each
    word's key (word_key[t]); then every capitalised word left outside the chunks (outside_token,
    ascending) adds outside_weight to many and 1 to one (outside_in_one) under type outside_type.
    Codes: document * n_keys + key (total) and sentence * n_keys + key (own).
    """
    capacity = 1
    for d in range(chunk_sentence.shape[0]):
        capacity += 2 + chunk_end[d] - chunk_start[d]
    capacity += outside_token.shape[0]
    one_total, one_own = new_table(capacity), new_table(capacity)
    many_total, many_own = new_table(capacity), new_table(capacity)
    one_documents = np.zeros(n_documents, dtype=np.bool_)
    many_documents = np.zeros(n_documents, dtype=np.bool_)
    for d in range(chunk_sentence.shape[0]):
        i = chunk_sentence[d]
        document = documents[i]
        kind = chunk_type[d]
        for k in range(2 + chunk_end[d] - chunk_start[d]):
            key = chunk_string[d] if k == 0 else chunk_lower[d] if k == 1 else word_key[chunk_start[d] + k - 2]
            table_add(many_total, document * n_keys + key, kind, chunk_share[d])
            table_add(many_own, i * n_keys + key, kind, chunk_share[d])
            many_documents[document] = True
            if chunk_in_one[d]:
                table_add(one_total, document * n_keys + key, kind, 1.0)
                table_add(one_own, i * n_keys + key, kind, 1.0)
                one_documents[document] = True
    for r in range(outside_token.shape[0]):
        i = outside_sentence[r]
        document = documents[i]
        key = word_key[outside_token[r]]
        table_add(many_total, document * n_keys + key, outside_type, outside_weight[r])
        table_add(many_own, i * n_keys + key, outside_type, outside_weight[r])
        many_documents[document] = True
        if outside_in_one[r]:
            table_add(one_total, document * n_keys + key, outside_type, 1.0)
            table_add(one_own, i * n_keys + key, outside_type, 1.0)
            one_documents[document] = True
    return one_total, one_own, many_total, many_own, one_documents, many_documents


@njit(cache=True)
def elsewhere(total, own, total_code, own_code, out_kind, out_count):
    """The types and counts (into out_kind, out_count) that a key gets in its document outside its
    own sentence; returns how many."""
    if total_code not in total[0]:
        return 0
    slot = total[0][total_code]
    own_slot = own[0][own_code] if own_code in own[0] else -1
    n = 0
    e = total[1][slot]
    while e >= 0:
        kind, count = total[3][e], total[4][e]
        keep = True
        if own_slot >= 0:
            f = own[1][own_slot]
            while f >= 0:
                if own[3][f] == kind:
                    count = count - own[4][f]
                    break
                f = own[5][f]
            keep = count > 1e-9
        if keep:
            out_kind[n] = kind
            out_count[n] = count
            n += 1
        e = total[5][e]
    return n


@njit(cache=True)
def _emit_shares(prefix, kind, out_kind, out_count, n, with_none, pair_ids, agree_ids, none_ids, row_ids,
                 row_values, at):
    """Writes the share features of ``prefix`` (context._share_features) from ``at``; returns the end."""
    total = 0.0
    for j in range(n):
        total += out_count[j]
    if n == 0 or total <= 0:
        if with_none:
            row_ids[at] = none_ids[prefix, kind]
            row_values[at] = 1.0
            at += 1
        return at
    agree = 0.0
    for j in range(n):
        share = out_count[j] / total
        row_ids[at] = pair_ids[prefix, kind, out_kind[j]]
        row_values[at] = share
        at += 1
        if out_kind[j] == kind:
            agree = share
    row_ids[at] = agree_ids[prefix]
    row_values[at] = agree
    return at + 1


@njit(cache=True)
def _append(ids, values, size, row_ids, row_values, n):
    """(ids, values, size) with the known ids (>= 0) of the row appended, grown when full."""
    if size + n > ids.shape[0]:
        capacity = max(2 * ids.shape[0], size + n)
        grown_ids = np.empty(capacity, dtype=np.int64)
        grown_values = np.empty(capacity, dtype=np.float64)
        grown_ids[:size] = ids[:size]
        grown_values[:size] = values[:size]
        ids, values = grown_ids, grown_values
    for j in range(n):
        if row_ids[j] >= 0:
            ids[size] = row_ids[j]
            values[size] = row_values[j]
            size += 1
    return ids, values, size


@njit(cache=True)
def chunk_rows(n_keys, n_types, documents, counts, chunk_sentence, chunk_type, chunk_string, chunk_lower,
               chunk_head, with_document, gazetteer_string, gazetteer_lower, entry_offsets, entry_types,
               entry_counts, pair_ids, agree_ids, none_ids):
    """(offsets int64 (D + 1,), ids, values): the document and gazetteer features of every distinct
    chunk, in the order of ``context.ListContext._span_shares``: for d1 then dn (when the chunk's
    document has counts there) its string (with "none"), lower-cased string and last word (chunk_head,
    a key); then, when gazetteer_string[d] > -2, the gazetteer entries of its string (with "none") and
    lower-cased string (entry -1: not in the gazetteer; entry e's types and counts are
    entry_types/entry_counts[entry_offsets[e]: entry_offsets[e + 1]]). Unknown features are left out.
    counts: the tuple of ``document_counts``."""
    one_total, one_own, many_total, many_own, one_documents, many_documents = counts
    n_chunks = chunk_sentence.shape[0]
    offsets = np.zeros(n_chunks + 1, dtype=np.int64)
    ids = np.empty(8 * n_chunks + 16, dtype=np.int64)
    values = np.empty(8 * n_chunks + 16, dtype=np.float64)
    size = 0
    width = 8 * (n_types + 1) + 8
    row_ids = np.empty(width, dtype=np.int64)
    row_values = np.empty(width, dtype=np.float64)
    out_kind = np.empty(n_types + 1, dtype=np.int64)
    out_count = np.empty(n_types + 1, dtype=np.float64)
    for d in range(n_chunks):
        i = chunk_sentence[d]
        document = documents[i]
        kind = chunk_type[d]
        at = 0
        if with_document:
            for source in range(2):
                total, own = (one_total, one_own) if source == 0 else (many_total, many_own)
                if not (one_documents[document] if source == 0 else many_documents[document]):
                    continue
                for k in range(3):
                    key = chunk_string[d] if k == 0 else chunk_lower[d] if k == 1 else chunk_head[d]
                    n = elsewhere(total, own, document * n_keys + key, i * n_keys + key, out_kind, out_count)
                    at = _emit_shares(3 * source + k, kind, out_kind, out_count, n, k == 0, pair_ids, agree_ids,
                                      none_ids, row_ids, row_values, at)
        if gazetteer_string[d] > -2:
            for k in range(2):
                entry = gazetteer_string[d] if k == 0 else gazetteer_lower[d]
                n = 0
                if entry >= 0:
                    for p in range(entry_offsets[entry], entry_offsets[entry + 1]):
                        out_kind[n] = entry_types[p]
                        out_count[n] = entry_counts[p]
                        n += 1
                at = _emit_shares(GS + k, kind, out_kind, out_count, n, k == 0, pair_ids, agree_ids, none_ids,
                                  row_ids, row_values, at)
        ids, values, size = _append(ids, values, size, row_ids, row_values, at)
        offsets[d + 1] = size
    return offsets, ids[:size], values[:size]


@njit(cache=True)
def outside_rows(n_keys, n_types, documents, counts, token_sentence, token_key, outside_ids):
    """(offsets int64 (R + 1,), ids, values): the features of every capitalised word left outside the
    chunks (``context.ListContext.outside_features``): for d1o then dno, each type's share of what the
    word (key token_key[r]) gets elsewhere in its document."""
    one_total, one_own, many_total, many_own, one_documents, many_documents = counts
    n_rows = token_sentence.shape[0]
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    ids = np.empty(2 * n_rows + 16, dtype=np.int64)
    values = np.empty(2 * n_rows + 16, dtype=np.float64)
    size = 0
    row_ids = np.empty(2 * (n_types + 1), dtype=np.int64)
    row_values = np.empty(2 * (n_types + 1), dtype=np.float64)
    out_kind = np.empty(n_types + 1, dtype=np.int64)
    out_count = np.empty(n_types + 1, dtype=np.float64)
    for r in range(n_rows):
        i = token_sentence[r]
        document = documents[i]
        key = token_key[r]
        at = 0
        for source in range(2):
            total, own = (one_total, one_own) if source == 0 else (many_total, many_own)
            if not (one_documents[document] if source == 0 else many_documents[document]):
                continue
            n = elsewhere(total, own, document * n_keys + key, i * n_keys + key, out_kind, out_count)
            whole = 0.0
            for j in range(n):
                whole += out_count[j]
            for j in range(n):
                row_ids[at] = outside_ids[source, out_kind[j]]
                row_values[at] = out_count[j] / whole
                at += 1
        ids, values, size = _append(ids, values, size, row_ids, row_values, at)
        offsets[r + 1] = size
    return offsets, ids[:size], values[:size]


@njit(cache=True)
def rows_by_candidate(n_candidates, candidates, ids):
    """(order int64 (n,), starts int64 (m,), row_offsets int64 (C + 1,)): the entries (candidates[e],
    ids[e]) sorted by candidate then id, stably (``order``); ``starts`` the first entry of every run
    of one (candidate, id) in that order, and row_offsets the runs of each candidate. The values
    summed over each run (np.add.reduceat) make the candidates' rows."""
    n = candidates.shape[0]
    counts = np.zeros(n_candidates + 1, dtype=np.int64)
    for e in range(n):
        counts[candidates[e] + 1] += 1
    for c in range(n_candidates):
        counts[c + 1] += counts[c]
    order = np.empty(n, dtype=np.int64)
    fill = counts[:-1].copy()
    for e in range(n):
        order[fill[candidates[e]]] = e
        fill[candidates[e]] += 1
    starts = np.empty(n, dtype=np.int64)
    row_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    m = 0
    for c in range(n_candidates):
        a, b = counts[c], counts[c + 1]
        for p in range(a + 1, b):  # insertion sort by id: stable, and rows are short
            e = order[p]
            q = p - 1
            while q >= a and ids[order[q]] > ids[e]:
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = e
        for p in range(a, b):
            if p == a or ids[order[p]] != ids[order[p - 1]]:
                starts[m] = p
                m += 1
        row_offsets[c + 1] = m
    return order, starts[:m], row_offsets
