"""Open-addressing hash table from non-negative int64 keys to dense ids.

The table is two arrays of a power-of-two capacity: ``slot_keys`` (-1 marks an empty slot) and
``slot_ids``. Slots are found by Fibonacci hashing with linear probing. A table is never more than
half full (``_capacity_bits``; ``intern`` doubles it when it would be), so a probe always meets an
empty slot. The encoder's per-template tables (``keys``) use the same layout.
"""
import numpy as np
from numba import njit

_GOLDEN = np.uint64(11400714819323198485)


@njit(cache=True)
def _home(key, shift):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(shift))


@njit(cache=True)
def _capacity_bits(n):
    bits = 4
    while (1 << bits) < 2 * n + 1:
        bits += 1
    return bits


@njit(cache=True)
def probe(slot_keys, key, shift, mask):
    """The slot holding ``key``, or the empty slot (-1) where linear probing would put it."""
    s = _home(key, shift)
    while slot_keys[s] != key and slot_keys[s] != -1:
        s = (s + 1) & mask
    return s


@njit(cache=True)
def table_bits(slot_keys):
    """log2 of a table's capacity."""
    bits = 0
    while (1 << bits) < slot_keys.shape[0]:
        bits += 1
    return bits


@njit(cache=True)
def table_with_ids(keys, ids):
    """Table mapping keys[i] -> ids[i]. keys: int64 (n,), distinct and >= 0."""
    bits = _capacity_bits(keys.shape[0])
    capacity = 1 << bits
    slot_keys = np.full(capacity, -1, dtype=np.int64)
    slot_ids = np.full(capacity, -1, dtype=np.int64)
    mask = capacity - 1
    for i in range(keys.shape[0]):
        s = probe(slot_keys, keys[i], 64 - bits, mask)
        slot_keys[s] = keys[i]
        slot_ids[s] = ids[i]
    return slot_keys, slot_ids


@njit(cache=True)
def lookup(slot_keys, slot_ids, queries):
    """ids of queries (any shape flattened by the caller); -1 for a missing key or a query of -1."""
    bits = table_bits(slot_keys)
    mask = slot_keys.shape[0] - 1
    out = np.full(queries.shape[0], -1, dtype=np.int64)
    for i in range(queries.shape[0]):
        q = queries[i]
        if q < 0:
            continue
        s = probe(slot_keys, q, 64 - bits, mask)
        if slot_keys[s] == q:
            out[i] = slot_ids[s]
    return out


@njit(cache=True)
def grow_table(slot_keys, slot_ids, bits):
    """Rehash into a table of 2**bits slots."""
    capacity = 1 << bits
    mask = capacity - 1
    new_keys = np.full(capacity, -1, dtype=np.int64)
    new_ids = np.full(capacity, -1, dtype=np.int64)
    for i in range(slot_keys.shape[0]):
        k = slot_keys[i]
        if k != -1:
            s = probe(new_keys, k, 64 - bits, mask)
            new_keys[s] = k
            new_ids[s] = slot_ids[i]
    return new_keys, new_ids


@njit(cache=True)
def intern(queries):
    """Dense ids in first-seen order for queries (int64, -1 = none).

    Returns (ids (n,), distinct keys in id order, occurrence count per id). The table starts
    small and doubles whenever it is half full, so its size follows the number of distinct keys,
    not the number of queries.
    """
    n = queries.shape[0]
    bits = 12
    capacity = 1 << bits
    mask = capacity - 1
    slot_keys = np.full(capacity, -1, dtype=np.int64)
    slot_ids = np.full(capacity, -1, dtype=np.int64)
    ids = np.full(n, -1, dtype=np.int64)
    distinct = np.empty(1024, dtype=np.int64)
    counts = np.zeros(1024, dtype=np.int64)
    n_distinct = 0
    for i in range(n):
        q = queries[i]
        if q < 0:
            continue
        s = probe(slot_keys, q, 64 - bits, mask)
        if slot_keys[s] == q:
            ids[i] = slot_ids[s]
        else:
            slot_keys[s] = q
            slot_ids[s] = n_distinct
            ids[i] = n_distinct
            if n_distinct == distinct.shape[0]:
                distinct = np.concatenate((distinct, np.empty(n_distinct, dtype=np.int64)))
                counts = np.concatenate((counts, np.zeros(n_distinct, dtype=np.int64)))
            distinct[n_distinct] = q
            n_distinct += 1
            if 2 * n_distinct > capacity:
                bits += 1
                capacity = 1 << bits
                mask = capacity - 1
                slot_keys, slot_ids = grow_table(slot_keys, slot_ids, bits)
        counts[ids[i]] += 1
    return ids, distinct[:n_distinct].copy(), counts[:n_distinct].copy()
