"""The types that entity keys take in a document, and the share features of a candidate's chunks and
outside words (``rerank.context`` describes the features; ``rerank.interned`` calls these kernels).

Keys are integers (an entity string's node, its lower-cased string's node, a word); types are
integers (``types``: the chunk types, "O", the gazetteers' types). Counting goes by *additions*: every
distinct chunk adds its type under each of its keys (``entity_keys``), every capitalised word left
outside the chunks adds "O" under its word, in that order. Each addition e names a slot of the
(document, key) counts, total_slot[e], and of the (sentence, key) counts, own_slot[e] (numbered by
``interning.first_ids``). A *table* keeps, per slot, the weight of every type in the order the
types first came::

    table = (head, tail int64 (slots,), kind int64 (cap,), weight float64 (cap,), next int64 (cap,),
             used int64 (1,))

slot s's types are the linked entries head[s], next[head[s]], ... Counts are kept per source (the
base's 1-best, ``one``; all candidates, ``many``), each as a ``total`` and an ``own`` table; what a
key gets *elsewhere* in its document is total - own, types at or below 1e-9 left out. A share is
count / (the sum of the counts, in their order), as ``rerank.context.shares`` computes it.

Feature tables (ids into the vocabulary, -1 for a feature it lacks)::

    pair_ids   int64 (P, T, T)   "<prefix>:<type>=<other type>"  prefixes d1s d1l d1h dns dnl dnh gs gl
    agree_ids  int64 (P,)        "<prefix>:agree"
    none_ids   int64 (P, T)      "<prefix>:<type>:none"
    outside_ids int64 (2, T)     "d1o:<type>", "dno:<type>"
"""
from collections import namedtuple

import numpy as np
from numba import njit

# Below this many distinct chunks their rows are made in the calling thread
PARALLEL_FROM_CHUNKS = 4096
# Below this many additions the total and the own counts are made one after the other in the calling thread
PARALLEL_FROM_ADDITIONS = 20000

# chunk_rows' records: what a chunk's document has counted (the tables of ``document_counts`` and each
# chunk's additions), the distinct chunks, their gazetteer entries, and the share features' ids
ChunkDocuments = namedtuple("ChunkDocuments", "counts key_offsets total_slot own_slot in_one in_many")
ChunkSpans = namedtuple("ChunkSpans", "chunk_type chunk_span n_spans")
GazetteerEntries = namedtuple("GazetteerEntries", "string_entry lower_entry entry_offsets entry_types entry_counts")
ShareIds = namedtuple("ShareIds", "pair_ids agree_ids none_ids")

D1S, D1L, D1H, DNS, DNL, DNH, GS, GL = range(8)


@njit(cache=True)
def new_table(n_slots, capacity):
    return (np.full(n_slots, -1, dtype=np.int64), np.full(n_slots, -1, dtype=np.int64),
            np.empty(capacity, dtype=np.int64), np.empty(capacity, dtype=np.float64),
            np.full(capacity, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))


@njit(cache=True)
def table_add(table, slot, kind, weight):
    head, tail, kinds, weights, following, used = table
    e = head[slot]
    while e >= 0:
        if kinds[e] == kind:
            weights[e] += weight
            return
        e = following[e]
    e = used[0]
    used[0] += 1
    kinds[e] = kind
    weights[e] = weight
    if head[slot] < 0:
        head[slot] = e
    else:
        following[tail[slot]] = e
    tail[slot] = e


@njit(cache=True)
def entity_keys(string_key, lower_key, word_key, starts, ends):
    """(offsets int64 (D + 1,), keys): the keys of every chunk (tokens starts[d] to ends[d] - 1): its
    string, its lower-cased string, then each of its words (word_key, per token)."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, dtype=np.int64)
    for d in range(n):
        offsets[d + 1] = offsets[d] + 2 + ends[d] - starts[d]
    keys = np.empty(offsets[n], dtype=np.int64)
    for d in range(n):
        at = offsets[d]
        keys[at] = string_key[d]
        keys[at + 1] = lower_key[d]
        for t in range(starts[d], ends[d]):
            keys[at + 2 + t - starts[d]] = word_key[t]
    return offsets, keys


@njit(cache=True, nogil=True)
def slot_tables(n_slots, slot, kind, weight, in_one):
    """(one, many): addition e adds weight[e] of type kind[e] to many's slot slot[e], and 1 to one's
    when in_one[e]."""
    n = slot.shape[0]
    one, many = new_table(n_slots, n), new_table(n_slots, n)
    for e in range(n):
        table_add(many, slot[e], kind[e], weight[e])
        if in_one[e]:
            table_add(one, slot[e], kind[e], 1.0)
    return one, many


def document_counts(n_total, n_own, total_slot, own_slot, kind, weight, in_one, threads=None):
    """(one_total, one_own, many_total, many_own): ``slot_tables`` of the total slots and of the own
    slots, the two on two threads (``threads.over_items``; None: numba's count) from
    ``PARALLEL_FROM_ADDITIONS`` additions on."""
    from structperc._kernels.threads import over_items

    numberings = ((n_total, total_slot), (n_own, own_slot))
    made = [None, None]

    def call(lo, hi):
        for i in range(lo, hi):
            made[i] = slot_tables(numberings[i][0], numberings[i][1], kind, weight, in_one)

    if total_slot.shape[0] < PARALLEL_FROM_ADDITIONS:
        call(0, 2)
    else:
        over_items(call, 2, chunks_per_thread=1, threads=threads)
    (one_total, many_total), (one_own, many_own) = made
    return one_total, one_own, many_total, many_own


@njit(cache=True)
def elsewhere(total, own, slot, own_slot, out_kind, out_count, out):
    """The types and counts (into row ``out`` of out_kind, out_count) that a key gets in its document
    outside its own sentence (slot of the total table, own_slot of the own one); returns how many."""
    n = 0
    e = total[0][slot]
    has_own = own[0][own_slot] >= 0
    while e >= 0:
        kind, count = total[2][e], total[3][e]
        keep = True
        if has_own:
            f = own[0][own_slot]
            while f >= 0:
                if own[2][f] == kind:
                    count = count - own[3][f]
                    break
                f = own[4][f]
            keep = count > 1e-9
        if keep:
            out_kind[out, n] = kind
            out_count[out, n] = count
            n += 1
        e = total[4][e]
    return n


@njit(cache=True)
def _emit_shares(key, found, out, n, with_none, share_ids, rows, at):
    """Writes the known share features of key = (prefix, kind) (context._share_features) of the n types
    and counts of row ``out`` of found = (out_kind, out_count) into rows = (ids, values) from ``at``;
    returns the end. share_ids: ``ShareIds``."""
    prefix, kind = key
    out_kind, out_count = found
    pair_ids, agree_ids, none_ids = share_ids
    ids, values = rows
    total = 0.0
    for j in range(n):
        total += out_count[out, j]
    if n == 0 or total <= 0:
        if with_none and none_ids[prefix, kind] >= 0:
            ids[at] = none_ids[prefix, kind]
            values[at] = 1.0
            at += 1
        return at
    agree = 0.0
    for j in range(n):
        share = out_count[out, j] / total
        f = pair_ids[prefix, kind, out_kind[out, j]]
        if f >= 0:
            ids[at] = f
            values[at] = share
            at += 1
        if out_kind[out, j] == kind:
            agree = share
    if agree_ids[prefix] >= 0:
        ids[at] = agree_ids[prefix]
        values[at] = agree
        at += 1
    return at


@njit(cache=True)
def _room(ids, values, size, n):
    """(ids, values) with room for n more entries after ``size``: grown (doubled) when full."""
    if size + n <= ids.shape[0]:
        return ids, values
    capacity = max(2 * ids.shape[0], size + n)
    grown_ids = np.empty(capacity, dtype=np.int64)
    grown_values = np.empty(capacity, dtype=np.float64)
    grown_ids[:size] = ids[:size]
    grown_values[:size] = values[:size]
    return grown_ids, grown_values


def chunk_rows(n_types, documents, chunks, gazetteer, share_ids, threads=None):
    """(offsets int64 (D + 1,), ids, values): ``chunk_rows_block`` of every distinct chunk, made in
    ranges of chunks on ``threads`` threads (``threads.over_items``; None: numba's count) from
    ``PARALLEL_FROM_CHUNKS`` chunks on, each range into its own arrays, joined in order."""
    from structperc._kernels.threads import over_items

    n_chunks = chunks[0].shape[0]
    if n_chunks < PARALLEL_FROM_CHUNKS:
        return chunk_rows_block(0, n_chunks, n_types, documents, chunks, gazetteer, share_ids)
    blocks = {}  # lo -> the rows of the range from lo

    def call(lo, hi):
        blocks[lo] = chunk_rows_block(lo, hi, n_types, documents, chunks, gazetteer, share_ids)

    over_items(call, n_chunks, chunks_per_thread=4, threads=threads)
    if len(blocks) == 1:
        return blocks[0]
    in_order = [blocks[lo] for lo in sorted(blocks)]
    offsets = [np.zeros(1, dtype=np.int64)]
    for block in in_order:
        offsets.append(block[0][1:] + offsets[-1][-1])
    return (np.concatenate(offsets), np.concatenate([b[1] for b in in_order]),
            np.concatenate([b[2] for b in in_order]))


@njit(cache=True, nogil=True)
def chunk_rows_block(lo, hi, n_types, documents, chunks, gazetteer, share_ids):
    """(offsets int64 (hi - lo + 1,), ids, values): the document and gazetteer features of the distinct
    chunks lo .. hi - 1, in the order of ``context.ListContext._span_shares``: for d1 then dn (when
    the chunk's document has counts there: in_one_document, in_many_document) its string (with "none"),
    lower-cased string and last word, the additions key_offsets[d], key_offsets[d] + 1 and
    key_offsets[d + 1] - 1 of ``entity_keys``; then, when gazetteer_string[d] > -2, the gazetteer
    entries of its string (with "none") and lower-cased string (entry -1: not in the gazetteer; entry
    e's types and counts are entry_types/entry_counts[entry_offsets[e]: entry_offsets[e + 1]]).
    Unknown features are left out. counts: the tables of ``document_counts``. What a key gets
    elsewhere does not depend on the chunk's type: it is found once per span (chunk_span[d], the
    chunk's tokens, numbered 0 .. n_spans - 1).

    documents : ``ChunkDocuments``; chunks : ``ChunkSpans``; gazetteer : ``GazetteerEntries``;
    share_ids : ``ShareIds``."""
    counts, key_offsets, total_slot, own_slot, in_one_document, in_many_document = documents
    chunk_type, chunk_span, n_spans = chunks
    gazetteer_string, gazetteer_lower, entry_offsets, entry_types, entry_counts = gazetteer
    one_total, one_own, many_total, many_own = counts
    n_chunks = hi - lo
    offsets = np.zeros(n_chunks + 1, dtype=np.int64)
    ids = np.empty(8 * n_chunks + 16, dtype=np.int64)
    values = np.empty(8 * n_chunks + 16, dtype=np.float64)
    size = 0
    width = 8 * (n_types + 1) + 8  # the most entries a row can have
    out_kind = np.empty((1, n_types + 1), dtype=np.int64)
    out_count = np.empty((1, n_types + 1), dtype=np.float64)
    # row 6 * (span - first_span) + key: the types each key of a span gets, and how many (once found),
    # for the spans of these chunks (first_span .. last_span)
    first_span, last_span = 0, -1
    if n_chunks > 0 and n_spans > 0:
        first_span, last_span = chunk_span[lo], chunk_span[lo]
        for d in range(lo, hi):
            first_span = min(first_span, chunk_span[d])
            last_span = max(last_span, chunk_span[d])
    n_cached = last_span - first_span + 1
    found = np.full(6 * n_cached, -1, dtype=np.int64)
    found_kind = np.empty((6 * n_cached, n_types + 1), dtype=np.int64)
    found_count = np.empty((6 * n_cached, n_types + 1), dtype=np.float64)
    for d in range(lo, hi):
        kind = chunk_type[d]
        ids, values = _room(ids, values, size, width)
        at = size
        for source in range(2):
            if not (in_one_document[d] if source == 0 else in_many_document[d]):
                continue
            for k in range(3):
                which = 3 * source + k
                out = 6 * (chunk_span[d] - first_span) + which
                n = found[out]
                if n < 0:
                    e = key_offsets[d] + k if k < 2 else key_offsets[d + 1] - 1
                    if source == 0:
                        n = elsewhere(one_total, one_own, total_slot[e], own_slot[e], found_kind, found_count, out)
                    else:
                        n = elsewhere(many_total, many_own, total_slot[e], own_slot[e], found_kind, found_count, out)
                    found[out] = n
                at = _emit_shares((which, kind), (found_kind, found_count), out, n, k == 0, share_ids,
                                  (ids, values), at)
        if gazetteer_string[d] > -2:
            for k in range(2):
                entry = gazetteer_string[d] if k == 0 else gazetteer_lower[d]
                n = 0
                if entry >= 0:
                    for p in range(entry_offsets[entry], entry_offsets[entry + 1]):
                        out_kind[0, n] = entry_types[p]
                        out_count[0, n] = entry_counts[p]
                        n += 1
                at = _emit_shares((GS + k, kind), (out_kind, out_count), 0, n, k == 0, share_ids, (ids, values), at)
        size = at
        offsets[d - lo + 1] = size
    return offsets, ids[:size], values[:size]


@njit(cache=True)
def outside_rows(n_types, counts, total_slot, own_slot, in_one_document, in_many_document, outside_ids):
    """(offsets int64 (R + 1,), ids, values): the features of every capitalised word left outside the
    chunks (``context.ListContext.outside_features``), its addition's slots total_slot[r], own_slot[r]:
    for d1o then dno (when its document has counts there), each type's share of what the word gets
    elsewhere in its document."""
    one_total, one_own, many_total, many_own = counts
    n_rows = total_slot.shape[0]
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    ids = np.empty(2 * n_rows + 16, dtype=np.int64)
    values = np.empty(2 * n_rows + 16, dtype=np.float64)
    size = 0
    out_kind = np.empty((1, n_types + 1), dtype=np.int64)
    out_count = np.empty((1, n_types + 1), dtype=np.float64)
    for r in range(n_rows):
        ids, values = _room(ids, values, size, 2 * (n_types + 1))
        at = size
        for source in range(2):
            if not (in_one_document[r] if source == 0 else in_many_document[r]):
                continue
            if source == 0:
                n = elsewhere(one_total, one_own, total_slot[r], own_slot[r], out_kind, out_count, 0)
            else:
                n = elsewhere(many_total, many_own, total_slot[r], own_slot[r], out_kind, out_count, 0)
            whole = 0.0
            for j in range(n):
                whole += out_count[0, j]
            for j in range(n):
                if outside_ids[source, out_kind[0, j]] >= 0:
                    ids[at] = outside_ids[source, out_kind[0, j]]
                    values[at] = out_count[0, j] / whole
                    at += 1
        size = at
        offsets[r + 1] = size
    return offsets, ids[:size], values[:size]
