"""Interning sequences of integer ids (an entity's word ids, a candidate's chunk types) to one node id
each, in a trie held by a typed dict::

    trie   Dict[(parent node, item)] -> node    the root is -1; nodes are 0, 1, 2, ... in order of creation
    items  int64 (n,)                           sequence r is items[starts[r]: ends[r]]

Two sequences get the same node exactly when they are equal, so that strings made by joining the
items' strings (with a separator no item contains) are compared by their nodes.
"""
import numpy as np
from numba import njit, types
from numba.typed import Dict

PAIR = types.UniTuple(types.int64, 2)


@njit(cache=True)
def new_trie():
    return Dict.empty(key_type=PAIR, value_type=types.int64)


@njit(cache=True)
def intern_ranges(trie, items, starts, ends):
    """int64 (R,): the node of every sequence, adding the nodes it lacks (the empty sequence is -1)."""
    out = np.empty(starts.shape[0], dtype=np.int64)
    for r in range(starts.shape[0]):
        node = -1
        for p in range(starts[r], ends[r]):
            key = (node, items[p])
            if key in trie:
                node = trie[key]
            else:
                found = len(trie)
                trie[key] = found
                node = found
        out[r] = node
    return out


@njit(cache=True)
def lookup_ranges(trie, items, starts, ends):
    """int64 (R,): the node of every sequence, or -2 when the trie lacks it (an item < 0 is in no
    sequence of the trie; the empty sequence is -1)."""
    out = np.empty(starts.shape[0], dtype=np.int64)
    for r in range(starts.shape[0]):
        node = -1
        for p in range(starts[r], ends[r]):
            if items[p] < 0:
                node = -2
                break
            key = (node, items[p])
            if key not in trie:
                node = -2
                break
            node = trie[key]
        out[r] = node
    return out


@njit(cache=True)
def first_ids(codes):
    """(ids int64 (n,), m): every code's distinct value numbered 0..m-1 in order of first appearance
    (an open-addressing hash table with linear probing, at most half full)."""
    n = codes.shape[0]
    bits = 1
    while (1 << bits) < 2 * n + 2:
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    keys = np.empty(mask + 1, dtype=np.int64)
    values = np.full(mask + 1, -1, dtype=np.int64)
    ids = np.empty(n, dtype=np.int64)
    m = 0
    for e in range(n):
        code = codes[e]
        h = np.int64((np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
        while True:
            if values[h] < 0:
                keys[h] = code
                values[h] = m
                ids[e] = m
                m += 1
                break
            if keys[h] == code:
                ids[e] = values[h]
                break
            h = (h + 1) & mask
    return ids, m
