"""The chunks, outside tokens and label trigrams of every candidate of n-best lists, for featurizing.

Candidates are label-id paths (``NBestList``)::

    paths        int64 (sum of lengths,)  label ids
    path_offsets int64 (C + 1,)           candidate c is paths[path_offsets[c]: path_offsets[c + 1]]

A label is read through two tables over label ids: ``tags`` (O 0, B 1, I 2, E 3, S 4, "." 5, any other
letter 6) and ``types`` (the chunk type's id). Chunks are read as ``chunks.chunk_spans`` reads label
strings (conlleval's rules).
"""
import numpy as np
from numba import njit

TAG_CODES = {"O": 0, "B": 1, "I": 2, "E": 3, "S": 4, ".": 5}
OTHER_TAG = 6
NO_TYPE = -2  # the type before the first token ("" in chunk_spans)


@njit(cache=True)
def _spans_of(paths, a, b, labels, out, at, write):
    """Chunks of paths[a:b] written from ``at`` into ``out`` (out_type, out_first, out_last) when
    ``write``; returns the position after them. labels: (tags, types, end_type), end_type the type of
    the "O" label (the end sentinel of chunk_spans)."""
    tags, types, end_type = labels
    out_type, out_first, out_last = out
    prev_tag, prev_type, begin = 0, NO_TYPE, 0
    n = b - a
    for i in range(n + 1):
        if i < n:
            tag, kind = tags[paths[a + i]], types[paths[a + i]]
        else:
            tag, kind = 0, end_type
        if (prev_tag == 3 or prev_tag == 4 or ((prev_tag == 1 or prev_tag == 2) and (tag == 1 or tag == 4 or tag == 0))
                or (prev_tag != 0 and prev_tag != 5 and prev_type != kind)):
            if write:
                out_type[at] = prev_type
                out_first[at] = begin
                out_last[at] = i - 1
            at += 1
        if (tag == 1 or tag == 4 or ((prev_tag == 3 or prev_tag == 4 or prev_tag == 0) and (tag == 3 or tag == 2))
                or (tag != 0 and tag != 5 and prev_type != kind)):
            begin = i
        prev_tag, prev_type = tag, kind
    return at


@njit(cache=True)
def candidate_spans(paths, path_offsets, tags, types, end_type):
    """(span_offsets int64 (C + 1,), span_type, span_first, span_last int64 (S,)): the chunks of every
    candidate, positions relative to its sentence, in chunk_spans' order."""
    n = path_offsets.shape[0] - 1
    labels = (tags, types, end_type)
    span_offsets = np.zeros(n + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    for c in range(n):
        span_offsets[c + 1] = span_offsets[c] + _spans_of(paths, path_offsets[c], path_offsets[c + 1], labels,
                                                          (empty, empty, empty), 0, False)
    total = span_offsets[n]
    span_type = np.empty(total, dtype=np.int64)
    span_first = np.empty(total, dtype=np.int64)
    span_last = np.empty(total, dtype=np.int64)
    for c in range(n):
        _spans_of(paths, path_offsets[c], path_offsets[c + 1], labels, (span_type, span_first, span_last),
                  span_offsets[c], True)
    return span_offsets, span_type, span_first, span_last


@njit(cache=True)
def outside_tokens(path_offsets, span_offsets, span_first, span_last, token_start, marked):
    """(candidates, tokens) int64: every marked token (``marked[t]``, t a corpus token index) that a
    candidate leaves outside all its chunks; candidate c's sentence starts at token token_start[c]."""
    n = path_offsets.shape[0] - 1
    total = 0
    for twice in range(2):
        if twice == 1:
            candidates = np.empty(total, dtype=np.int64)
            tokens = np.empty(total, dtype=np.int64)
        at = 0
        for c in range(n):
            length = path_offsets[c + 1] - path_offsets[c]
            inside = np.zeros(length, dtype=np.bool_)
            for s in range(span_offsets[c], span_offsets[c + 1]):
                for i in range(span_first[s], span_last[s] + 1):
                    inside[i] = True
            for i in range(length):
                t = token_start[c] + i
                if marked[t] and not inside[i]:
                    if twice == 1:
                        candidates[at] = c
                        tokens[at] = t
                    at += 1
        total = at
    return candidates, tokens


@njit(cache=True)
def label_trigrams(paths, path_offsets, n_labels):
    """(candidates, codes) int64: the n + 1 label trigrams of every candidate of n tokens, padded with
    two starts (id n_labels) and an end (id n_labels + 1); code = (a * (L + 2) + b) * (L + 2) + c."""
    n = path_offsets.shape[0] - 1
    width = n_labels + 2
    total = 0
    for c in range(n):
        total += path_offsets[c + 1] - path_offsets[c] + 1
    candidates = np.empty(total, dtype=np.int64)
    codes = np.empty(total, dtype=np.int64)
    at = 0
    for c in range(n):
        a, b = n_labels, n_labels
        for k in range(path_offsets[c], path_offsets[c + 1] + 1):
            label = paths[k] if k < path_offsets[c + 1] else n_labels + 1
            candidates[at] = c
            codes[at] = (a * width + b) * width + label
            at += 1
            a, b = b, label
    return candidates, codes


@njit(cache=True)
def trigram_counts(paths, path_offsets, n_labels):
    """(offsets int64 (C + 1,), codes, counts int64): the distinct label trigrams of every candidate
    (codes as ``label_trigrams``), in order of first occurrence, and how often each occurs."""
    n = path_offsets.shape[0] - 1
    width = n_labels + 2
    total = 0
    longest = 0
    for c in range(n):
        length = path_offsets[c + 1] - path_offsets[c] + 1
        total += length
        longest = max(longest, length)
    offsets = np.zeros(n + 1, dtype=np.int64)
    codes = np.empty(total, dtype=np.int64)
    counts = np.empty(total, dtype=np.int64)
    at = 0
    for c in range(n):
        start = at
        a, b = n_labels, n_labels
        for k in range(path_offsets[c], path_offsets[c + 1] + 1):
            label = paths[k] if k < path_offsets[c + 1] else n_labels + 1
            code = (a * width + b) * width + label
            found = False
            for j in range(start, at):
                if codes[j] == code:
                    counts[j] += 1
                    found = True
                    break
            if not found:
                codes[at] = code
                counts[at] = 1
                at += 1
            a, b = b, label
        offsets[c + 1] = at
    return offsets, codes[:at], counts[:at]


@njit(cache=True)
def distinct_in_blocks(keys, block_offsets):
    """(index, inverse) int64 as ``np.unique(keys, return_index=True, return_inverse=True)`` gives them,
    for keys in blocks (keys[block_offsets[b]: block_offsets[b + 1]]) each below the next block's:
    every block sorted on its own (stably, by insertion: blocks are short)."""
    n = keys.shape[0]
    order = np.arange(n)
    index = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    m = 0
    for b in range(block_offsets.shape[0] - 1):
        a, z = block_offsets[b], block_offsets[b + 1]
        for p in range(a + 1, z):
            e = order[p]
            q = p - 1
            while q >= a and keys[order[q]] > keys[e]:
                order[q + 1] = order[q]
                q -= 1
            order[q + 1] = e
        for p in range(a, z):
            if p == a or keys[order[p]] != keys[order[p - 1]]:
                index[m] = order[p]
                m += 1
            inverse[order[p]] = m - 1
    return index[:m], inverse
