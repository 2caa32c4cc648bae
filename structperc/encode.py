"""Interning and feature indexing: a column-wise corpus becomes flat integer arrays.

Strings are interned once per distinct value: each column is mapped to integer ids through a dict
over its distinct values, word attributes are computed once per distinct word, and from then on
everything is numpy or numba. A template instance is the integer

    key = template_index + n_templates * (v_1 + R_1 * (v_2 + R_2 * (...)))

where v_k is the id of part k's value and R_k the size of its field's id space. Value ids are
0 for a value unseen in training, 1 and 2 for the left and right sentence boundary, then 3, 4, ...
for the vocabulary. Keys map to feature indices through a numba hash table; a corpus is stored as
CSR arrays (token offsets, feature ids).
"""
from dataclasses import dataclass

import numpy as np

from ._kernels import hashing
from .errors import ConfigError
from .templates import ATTRIBUTES, load_templates, parse_template

UNKNOWN, LEFT, RIGHT, FIRST_ID = 0, 1, 2, 3
_MAX_KEY = 2**62
_KEEP_IDS = np.zeros(0, dtype=np.int64)


@dataclass
class EncodedCorpus:
    """Integer view of a corpus.

    sentence_offsets : int64 (n_sentences + 1,)
    feature_offsets : int64 (n_tokens + 1,); feature_ids : int64 (nnz,)  emission features per token
    pair_offsets : int64 (n_tokens + 1,); pair_ids : int64 (nnz_pair,)   label-pair features per token
    labels : int64 (n_tokens,) gold label ids (-1 for a label the model does not know) or None
    """

    sentence_offsets: np.ndarray
    feature_offsets: np.ndarray
    feature_ids: np.ndarray
    pair_offsets: np.ndarray
    pair_ids: np.ndarray
    labels: np.ndarray | None
    word_ids: np.ndarray | None = None

    @property
    def n_sentences(self):
        return len(self.sentence_offsets) - 1

    @property
    def n_tokens(self):
        return int(self.sentence_offsets[-1])


class _Index(dict):
    """value -> id, with -1 for a value it does not hold (``__missing__`` keeps lookups in C)."""

    def __missing__(self, key):
        return -1


def _intern_column(values):
    """(ids int64 (n,), distinct values in first-seen order)."""
    distinct = list(dict.fromkeys(values))
    index = dict(zip(distinct, range(len(distinct))))
    ids = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return ids, distinct


class FeatureEncoder:
    """Maps corpora to feature ids; learns vocabularies and the feature index from training data.

    Parameters
    ----------
    templates : preset name, template file, or list of template strings
    min_count : drop features seen fewer than this many times in training (Collins' cc)
    rare_threshold : a word seen fewer times than this in training is rare (for ``@rare`` templates)
    """

    def __init__(self, templates="chunk", min_count=0, rare_threshold=5):
        self.templates = templates
        self.min_count = min_count
        self.rare_threshold = rare_threshold

    # ---------------------------------------------------------------- setup
    def _parse(self):
        parsed = load_templates(self.templates)
        self.template_strings_ = [str(t) for t in parsed]
        self._emission_templates = [t for t in parsed if not t.pair]
        self._pair_templates = [t for t in parsed if t.pair]
        fields = set()
        for t in parsed:
            fields |= t.fields
        self.fields_ = sorted(fields)
        self._needs_word = any(f in ATTRIBUTES for f in fields) or any(t.rare_only for t in parsed)

    def _check_columns(self, corpus):
        needed = {f for f in self.fields_ if f not in ATTRIBUTES}
        if self._needs_word:
            needed.add("word")
        missing = sorted(needed - set(corpus.columns))
        if missing:
            raise ConfigError(
                f"{corpus.path}: templates use column(s) {', '.join(missing)} but the input has "
                f"{', '.join(corpus.columns)} (name columns with --columns)"
            )

    # ---------------------------------------------------------------- values
    def _field_values(self, corpus, fit):
        """Per field, value ids per token (int64 (n_tokens,)); learns vocabularies when fit."""
        values = {}
        base = {f for f in self.fields_ if f not in ATTRIBUTES}
        word_local = word_distinct = None
        if self._needs_word:
            word_local, word_distinct = _intern_column(corpus.columns["word"])
        for field in sorted(base | ({"word"} if self._needs_word else set())):
            if field == "word" and word_local is not None:
                local, distinct = word_local, word_distinct
            else:
                local, distinct = _intern_column(corpus.columns[field])
            values[field] = self._map_distinct(field, local, distinct, fit)
        for field in self.fields_:
            if field in ATTRIBUTES:
                fn = ATTRIBUTES[field]
                attr_local, attr_distinct = _intern_column([fn(w) for w in word_distinct])
                values[field] = self._map_distinct(field, attr_local[word_local], attr_distinct, fit)
        rare = None
        if self._needs_word:
            word_ids = values["word"]
            if fit:
                counts = np.bincount(word_ids, minlength=len(self.vocabularies_["word"]) + FIRST_ID)
                self.word_counts_ = counts[FIRST_ID:].astype(np.int64)
            known_counts = np.concatenate([np.zeros(FIRST_ID, dtype=np.int64), self.word_counts_])
            rare = known_counts[word_ids] < self.rare_threshold
        return values, rare

    def _map_distinct(self, field, local_ids, distinct, fit):
        if fit:
            self.vocabularies_[field] = list(distinct)
            return local_ids + FIRST_ID
        index = self._vocab_index(field)
        get = index.get
        model_ids = np.fromiter((get(v, UNKNOWN) for v in distinct), dtype=np.int64, count=len(distinct))
        return model_ids[local_ids]

    def _vocab_index(self, field):
        cache = self.__dict__.setdefault("_index_cache", {})
        if field not in cache:
            cache[field] = {v: i + FIRST_ID for i, v in enumerate(self.vocabularies_[field])}
        return cache[field]

    # ---------------------------------------------------------------- keys
    def _radix(self, field):
        return len(self.vocabularies_[field]) + FIRST_ID

    def _check_width(self, templates):
        for t in templates:
            width = len(templates)
            for field, _ in t.parts:
                width *= self._radix(field)
            if width >= _MAX_KEY:
                raise ConfigError(f"template {str(t)!r} combines too many distinct values to index")

    def _keys(self, templates, values, rare, sentence_offsets):
        """int64 (n_tokens, n_templates): template keys, -1 where a template does not fire."""
        n_tokens = int(sentence_offsets[-1])
        keys = np.empty((n_tokens, len(templates)), dtype=np.int64)
        lengths = np.diff(sentence_offsets)
        starts = np.repeat(sentence_offsets[:-1], lengths)
        position = np.arange(n_tokens, dtype=np.int64) - starts
        length = np.repeat(lengths, lengths)
        shifted = {}
        for j, t in enumerate(templates):
            combined = np.zeros(n_tokens, dtype=np.int64)
            for field, offset in reversed(t.parts):
                if (field, offset) not in shifted:
                    target = position + offset
                    inside = (target >= 0) & (target < length)
                    source = np.clip(np.arange(n_tokens) + offset, 0, max(n_tokens - 1, 0))
                    shifted[field, offset] = np.where(
                        inside, values[field][source], np.where(target < 0, LEFT, RIGHT)
                    )
                combined = combined * self._radix(field) + shifted[field, offset]
            column = j + len(templates) * combined
            if t.rare_only:
                column = np.where(rare, column, -1)
            keys[:, j] = column
        return keys

    # ---------------------------------------------------------------- public
    def fit_transform(self, corpus, labels):
        """Learn vocabularies and the feature index from a training corpus; encode it.

        labels : list of str, the gold label of every token.
        """
        self._parse()
        self._check_columns(corpus)
        self.vocabularies_ = {}
        self.__dict__.pop("_index_cache", None)
        values, rare = self._field_values(corpus, fit=True)
        self._check_width(self._emission_templates)
        self._check_width(self._pair_templates)
        out = []
        self.feature_keys_, self.pair_keys_ = None, None
        for kind, templates in (("feature", self._emission_templates), ("pair", self._pair_templates)):
            keys = self._keys(templates, values, rare, corpus.sentence_offsets)
            ids, distinct, counts = hashing.intern(keys.ravel())
            shape = keys.shape
            del keys
            keep = counts >= max(self.min_count, 1)
            new_id = np.cumsum(keep) - 1
            new_id[~keep] = -1
            setattr(self, f"{kind}_keys_", distinct[keep])
            out.append(hashing.rows_to_csr(ids.reshape(shape), new_id))
            del ids
        self.__dict__.pop("_tables", None)
        self.labels_ = sorted(set(labels))
        return EncodedCorpus(
            corpus.sentence_offsets.astype(np.int64), *out[0], *out[1], self.label_ids(labels), values.get("word")
        )

    def label_ids(self, labels):
        index = _Index(zip(self.labels_, range(len(self.labels_))))
        return np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=len(labels))

    def _table(self, kind):
        tables = self.__dict__.setdefault("_tables", {})
        if kind not in tables:
            tables[kind] = hashing.build_table(getattr(self, f"{kind}_keys_"))
        return tables[kind]

    def drop_features(self, keep, keep_pair):
        """Keep only the features where the boolean masks are True (ids are renumbered in order)."""
        self.feature_keys_ = self.feature_keys_[keep]
        self.pair_keys_ = self.pair_keys_[keep_pair]
        self.__dict__.pop("_tables", None)

    def prepare(self):
        """Build the lookup tables (feature index, vocabularies) and load the lookup kernels ahead
        of the first transform."""
        for kind in ("feature", "pair"):
            hashing.lookup(*self._table(kind), np.full(1, -1, dtype=np.int64))
        hashing.rows_to_csr(np.full((1, 1), -1, dtype=np.int64), _KEEP_IDS)
        for field in self.vocabularies_:
            self._vocab_index(field)

    def transform(self, corpus, with_labels=True):
        """Encode a corpus with the learned index; unseen values and features are dropped."""
        if not hasattr(self, "_emission_templates"):
            self._parse()
        self._check_columns(corpus)
        values, rare = self._field_values(corpus, fit=False)
        out = []
        for kind, templates in (("feature", self._emission_templates), ("pair", self._pair_templates)):
            keys = self._keys(templates, values, rare, corpus.sentence_offsets)
            ids = hashing.lookup(*self._table(kind), keys.ravel()).reshape(keys.shape)
            out.append(hashing.rows_to_csr(ids, _KEEP_IDS))
        gold = None
        if with_labels and corpus.label is not None:
            gold = self.label_ids(corpus.columns[corpus.label])
        return EncodedCorpus(corpus.sentence_offsets.astype(np.int64), *out[0], *out[1], gold, values.get("word"))

    @property
    def n_features_(self):
        return len(self.feature_keys_)

    @property
    def n_pair_features_(self):
        return len(self.pair_keys_)

    # ---------------------------------------------------------------- persistence
    def state(self):
        """(arrays, metadata) fully describing the fitted encoder, without pickle."""
        arrays = {"feature_keys": self.feature_keys_, "pair_keys": self.pair_keys_}
        for field, vocab in self.vocabularies_.items():
            arrays[f"vocab__{field}"] = np.array(vocab, dtype=np.str_) if vocab else np.zeros(0, dtype="<U1")
        if self._needs_word:
            arrays["word_counts"] = self.word_counts_
        meta = {
            "templates": self.template_strings_,
            "min_count": self.min_count,
            "rare_threshold": self.rare_threshold,
            "labels": self.labels_,
            "fields": sorted(self.vocabularies_),
        }
        return arrays, meta

    @classmethod
    def from_state(cls, arrays, meta):
        enc = cls(templates=meta["templates"], min_count=meta["min_count"], rare_threshold=meta["rare_threshold"])
        enc._parse()
        enc.labels_ = list(meta["labels"])
        enc.vocabularies_ = {f: arrays[f"vocab__{f}"].tolist() for f in meta["fields"]}
        enc.feature_keys_ = arrays["feature_keys"].astype(np.int64)
        enc.pair_keys_ = arrays["pair_keys"].astype(np.int64)
        if enc._needs_word:
            enc.word_counts_ = arrays["word_counts"].astype(np.int64)
        return enc

    # ---------------------------------------------------------------- explain
    def describe_feature(self, feature_id, pair=False):
        """Readable form of a feature, e.g. ``w[-1]|w[0]=of|the``."""
        keys = self.pair_keys_ if pair else self.feature_keys_
        templates = self._pair_templates if pair else self._emission_templates
        key = int(keys[feature_id])
        j, combined = key % len(templates), key // len(templates)
        t = templates[j]
        digits = []
        for field, _ in t.parts:
            digits.append(combined % self._radix(field))
            combined //= self._radix(field)
        shown = []
        for (field, _), v in zip(t.parts, digits):
            shown.append({UNKNOWN: "<unk>", LEFT: "<s>", RIGHT: "</s>"}.get(v) or self.vocabularies_[field][v - FIRST_ID])
        # parts were combined last-to-first, so digits come out first-to-last
        return f"{t}={'|'.join(shown)}" if t.parts else str(t)


__all__ = ["EncodedCorpus", "FeatureEncoder", "parse_template"]
