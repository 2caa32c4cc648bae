"""Growing a fitted feature index for continued training: the ``extend`` half of ``encode.FeatureEncoder``.

Every existing feature id keeps its meaning, so a model's weights stay valid and only the new ids need
weights (``LinearChainModel.grow``):

- values the vocabularies lack are appended to them (``vocabulary.FieldValues``, extend mode); the
  radices of the fields grow, so the stored template keys are re-expressed in the new radices
  (``keys.rekey``): a key is a number in mixed radix over its value ids, and the value ids stay;
- features the index lacks are numbered after the existing ones, in first-seen order over (token,
  template), as fitting numbers them (``keys.number_features`` with the known ids);
- a new feature is added when this corpus holds it at least ``min_count`` times (the counts of
  earlier training are not kept); an existing feature stays whatever its count here.

Under feature hashing a feature id is a hashed key, so ids need no renumbering: the hashed ids that
this corpus fires and the index lacks (pruned, or cut by ``min_count``) are appended. The stored ids
are hashes and cannot be re-expressed, so the radices of the first training stay (``key_radices_``);
a new value id past its field's radix makes the combined value no longer one-to-one, one more source
of collisions beside the hash.
"""
import numpy as np

from structperc._kernels.encode import keys
from structperc.errors import ConfigError
from structperc.features.vocabulary import FIRST_ID

_KINDS = ("feature", "pair")


def known_ids(table, combined):
    """Feature ids of combined values int64 (n,) in one template's table (``_template_tables``);
    -1 for a value the index lacks."""
    direct, slot_keys, slot_ids = table
    if len(direct) == 0:
        return keys.lookup(slot_keys, slot_ids, combined)
    out = np.full(len(combined), -1, dtype=np.int64)
    inside = combined < len(direct)
    out[inside] = direct[combined[inside]]
    return out


class IndexGrowth:
    """``extend`` of ``encode.FeatureEncoder`` (which sets the templates, vocabularies, keys and tables)."""

    def extend(self, corpus):
        """Encode a training corpus for continued training, adding what the index lacks.

        Values the vocabularies have not seen are appended to them (``word_counts_`` adds this
        corpus's counts), and the emission and pair features the index lacks take the ids after
        the existing ones, in first-seen order: every existing id keeps its meaning, so a model's
        weights stay valid (``LinearChainModel.grow`` gives the new ids zero weights). A new feature
        is added when seen ``min_count`` times in this corpus (the counts of earlier training are
        not kept); an existing one stays whatever its count here. Under hashing, the hashed ids
        fired here that the index lacks are added.
        Gold labels are ids into ``labels_`` (append new labels first; -1 for a label it lacks).
        """
        return self._encode(corpus, True, grow=True)

    def _templates_of(self, kind):
        return self._emission_templates if kind == "feature" else self._pair_templates

    def _grow_vocabularies(self, corpus):
        """``_field_values`` of a corpus, adding its new values; the stored keys of the exact index
        are re-expressed in the grown radices, under hashing the radices stay as they were."""
        before = {f: self._radix(f) for f in self.vocabularies_}
        saved = dict(self.vocabularies_), self.__dict__.get("word_counts_")
        values, rare = self._field_values(corpus, fit=False, extend=True)
        for cache in ("_index_cache", "_attribute_cache", "_tables"):
            self.__dict__.pop(cache, None)
        grown = {f: len(v) + FIRST_ID for f, v in self.vocabularies_.items()}
        if self.hash_bits is not None:
            if grown != before:
                self.__dict__.setdefault("key_radices_", before)
            return values, rare
        try:
            for kind in _KINDS:
                self._check_width(self._templates_of(kind))
        except ConfigError:
            self.vocabularies_ = saved[0]
            if saved[1] is not None:
                self.word_counts_ = saved[1]
            raise
        for kind in _KINDS:
            templates = self._templates_of(kind)
            parts = [p for t in templates for p in t.parts]
            if parts:
                starts = np.cumsum([0] + [len(t.parts) for t in templates]).astype(np.int64)
                old = np.array([before[f] for f, _ in parts], dtype=np.int64)
                new = np.array([grown[f] for f, _ in parts], dtype=np.int64)
                setattr(self, f"{kind}_keys_", keys.rekey(getattr(self, f"{kind}_keys_"), starts, old, new))
        return values, rare

    def _grow_index(self, kind, templates, values, rare, sentence_offsets):
        """(CSR offsets, feature ids) of the corpus, the features of `kind` it adds appended to the index."""
        row_offsets, ids, added = self._intern(templates, values, rare, sentence_offsets, grow=kind)
        self._append_keys(kind, added)
        return row_offsets, ids

    def _add_buckets(self, templates, ids):
        """Hashing: append to the kept hashed ids those that ids (int32 (n_templates, n_tokens), -1
        gaps) fires at least min_count times and the index lacks, in ascending order."""
        kind = "feature" if templates is self._emission_templates else "pair"
        counts = np.bincount(ids[ids >= 0], minlength=1 << self.hash_bits)
        counts[getattr(self, f"{kind}_keys_")] = 0
        self._append_keys(kind, np.flatnonzero(counts >= max(self.min_count, 1)))

    def _append_keys(self, kind, added):
        if len(added):
            setattr(self, f"{kind}_keys_", np.concatenate([getattr(self, f"{kind}_keys_"), added]))
            self.__dict__.get("_tables", {}).pop(kind, None)
