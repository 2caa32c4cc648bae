"""Template keys at every token, interned per template, looked up or hashed to feature ids.

A template j with parts (f_1, o_1) ... (f_K, o_K) has at token i the combined value

    c = v_1 + R_1 * (v_2 + R_2 * (... + R_{K-1} * v_K))

where v_k = values[f_k, i + o_k] inside the sentence, and LEFT (1) or RIGHT (2) past its start or
end; R_k is the size of field f_k's id space. Its template key is ``j + n_templates * c``. A
template marked rare-only gives no key (-1) at a token that is not rare.

Templates are processed one at a time (column j of an (n_tokens, n_templates) matrix), so each
template's table stays small: a direct array over the combined values when their range is small,
else an open-addressing hash table (see ``hashing``).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .hashing import _capacity_bits, _grow, _home

LEFT, RIGHT = 1, 2

# part_starts int64 (n_templates + 1,): parts of template j are part_starts[j] .. part_starts[j + 1]
# part_fields int64 (n_parts,): row of `values` the part reads
# part_offsets int64 (n_parts,): token offset of the part
# part_radices int64 (n_parts,): size of the part's field id space
# rare_only bool (n_templates,)
TemplateTable = namedtuple("TemplateTable", "part_starts part_fields part_offsets part_radices rare_only")


@njit(cache=True)
def _combined(spec, j, values, i, start, end):
    """Combined value of template j at token i of the sentence [start, end)."""
    c = np.int64(0)
    for p in range(spec.part_starts[j + 1] - 1, spec.part_starts[j] - 1, -1):
        t = i + spec.part_offsets[p]
        if t < start:
            v = LEFT
        elif t >= end:
            v = RIGHT
        else:
            v = np.int64(values[spec.part_fields[p], t])
        c = c * spec.part_radices[p] + v
    return c


@njit(cache=True)
def intern_template(spec, j, values, sentence_offsets, rare, direct_size, local, column):
    """Intern template j's combined values into local ids in first-seen token order.

    values : int32 (n_fields, n_tokens); rare : bool (n_tokens,) (read for rare-only templates)
    direct_size : > 0 to index combined values through a direct array of that size (every value
        must be below it), 0 for a hash table
    local : int32 (n_tokens, n_columns); local[:, column] is written (-1 where the template does
        not fire)

    Returns (distinct combined values int64 (n_local,), occurrence counts int64 (n_local,)).
    """
    n_sentences = sentence_offsets.shape[0] - 1
    rare_only = spec.rare_only[j]
    distinct = np.empty(1024, dtype=np.int64)
    counts = np.zeros(1024, dtype=np.int64)
    n_distinct = 0
    direct = np.full(max(direct_size, 1), -1, dtype=np.int32)
    bits = 10
    capacity = 1 << bits
    mask = capacity - 1
    slot_keys = np.full(capacity if direct_size == 0 else 1, -1, dtype=np.int64)
    slot_ids = np.full(capacity if direct_size == 0 else 1, -1, dtype=np.int64)
    for s in range(n_sentences):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                local[i, column] = -1
                continue
            c = _combined(spec, j, values, i, start, end)
            if direct_size > 0:
                found = direct[c]
                if found < 0:
                    found = n_distinct
                    direct[c] = found
            else:
                h = _home(c, 64 - bits)
                while True:
                    k = slot_keys[h]
                    if k == c:
                        found = slot_ids[h]
                        break
                    if k == -1:
                        found = n_distinct
                        slot_keys[h] = c
                        slot_ids[h] = found
                        if 2 * (n_distinct + 1) > capacity:
                            bits += 1
                            capacity = 1 << bits
                            mask = capacity - 1
                            slot_keys, slot_ids = _grow(slot_keys, slot_ids, bits)
                        break
                    h = (h + 1) & mask
            if found == n_distinct:
                if n_distinct == distinct.shape[0]:
                    distinct = np.concatenate((distinct, np.empty(n_distinct, dtype=np.int64)))
                    counts = np.concatenate((counts, np.zeros(n_distinct, dtype=np.int64)))
                distinct[n_distinct] = c
                n_distinct += 1
            counts[found] += 1
            local[i, column] = found
    return distinct[:n_distinct].copy(), counts[:n_distinct].copy()


@njit(cache=True)
def number_features(local, local_starts, local_keep, keys_of_local):
    """Global feature ids in first-seen order over (token, template), and the CSR of the corpus.

    The feature of local id L of template j first occurs at the first token whose local[i, j] is L;
    since local ids are numbered in token order, that is where local[i, j] equals the count of
    template j's local ids seen so far. Walking tokens, then templates, in order therefore
    numbers features exactly as interning the flattened key matrix would. Features with
    local_keep False get no id and are left out.

    local : int32 (n_tokens, n_templates); local_starts int64 (n_templates + 1,): template j's local
    ids are local_starts[j] + L in the flat arrays local_keep bool and keys_of_local int64.

    Returns (offsets int64 (n_tokens + 1,), feature ids int64 (nnz,), kept keys int64 (n_features,)
    in id order).
    """
    n, m = local.shape
    n_flat = local_starts[m]
    final = np.full(n_flat, -1, dtype=np.int64)
    seen = np.zeros(m, dtype=np.int64)
    kept = np.empty(n_flat, dtype=np.int64)
    n_kept = 0
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        row = 0
        for j in range(m):
            L = local[i, j]
            if L < 0:
                continue
            flat = local_starts[j] + L
            if L == seen[j]:
                seen[j] += 1
                if local_keep[flat]:
                    final[flat] = n_kept
                    kept[n_kept] = keys_of_local[flat]
                    n_kept += 1
            if final[flat] >= 0:
                row += 1
        offsets[i + 1] = offsets[i] + row
    ids = np.empty(offsets[n], dtype=np.int64)
    k = 0
    for i in range(n):
        for j in range(m):
            L = local[i, j]
            if L >= 0:
                f = final[local_starts[j] + L]
                if f >= 0:
                    ids[k] = f
                    k += 1
    return offsets, ids, kept[:n_kept].copy()


@njit(cache=True)
def lookup_template(spec, j, values, sentence_offsets, rare, direct, slot_keys, slot_ids, out):
    """Feature ids of template j at every token into out[:, j] (int32; -1 for none).

    direct : int64 (size,) feature id per combined value (-1 none); used when non-empty, else the
    hash table (slot_keys, slot_ids) over combined values.
    """
    n_sentences = sentence_offsets.shape[0] - 1
    rare_only = spec.rare_only[j]
    use_direct = direct.shape[0] > 0
    size = direct.shape[0]
    capacity = slot_keys.shape[0]
    bits = 0
    while (1 << bits) < capacity:
        bits += 1
    mask = capacity - 1
    for s in range(n_sentences):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                out[i, j] = -1
                continue
            c = _combined(spec, j, values, i, start, end)
            found = -1
            if use_direct:
                if c < size:
                    found = direct[c]
            else:
                h = _home(c, 64 - bits)
                while True:
                    k = slot_keys[h]
                    if k == c:
                        found = slot_ids[h]
                        break
                    if k == -1:
                        break
                    h = (h + 1) & mask
            out[i, j] = found
    return out


@njit(cache=True)
def mix64(key):
    """MurmurHash3's 64-bit finalizer: a bijection of uint64 that spreads every input bit."""
    x = np.uint64(key)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


@njit(cache=True)
def bucket_of(key, bits):
    """Feature id of a template key under hashing: the low `bits` bits of mix64(key)."""
    return np.int64(mix64(key) & np.uint64((1 << bits) - 1))


@njit(cache=True)
def hash_template(spec, j, values, sentence_offsets, rare, bits, out):
    """Hashed feature ids of template j into out[:, j] (int32; -1 where it does not fire).

    The bucket is that of the template key j + n_templates * c, so templates do not share
    buckets systematically."""
    n_sentences = sentence_offsets.shape[0] - 1
    m = spec.rare_only.shape[0]
    rare_only = spec.rare_only[j]
    for s in range(n_sentences):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                out[i, j] = -1
                continue
            c = _combined(spec, j, values, i, start, end)
            out[i, j] = bucket_of(j + m * c, bits)
    return out


@njit(cache=True)
def table_with_ids(keys, ids):
    """Hash table mapping keys[i] -> ids[i] (keys distinct, >= 0); as ``hashing.build_table``."""
    bits = _capacity_bits(keys.shape[0])
    capacity = 1 << bits
    slot_keys = np.full(capacity, -1, dtype=np.int64)
    slot_ids = np.full(capacity, -1, dtype=np.int64)
    mask = capacity - 1
    for i in range(keys.shape[0]):
        s = _home(keys[i], 64 - bits)
        while slot_keys[s] != -1:
            s = (s + 1) & mask
        slot_keys[s] = keys[i]
        slot_ids[s] = ids[i]
    return slot_keys, slot_ids
