"""Interning and feature indexing: a column-wise corpus becomes flat integer arrays.

Strings are interned once per distinct value: each column is mapped to integer ids through a dict over its distinct
values, word attributes are computed once per distinct word, and from then on everything is numpy or numba. A template
instance is the integer

    key = template_index + n_templates * (v_1 + R_1 * (v_2 + R_2 * (...)))

where v_k is the id of part k's value and R_k the size of its field's id space. Value ids are 0 for a value unseen in
training, 1 and 2 for the left and right sentence boundary, then 3, 4, ... for the vocabulary. Keys are computed in
numba, one template at a time, and map to feature ids through that template's table (a direct array over its combined
values when their range is small, else a hash table: ``lookup.IndexLookup``), or, with feature hashing, through a hash
of the key. A corpus is stored as CSR arrays (token offsets, feature ids).

Continued training grows the index (``growth.IndexGrowth.extend``): new features take the ids after the existing ones.
"""
import numpy as np

from structperc.features import lexicon
from structperc.utils import heap
from structperc._kernels.encode import keys
from structperc._kernels.threads import over_items
from structperc.features.encoded import EncodedCorpus, no_rows
from structperc.features.growth import IndexGrowth, known_ids
from structperc.features.lookup import IndexLookup, use_direct
from structperc.errors import ConfigError
from structperc.features.templates import ATTRIBUTES, column_error, load_templates, parse_template
from structperc.features.vocabulary import FIRST_ID, LEFT, RIGHT, UNKNOWN, FieldValues
from structperc.utils.interning import Index, intern_column

_MAX_KEY = 2**62
_MAX_HASH_BITS = 40
_EMPTY = np.zeros(0, dtype=np.int64)
_NO_IDS = np.zeros(0, dtype=np.int32)


class _ValueTable(dict):
    """Field -> value ids (n_tokens,), each a row of one int32 matrix (fields sorted), so that
    templates reading every field take the matrix as it is rather than a copy of the rows."""

    @classmethod
    def pack(cls, values):
        fields = sorted(values)
        table = cls()
        table.fields = fields
        table.matrix = np.empty((len(fields), len(values[fields[0]]) if fields else 0), dtype=np.int32)
        for r, f in enumerate(fields):
            table.matrix[r] = values.pop(f)  # one field's own array freed at a time
            table[f] = table.matrix[r]
        return table


class FeatureEncoder(FieldValues, IndexLookup, IndexGrowth):
    """Maps corpora to feature ids; learns vocabularies and the feature index from training data.

    Parameters
    ----------
    templates : preset name, template file, or list of template strings
    min_count : drop features seen fewer than this many times in training (Collins' cc)
    rare_threshold : a word seen fewer times than this in training is rare (for ``@rare`` templates)
    hash_bits : None for an exact feature index (a dictionary of the template keys seen in
        training); an integer B for feature hashing: a key's feature id is ``mix64(key) mod 2**B``
        (Weinberger et al. 2009), so any process can encode any shard without the dictionary.
        With hashing, min_count applies to each id's total count.
    lexicons : None or dict name -> ``lexicon.Lexicon``: the lexicon fields ``NAME[k]`` and
        ``NAME.pK[k]`` (see ``structperc.features.lexicon``); the model stores the lexicons its templates use.

    Attributes (hashing)
    --------------------
    hash_stats_ : dict with ``keys`` (distinct template keys seen in training), ``ids`` (distinct
        feature ids they hash to) and ``collision_rate`` = 1 - ids / keys.
    """

    def __init__(self, templates="chunk", min_count=0, rare_threshold=5, hash_bits=None, lexicons=None):
        self.templates = templates
        self.lexicons = lexicons
        self.min_count = min_count
        self.rare_threshold = rare_threshold
        self.hash_bits = hash_bits

    # ---------------------------------------------------------------- setup
    def _parse(self, columns=None):
        """Parse the templates; columns: those of the training input, which decide the optional
        templates (``?``) kept (None: all are kept, as a fitted encoder's own list is)."""
        if self.hash_bits is not None and not (isinstance(self.hash_bits, (int, np.integer))
                                               and 1 <= self.hash_bits <= _MAX_HASH_BITS):
            raise ConfigError(f"hash_bits must be an integer from 1 to {_MAX_HASH_BITS}, got {self.hash_bits!r}")
        parsed = load_templates(self.templates)
        if columns is not None and any(t.optional for t in parsed):
            derived = lexicon.lexicon_fields(sorted({f for t in parsed for f in t.fields}), self.lexicons or {})
            parsed = load_templates(self.templates, columns, derived)
        self.template_strings_ = [str(t) for t in parsed]
        self._emission_templates = [t for t in parsed if not t.pair]
        self._pair_templates = [t for t in parsed if t.pair]
        fields = set()
        for t in parsed:
            fields |= t.fields
        self.fields_ = sorted(fields)
        # word attributes: the built-in ones and the lexicon fields
        self._lexicon_fields = lexicon.lexicon_fields(self.fields_, self.lexicons or {})
        self._attributes = {f for f in fields if f in ATTRIBUTES} | set(self._lexicon_fields)
        self._needs_word = bool(self._attributes) or any(t.rare_only for t in parsed)

    def _attribute_fn(self, field):
        if field in ATTRIBUTES:
            return ATTRIBUTES[field]
        return lexicon.attribute_function(field, self.lexicons)

    def _check_columns(self, corpus):
        """ConfigError when a template reads the label column (the gold label, which a feature may not
        see) or a column the input lacks; the message says which columns the templates need, which
        the input has, which is the label, and the presets that read only the other columns."""
        needed = {f for f in self.fields_ if f not in self._attributes}
        if self._needs_word:
            needed.add("word")
        label = corpus.label
        if not (label is not None and label in needed) and needed <= set(corpus.columns):
            return
        leaking = None
        if label is not None and label in needed:
            leaking = next((str(t) for t in self._emission_templates + self._pair_templates if label in t.fields),
                           None)
            if leaking is None:  # the word is the label, and an attribute or an @rare template reads it
                leaking = next(str(t) for t in self._emission_templates + self._pair_templates
                               if t.fields & self._attributes or t.rare_only)
        raise column_error(corpus.path, needed, list(corpus.columns), label, leaking, raw=corpus.format == "raw")

    # ---------------------------------------------------------------- keys
    def _radix(self, field):
        frozen = self.__dict__.get("key_radices_")
        return frozen[field] if frozen else len(self.vocabularies_[field]) + FIRST_ID

    def _space(self, template):
        """Number of distinct combined values of a template."""
        space = 1
        for field, _ in template.parts:
            space *= self._radix(field)
        return space

    def _check_width(self, templates):
        for t in templates:
            if len(templates) * self._space(t) >= _MAX_KEY:
                raise ConfigError(f"template {str(t)!r} combines too many distinct values to index")

    def _spec(self, templates, values, rare, n_tokens, kind=None):
        """(TemplateTable, values int32 (n_fields, n_tokens), rare bool (n_tokens,)) for the kernels.
        kind : "feature" or "pair" when the index is fitted and stays as it is (a lookup), so that the
        TemplateTable is built once; None while the vocabularies grow."""
        tables = self.__dict__.setdefault("_tables", {}) if kind is not None else {}
        spec, fields = tables.get(("spec", kind), (None, None))
        if fields is None:
            fields = sorted({f for t in templates for f in t.fields})
        if fields and isinstance(values, _ValueTable) and values.fields == fields:
            matrix = values.matrix  # the templates read every field: no copy
        else:
            matrix = np.empty((len(fields), n_tokens), dtype=np.int32)
            for r, f in enumerate(fields):
                matrix[r] = values[f]
        if spec is None:
            row = {f: r for r, f in enumerate(fields)}
            parts = [p for t in templates for p in t.parts]
            spec = keys.TemplateTable(
                np.cumsum([0] + [len(t.parts) for t in templates]).astype(np.int64),
                np.array([row[f] for f, _ in parts], dtype=np.int64),
                np.array([o for _, o in parts], dtype=np.int64),
                np.array([self._radix(f) for f, _ in parts], dtype=np.int64),
                np.array([t.rare_only for t in templates], dtype=np.bool_),
            )
            if kind is not None:
                tables["spec", kind] = spec, fields
        return spec, matrix, (np.zeros(n_tokens, dtype=np.bool_) if rare is None else rare)

    def _keys(self, templates, values, rare, sentence_offsets):
        """int64 (n_tokens, n_templates): template keys, -1 where a template does not fire."""
        spec, matrix, rare = self._spec(templates, values, rare, int(sentence_offsets[-1]))
        out = np.empty((len(templates), matrix.shape[1]), dtype=np.int64)
        for j in range(len(templates)):
            keys.template_keys(spec, j, matrix, np.asarray(sentence_offsets, dtype=np.int64), rare, out)
        return out.T

    def _intern(self, templates, values, rare, sentence_offsets, grow=None, threads=1):
        """Learn the feature index of `templates` from training data, or with grow="feature" or
        "pair", add to that index the features it lacks (ids after its own; ``extend``).
        ``threads`` threads intern the templates (each its own row; the result does not depend on
        the number of threads).

        Returns (CSR offsets, feature ids, feature keys in id order: all, or the added ones)."""
        spec, matrix, rare = self._spec(templates, values, rare, int(sentence_offsets[-1]))
        n_tokens, m = matrix.shape[1], len(templates)
        # token-major, so that number_features leaves the corpus's feature ids in this same buffer
        local = np.empty((n_tokens, m), dtype=np.int32).T

        def intern(j, matrix):
            space = self._space(templates[j])
            direct = space if use_direct(space, n_tokens) else 0
            return keys.intern_template(spec, j, matrix, sentence_offsets, rare, direct, local, j)

        interned = [None] * m  # each template on the shared threads (``_kernels.threads``), the result in its row
        def intern_range(lo, hi, matrix=matrix, rows=interned):
            for j in range(lo, hi):
                rows[j] = intern(j, matrix)
        over_items(intern_range, m, chunks_per_thread=1, threads=max(1, int(threads)))
        del intern_range  # it holds the matrix, freed below
        starts, counts, combined, first, known = [0], [], [], [], []
        tables = self._template_tables(grow) if grow else None
        for j, (distinct, count, first_token) in enumerate(interned):
            starts.append(starts[-1] + len(distinct))
            counts.append(count)
            first.append(first_token)
            combined.append(j + m * distinct)
            if grow:
                known.append(known_ids(tables[j], distinct))
        del matrix, interned
        counts = np.concatenate(counts) if counts else _EMPTY
        template_keys = np.concatenate(combined) if combined else _EMPTY
        first = np.concatenate(first) if first else _EMPTY
        # counts are this corpus's: a new feature is kept when seen min_count times in it
        keep = counts >= max(self.min_count, 1)
        known = np.concatenate(known) if known else _EMPTY
        if grow:
            keep &= known < 0
        first_new = len(getattr(self, f"{grow}_keys_")) if grow else 0
        offsets, ids, kept = keys.number_features(local, np.array(starts, dtype=np.int64), keep, template_keys,
                                                  first, known, first_new)
        # the ids fill the start of local's buffer; templates that did not fire (rare-word ones,
        # those past a sentence's end) leave its tail unused: shrink the buffer in place (realloc)
        owner = local.base
        if owner is not None and owner.flags.owndata and len(ids) and ids.ctypes.data == owner.ctypes.data:
            n_ids = len(ids)
            del ids, local, intern
            owner.resize(n_ids, refcheck=False)  # no view of the buffer is left
            ids = owner
        return offsets, ids, kept

    def _hash(self, templates, values, rare, sentence_offsets, fit, grow=False):
        """Hashed feature ids of `templates`: (CSR offsets, feature ids, (distinct keys, distinct ids)),
        the counts for the collision rate in training only (else None). grow: add the hashed ids
        this corpus fires that the index lacks (``_add_buckets``)."""
        if not templates:
            return no_rows(sentence_offsets), _NO_IDS, ((0, 0) if fit else None)
        spec, matrix, rare = self._spec(templates, values, rare, int(sentence_offsets[-1]))
        n_tokens, m = matrix.shape[1], len(templates)
        ids = np.empty((m, n_tokens), dtype=np.int32)
        scratch = np.empty((1, n_tokens if fit else 0), dtype=np.int32)
        n_keys = 0
        for j, t in enumerate(templates):
            keys.hash_template(spec, j, matrix, sentence_offsets, rare, self.hash_bits, ids)
            if fit:
                # distinct keys of template j (only counted: ids do not need the dictionary)
                space = self._space(t)
                direct = space if use_direct(space, n_tokens) else 0
                n_keys += len(keys.intern_template(spec, j, matrix, sentence_offsets, rare, direct, scratch, 0)[0])
        if not fit:
            if grow:
                self._add_buckets(templates, ids)
            return (*keys.columns_to_csr(ids, self._bucket_remap(templates)), None)
        fired = ids.ravel()
        counts = np.bincount(fired[fired >= 0], minlength=1 << self.hash_bits)
        remap = _EMPTY
        if self.min_count > 1:
            remap = np.where(counts >= self.min_count, np.arange(len(counts)), -1)
        return (*keys.columns_to_csr(ids, remap), (n_keys, int(np.count_nonzero(counts))))

    # ---------------------------------------------------------------- public
    def fit_transform(self, corpus, labels=None, release=False, threads=1):
        """Learn vocabularies and the feature index from a training corpus; encode it.

        labels : list of str, the gold label of every token (None: the corpus's label column).
        release : the corpus belongs to the caller alone (``Tagger.fit_file``): its string columns
            are emptied as soon as their value ids are known, before the feature ids take their
            memory (the corpus is unusable afterwards). Pass labels=None then, so that no caller
            holds the label column.
        threads : threads that intern the templates (``_intern``); the encoding is the same for any.
        """
        if labels is None:
            labels = corpus.columns[corpus.label]
        self._parse(corpus.columns)
        self._check_columns(corpus)
        self.vocabularies_ = {}
        for cache in ("_index_cache", "_attribute_cache", "_tables", "key_radices_"):
            self.__dict__.pop(cache, None)
        # labels are numbered in sorted order: intern them in one pass, then renumber the distinct ones
        local, distinct = intern_column(labels)
        self.labels_ = sorted(distinct)
        rank = {label: i for i, label in enumerate(self.labels_)}
        gold = np.array([rank[label] for label in distinct], dtype=np.int64)[local]
        del local, labels
        values, rare = self._field_values(corpus, fit=True)
        values = _ValueTable.pack(values)
        if release:
            corpus.columns.clear()
            corpus.line_numbers = np.zeros(0, dtype=np.int64)
            heap.trim()
        self._check_width(self._emission_templates)
        self._check_width(self._pair_templates)
        offsets = corpus.sentence_offsets.astype(np.int64)
        out = []
        n_keys = n_ids = 0
        for kind, templates in (("feature", self._emission_templates), ("pair", self._pair_templates)):
            if not templates:
                row_offsets, ids, kept = no_rows(offsets), _NO_IDS, _EMPTY
            elif self.hash_bits is None:
                row_offsets, ids, kept = self._intern(templates, values, rare, offsets, threads=threads)
            else:
                row_offsets, ids, (kind_keys, kind_ids) = self._hash(templates, values, rare, offsets, fit=True)
                n_keys, n_ids = n_keys + kind_keys, n_ids + kind_ids
                # every id is a feature until pruning: the kept "keys" are the ids themselves
                kept = np.arange(1 << self.hash_bits if templates else 0, dtype=np.int64)
            setattr(self, f"{kind}_keys_", kept)
            out.append((row_offsets, ids))
        if self.hash_bits is not None:
            self.hash_stats_ = {"keys": n_keys, "ids": n_ids, "collision_rate": 1.0 - n_ids / n_keys if n_keys else 0.0}
        # a copy of the word row: a view would keep the whole value matrix alive through training
        words = values.get("word")
        return EncodedCorpus(offsets, *out[0], *out[1], gold, None if words is None else words.copy())

    def label_ids(self, labels):
        index = Index(zip(self.labels_, range(len(self.labels_))))
        return np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=len(labels))

    def drop_features(self, keep, keep_pair):
        """Keep only the features where the boolean masks are True (ids are renumbered in order)."""
        self.feature_keys_ = self.feature_keys_[keep]
        self.pair_keys_ = self.pair_keys_[keep_pair]
        self.__dict__.pop("_tables", None)

    def prepare(self):
        """Build the lookup tables (feature index, vocabularies) and load the lookup kernels ahead
        of the first transform."""
        if not hasattr(self, "_emission_templates"):
            self._parse()
        for kind, templates in (("feature", self._emission_templates), ("pair", self._pair_templates)):
            if self.hash_bits is None:
                self._template_tables(kind)
            else:
                self._bucket_remap(templates)
        for field in self.vocabularies_:
            self._vocab_index(field)
        self.prepare_attributes()
        # one token through the kernels loads them
        spec = keys.TemplateTable(np.zeros(2, dtype=np.int64), _EMPTY, _EMPTY, _EMPTY, np.zeros(1, dtype=np.bool_))
        one = np.zeros((0, 1), dtype=np.int32)
        sentence = np.array([0, 1], dtype=np.int64)
        rare = np.zeros(1, dtype=np.bool_)
        if self.hash_bits is None:
            keys.lookup_rows(spec, one, sentence, rare, keys.IdTables(np.zeros(1, dtype=np.int64), np.array([0, 1]),
                                                                       _EMPTY, _EMPTY, np.zeros(2, dtype=np.int64)))
        else:
            out = np.zeros((1, 1), dtype=np.int32)
            keys.hash_template(spec, 0, one, sentence, rare, self.hash_bits, out)
            keys.columns_to_csr(out, _EMPTY)

    def transform(self, corpus, with_labels=True):
        """Encode a corpus with the learned index; unseen values and features are dropped."""
        return self._encode(corpus, with_labels, grow=False)

    def _encode(self, corpus, with_labels, grow):
        if not hasattr(self, "_emission_templates"):
            self._parse()
        self._check_columns(corpus)
        values, rare = self._grow_vocabularies(corpus) if grow else self._field_values(corpus, fit=False)
        offsets = corpus.sentence_offsets.astype(np.int64)
        out = []
        for kind, templates in (("feature", self._emission_templates), ("pair", self._pair_templates)):
            if not templates:
                out.append((no_rows(offsets), _NO_IDS))
            elif self.hash_bits is not None:
                out.append(self._hash(templates, values, rare, offsets, fit=False, grow=grow)[:2])
            elif grow:
                out.append(self._grow_index(kind, templates, values, rare, offsets))
            else:
                out.append(self._lookup(kind, templates, values, rare, offsets))
        gold = None
        if with_labels and corpus.label is not None:
            gold = self.label_ids(corpus.columns[corpus.label])
        return EncodedCorpus(offsets, *out[0], *out[1], gold, values.get("word"))

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
        lexicon_arrays, lexicon_meta = lexicon.state(self.lexicons, self._lexicon_fields)
        arrays.update(lexicon_arrays)
        meta = {
            "templates": self.template_strings_,
            "min_count": self.min_count,
            "rare_threshold": self.rare_threshold,
            "labels": self.labels_,
            "fields": sorted(self.vocabularies_),
        }
        if lexicon_meta:
            meta["lexicons"] = lexicon_meta
        if self.hash_bits is not None:
            # with hashing, feature_keys and pair_keys hold the hashed ids that were kept
            meta["hash_bits"] = int(self.hash_bits)
            meta["hash_stats"] = getattr(self, "hash_stats_", None)
            if "key_radices_" in self.__dict__:  # the index was grown (``extend``)
                meta["key_radices"] = {f: int(r) for f, r in self.key_radices_.items()}
        return arrays, meta

    @classmethod
    def from_state(cls, arrays, meta):
        """The fitted encoder that ``state()`` gave ``arrays`` and ``meta`` of."""
        return cls(templates=meta["templates"], min_count=meta["min_count"], rare_threshold=meta["rare_threshold"],
                   hash_bits=meta.get("hash_bits"),
                   lexicons=lexicon.from_state(arrays, meta.get("lexicons", {}))).load_state(arrays, meta)

    def load_state(self, arrays, meta):
        """Take the fitted index of ``state()`` (labels, vocabularies, feature keys); returns self."""
        self._parse()
        self.labels_ = list(meta["labels"])
        self.vocabularies_ = {f: arrays[f"vocab__{f}"].tolist() for f in meta["fields"]}
        self.feature_keys_, self.pair_keys_ = (arrays[k].astype(np.int64) for k in ("feature_keys", "pair_keys"))
        for name in ("hash_stats", "key_radices"):  # recorded when hashed, and when the index was grown
            if meta.get(name) is not None:
                setattr(self, f"{name}_", dict(meta[name]))
        if self._needs_word:
            self.word_counts_ = arrays["word_counts"].astype(np.int64)
        return self

    # ---------------------------------------------------------------- explain
    def describe_feature(self, feature_id, pair=False):
        """Readable form of a feature, e.g. ``w[-1]|w[0]=of|the`` (``#hash=1234`` under hashing,
        whose ids name no single key)."""
        keys_ = self.pair_keys_ if pair else self.feature_keys_
        if self.hash_bits is not None:
            return f"#hash={int(keys_[feature_id])}"
        templates = self._pair_templates if pair else self._emission_templates
        key = int(keys_[feature_id])
        j, combined = key % len(templates), key // len(templates)
        t = templates[j]
        digits = []
        for field, _ in t.parts:
            digits.append(combined % self._radix(field))
            combined //= self._radix(field)
        shown = []
        for (field, _), v in zip(t.parts, digits):
            boundary = {UNKNOWN: "<unk>", LEFT: "<s>", RIGHT: "</s>"}.get(v)
            shown.append(boundary or self.vocabularies_[field][v - FIRST_ID])
        # parts were combined last-to-first, so digits come out first-to-last
        return f"{t}={'|'.join(shown)}" if t.parts else str(t)


__all__ = ["EncodedCorpus", "FeatureEncoder", "FIRST_ID", "UNKNOWN", "parse_template"]
