"""The fitted index's lookup: from a template's combined value to its feature id, the
``IndexLookup`` half of ``encode.FeatureEncoder`` (which sets the templates, the keys and the radices).

Each template's ids are a direct array over its combined values when their range is small, else an
open-addressing hash table (``_kernels.encode.hashing``), built once from the stored keys
(``_index_tables``). A lookup reads every template's table at once, from flat arrays
(``_id_tables``, ``keys.IdTables``), in one kernel call for the whole input (``keys.lookup_rows``),
so that a small input costs few calls. Under feature hashing a hashed id maps to its kept id
(``_bucket_remap``).
"""
import numpy as np

from structperc._kernels.encode import keys

_DIRECT_MIN = 1 << 16
_EMPTY = np.zeros(0, dtype=np.int64)
_NO_SLOTS = np.full(1, -1, dtype=np.int64)


def use_direct(space, n_items):
    """Whether a template with `space` combined values is indexed through a direct array (cheap when
    the array is small, or small beside the n_items it serves) rather than a hash table."""
    return space <= max(_DIRECT_MIN, 2 * n_items)


class IndexLookup:
    """The lookup tables of a fitted index; the encoder drops them (``_tables``) when its keys change."""

    def _template_tables(self, kind):
        """Per template (direct array, slot_keys, slot_ids) from combined value to feature id: views into
        ``_id_tables(kind)``."""
        return self._index_tables(kind)[0]

    def _id_tables(self, kind):
        """Every template's table in the flat arrays of ``keys.IdTables``."""
        return self._index_tables(kind)[1]

    def _index_tables(self, kind):
        """(per-template views, ``keys.IdTables``) of the index of ``kind``, built once from its keys, so
        that the tables are held once."""
        tables = self.__dict__.setdefault("_tables", {})
        if kind not in tables:
            templates = self._emission_templates if kind == "feature" else self._pair_templates
            feature_keys = getattr(self, f"{kind}_keys_")
            m = len(templates)
            template_of = feature_keys % m if m else feature_keys
            combined = feature_keys // m if m else feature_keys
            direct, slot_keys, slot_ids = [_EMPTY], [_EMPTY], [_EMPTY]
            for j, t in enumerate(templates):
                ids = np.flatnonzero(template_of == j)
                space = self._space(t)
                if use_direct(space, 4 * len(ids)):
                    by_value = np.full(space, -1, dtype=np.int64)
                    by_value[combined[ids]] = ids
                    direct.append(by_value)
                    slot_keys.append(_EMPTY)
                    slot_ids.append(_EMPTY)
                else:
                    keys_j, ids_j = keys.table_with_ids(combined[ids], ids)
                    direct.append(_EMPTY)
                    slot_keys.append(keys_j)
                    slot_ids.append(ids_j)
            flat = keys.IdTables(np.concatenate(direct), np.cumsum([len(d) for d in direct]).astype(np.int64),
                                 np.concatenate(slot_keys), np.concatenate(slot_ids),
                                 np.cumsum([len(k) for k in slot_keys]).astype(np.int64))
            views = []
            for j in range(m):
                d0, d1 = flat.direct_starts[j], flat.direct_starts[j + 1]
                s0, s1 = flat.slot_starts[j], flat.slot_starts[j + 1]
                views.append((flat.direct[d0:d1], flat.slot_keys[s0:s1], flat.slot_ids[s0:s1]) if d1 == d0
                             else (flat.direct[d0:d1], _NO_SLOTS, _NO_SLOTS))
            tables[kind] = views, flat
        return tables[kind]

    def _bucket_remap(self, templates):
        """Hashing: final feature id per hashed id (empty: the identity)."""
        kind = "feature" if templates is self._emission_templates else "pair"
        kept = getattr(self, f"{kind}_keys_")
        if not templates:
            return _EMPTY
        tables = self.__dict__.setdefault("_tables", {})
        if kind not in tables:
            if len(kept) == (1 << self.hash_bits) and np.array_equal(kept, np.arange(len(kept))):
                tables[kind] = _EMPTY
            else:
                remap = np.full(1 << self.hash_bits, -1, dtype=np.int32)
                remap[kept] = np.arange(len(kept))
                tables[kind] = remap
        return tables[kind]

    def _lookup(self, kind, templates, values, rare, sentence_offsets):
        spec, matrix, rare = self._spec(templates, values, rare, int(sentence_offsets[-1]), kind)
        return keys.lookup_rows(spec, matrix, sentence_offsets, rare, self._id_tables(kind))
