"""Template keys at every token, interned per template, looked up or hashed to feature ids.

A template j with parts (f_1, o_1) ... (f_K, o_K) has at token i the combined value

    c = v_1 + R_1 * (v_2 + R_2 * (... + R_{K-1} * v_K))

where v_k = values[f_k, i + o_k] inside the sentence, and LEFT (1) or RIGHT (2) past its start or
end; R_k is the size of field f_k's id space. Its template key is ``j + n_templates * c``. A
template marked rare-only gives no key (-1) at a token that is not rare.

Templates are processed one at a time (row j of an (n_templates, n_tokens) matrix), so each
template's table stays small: a direct array over the combined values when their range is small,
else an open-addressing hash table (see ``hashing``). Looking up a fitted index (``lookup_rows``)
takes every template's table at once, in flat arrays (``IdTables``): one call for a whole input,
however small.
"""
from collections import namedtuple

import numpy as np
from numba import njit

# lookup and table_with_ids: the encoder's
from .hashing import grow_table, probe, lookup, table_bits, table_with_ids  # noqa: F401

LEFT, RIGHT = 1, 2

# part_starts int64 (n_templates + 1,): parts of template j are part_starts[j] .. part_starts[j + 1]
# part_fields int64 (n_parts,): row of `values` the part reads
# part_offsets int64 (n_parts,): token offset of the part
# part_radices int64 (n_parts,): size of the part's field id space
# rare_only bool (n_templates,)
TemplateTable = namedtuple("TemplateTable", "part_starts part_fields part_offsets part_radices rare_only")
# Every template's ids by combined value, in flat int64 arrays: template j's direct array, the id of
# each value (-1 none), is direct[direct_starts[j]:direct_starts[j + 1]]; when that is empty, its
# open-addressing table (``hashing``) is slot_keys and slot_ids [slot_starts[j]:slot_starts[j + 1]].
IdTables = namedtuple("IdTables", "direct direct_starts slot_keys slot_ids slot_starts")
# What interning finds, one entry per local id: the distinct combined values, their occurrence
# counts and the first token of each, all int64 (bound,).
Interned = namedtuple("Interned", "distinct counts first")


@njit(cache=True, inline="always")
def _combined(spec, j, values, i, start, end):
    """Combined value of template j at token i of the sentence [start, end).

    Inlined by numba: a call would pass the record's arrays, reference counts and all, at every
    token (five times the cost of the whole loop)."""
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
def template_keys(spec, j, values, sentence_offsets, rare, out):
    """Template keys j + n_templates * c of template j at every token into out[j] (int64
    (n_templates, n_tokens); -1 where it does not fire)."""
    m = spec.rare_only.shape[0]
    rare_only = spec.rare_only[j]
    for s in range(sentence_offsets.shape[0] - 1):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                out[j, i] = -1
            else:
                out[j, i] = j + m * _combined(spec, j, values, i, start, end)
    return out


@njit(cache=True, nogil=True)  # releases the GIL: templates intern in parallel threads
def intern_template(spec, j, values, sentence_offsets, rare, direct_size, local, column):
    """Intern template j's combined values into local ids in first-seen token order.

    values : int32 (n_fields, n_tokens); rare : bool (n_tokens,) (read for rare-only templates)
    direct_size : > 0 to index combined values through a direct array of that size (every value
        must be below it), 0 for a hash table
    local : int32 (n_columns, n_tokens); row `column` is written (-1 where the template does not
        fire)

    Returns (distinct combined values int64 (n_local,), occurrence counts int64 (n_local,), first
    token of each int64 (n_local,)).
    """
    n_tokens = sentence_offsets[-1]
    bound = min(n_tokens, direct_size) if direct_size > 0 else n_tokens
    distinct = np.empty(bound, dtype=np.int64)
    counts = np.zeros(bound, dtype=np.int64)
    first = np.empty(bound, dtype=np.int64)
    n_distinct = _intern_rows(spec, j, values, sentence_offsets, rare, direct_size, local[column],
                              Interned(distinct, counts, first))
    return distinct[:n_distinct].copy(), counts[:n_distinct].copy(), first[:n_distinct].copy()


@njit(cache=True)
def _intern_rows(spec, j, values, sentence_offsets, rare, direct_size, local, interned):
    """intern_template's loop into ``interned`` (``Interned``); returns the number of distinct values.

    A combined value finds its local id in a direct array (direct_size > 0) or in a hash table
    that doubles when half full (``hashing``); a value seen first gets the next id."""
    distinct, counts, first = interned
    rare_only = spec.rare_only[j]
    use_direct = direct_size > 0
    direct = np.full(direct_size, -1, dtype=np.int32)
    bits = 10
    slot_keys = np.full(0 if use_direct else 1 << bits, -1, dtype=np.int64)
    slot_ids = np.full(0 if use_direct else 1 << bits, -1, dtype=np.int64)
    n_distinct = 0
    for s in range(sentence_offsets.shape[0] - 1):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                local[i] = -1
                continue
            c = _combined(spec, j, values, i, start, end)
            if use_direct:
                found = np.int64(direct[c])
                if found < 0:
                    found = n_distinct
                    direct[c] = found
            else:
                h = probe(slot_keys, c, 64 - bits, (1 << bits) - 1)
                found = slot_ids[h]
                if found < 0:
                    found = n_distinct
                    slot_keys[h] = c
                    slot_ids[h] = found
                    if 2 * (n_distinct + 1) > (1 << bits):
                        bits += 1
                        slot_keys, slot_ids = grow_table(slot_keys, slot_ids, bits)
            if found == n_distinct:
                distinct[n_distinct] = c
                first[n_distinct] = i
                n_distinct += 1
            counts[found] += 1
            local[i] = found
    return n_distinct


@njit(cache=True)
def number_features(local, local_starts, local_keep, keys_of_local, first_token, known_ids, first_new):
    """Global feature ids in first-seen order over (token, template), and the CSR of the corpus.

    Interning the flattened (token, template) key matrix numbers a feature by its first
    occurrence (first token, then template). Local ids carry their first token, so a counting
    sort of local ids by first token, stable in template order, gives that order without a pass
    over the matrix. Features with local_keep False get no id and are left out.

    Growing an index (continued training): known_ids int64 (n_flat,) is the existing feature id of
    each local feature (-1 for none; empty: no index yet); a known feature keeps its id (its
    local_keep must be False), and the kept ones are numbered first_new, first_new + 1, ...

    local : int32 (n_templates, n_tokens), stored token-major (``local.T`` C-contiguous), overwritten
        with the final ids (-1: none); its buffer then holds the returned feature ids
    local_starts : int64 (n_templates + 1,); template j's local id L is flat index local_starts[j] + L
        in local_keep bool, keys_of_local int64 and first_token int64

    Returns (offsets int64 (n_tokens + 1,), feature ids int32 (nnz,), kept keys int64 (n_kept,)
    in id order).
    """
    m, n = local.shape
    n_flat = local_starts[m]
    # counting sort of flat local ids by first token; the outer loop over templates keeps a
    # token's features in template order
    cursor = np.zeros(n + 1, dtype=np.int32)  # positions in order (n_flat < 2^31: the ids are int32)
    for f in range(n_flat):
        cursor[first_token[f] + 1] += 1
    for i in range(n):
        cursor[i + 1] += cursor[i]
    order = np.empty(n_flat, dtype=np.int64)
    for j in range(m):
        for f in range(local_starts[j], local_starts[j + 1]):
            t = first_token[f]
            order[cursor[t]] = f
            cursor[t] += 1
    final = np.full(n_flat, -1, dtype=np.int32)
    for f in range(known_ids.shape[0]):
        final[f] = known_ids[f]
    kept = np.empty(n_flat, dtype=np.int64)
    n_kept = 0
    for r in range(n_flat):
        f = order[r]
        if local_keep[f]:
            final[f] = first_new + n_kept
            kept[n_kept] = keys_of_local[f]
            n_kept += 1
    offsets = np.zeros(n + 1, dtype=np.int64)
    # token-major buffer: tokens outer, templates inner, is the order of memory
    for i in range(n):
        for j in range(m):
            L = local[j, i]
            if L >= 0:
                f = final[local_starts[j] + L]
                local[j, i] = f
                if f >= 0:
                    offsets[i + 1] += 1
    for i in range(n):
        offsets[i + 1] += offsets[i]
    return offsets, _compact_rows(local, offsets), kept[:n_kept].copy()


@njit(cache=True)
def rekey(feature_keys, part_starts, old_radices, new_radices):
    """The template keys j + n_templates * c re-expressed in new radices: each combined value c is
    split into its value ids with the old radices of its template's parts and recombined with the
    new ones (a vocabulary that grows by appending keeps its value ids, not its radices).

    part_starts int64 (n_templates + 1,), old_radices and new_radices int64 (n_parts,) as in
    ``TemplateTable``. Returns int64 (n_features,)."""
    m = part_starts.shape[0] - 1
    out = np.empty_like(feature_keys)
    for i in range(feature_keys.shape[0]):
        j = feature_keys[i] % m
        c = feature_keys[i] // m
        combined = np.int64(0)
        scale = np.int64(1)
        # _combined puts the first part in the lowest digit
        for p in range(part_starts[j], part_starts[j + 1]):
            combined += (c % old_radices[p]) * scale
            c //= old_radices[p]
            scale *= new_radices[p]
        out[i] = j + m * combined
    return out


@njit(cache=True)
def _compact_rows(ids, offsets):
    """The flat CSR ids of ``_fill_rows``, for ids int32 (n_templates, n_tokens) stored token-major:
    the kept ids are moved to the front of ids' own buffer (write position <= read position), so
    the corpus's feature ids take no second copy. Returns a view of that buffer."""
    m, n = ids.shape
    flat = ids.T.reshape(n * m)
    k = 0
    for r in range(n * m):
        v = flat[r]
        if v >= 0:
            flat[k] = v
            k += 1
    return flat[: offsets[n]]


@njit(cache=True)
def lookup_rows(spec, values, sentence_offsets, rare, tables):
    """The CSR over tokens of the feature ids of every template (``IdTables`` ``tables``), a token's
    ids in template order: (offsets int64 (n_tokens + 1,), flat ids int32 (nnz,)). The same CSR as
    ``columns_to_csr`` of the per-template id rows."""
    m = spec.rare_only.shape[0]
    n = sentence_offsets[-1]
    ids = np.empty((m, n), dtype=np.int32)
    for j in range(m):
        d0, d1 = tables.direct_starts[j], tables.direct_starts[j + 1]
        s0, s1 = tables.slot_starts[j], tables.slot_starts[j + 1]
        direct = tables.direct[d0:d1]
        slot_keys = tables.slot_keys[s0:s1]
        slot_ids = tables.slot_ids[s0:s1]
        use_direct = d1 > d0
        bits = table_bits(slot_keys)
        rare_only = spec.rare_only[j]
        for s in range(sentence_offsets.shape[0] - 1):
            start, end = sentence_offsets[s], sentence_offsets[s + 1]
            for i in range(start, end):
                if rare_only and not rare[i]:
                    ids[j, i] = -1
                    continue
                c = _combined(spec, j, values, i, start, end)
                if use_direct:
                    ids[j, i] = direct[c] if c < direct.shape[0] else -1
                elif s1 > s0:
                    ids[j, i] = slot_ids[probe(slot_keys, c, 64 - bits, (1 << bits) - 1)]
                else:
                    ids[j, i] = -1
    return _rows_of_columns(ids)


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
    """Hashed feature ids of template j into out[j] (int32 (n_templates, n_tokens); -1 where it does
    not fire).

    The bucket is that of the template key j + n_templates * c, so templates do not share
    buckets systematically."""
    n_sentences = sentence_offsets.shape[0] - 1
    m = spec.rare_only.shape[0]
    rare_only = spec.rare_only[j]
    for s in range(n_sentences):
        start, end = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(start, end):
            if rare_only and not rare[i]:
                out[j, i] = -1
                continue
            c = _combined(spec, j, values, i, start, end)
            out[j, i] = bucket_of(j + m * c, bits)
    return out


@njit(cache=True)
def columns_to_csr(ids, remap):
    """CSR over tokens of an id matrix ids int32 (n_templates, n_tokens) with -1 gaps, a token's
    ids in template order; remap[id] is the final id (-1 drops it; empty: ids as they are). With a
    remap, `ids` is overwritten with the final ids.

    Returns (offsets int64 (n_tokens + 1,), flat ids int32 (nnz,))."""
    m, n = ids.shape
    if remap.shape[0] > 0:
        for j in range(m):
            for i in range(n):
                v = ids[j, i]
                if v >= 0:
                    ids[j, i] = remap[v]
    return _rows_of_columns(ids)


@njit(cache=True)
def _rows_of_columns(ids):
    """CSR of ids int32 (n_templates, n_tokens) (-1 gaps): a count pass, then a fill pass, each
    walking tokens, then templates."""
    m, n = ids.shape
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        k = 0
        for j in range(m):
            if ids[j, i] >= 0:
                k += 1
        offsets[i + 1] = offsets[i] + k
    return offsets, _fill_rows(ids, offsets)


@njit(cache=True)
def _fill_rows(ids, offsets):
    """Flat CSR ids (int32 (offsets[-1],)) of ids int32 (n_templates, n_tokens), given the offsets."""
    m, n = ids.shape
    flat = np.empty(offsets[n], dtype=np.int32)
    k = 0
    for i in range(n):
        for j in range(m):
            v = ids[j, i]
            if v >= 0:
                flat[k] = v
                k += 1
    return flat
