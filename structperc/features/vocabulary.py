"""Vocabularies: string values of the corpus columns and word attributes become integer value ids.

Value ids are 0 (``UNKNOWN``) for a value unseen in training, 1 and 2 (``LEFT``, ``RIGHT``) for the
sentence boundaries, then ``FIRST_ID``, ``FIRST_ID`` + 1, ... for the vocabulary in first-seen order.
Strings are interned once per distinct value, and word attributes are computed once per distinct word.
"""
import numpy as np

from structperc.features import lexicon
from structperc.utils.interning import Interner, intern_column


UNKNOWN, LEFT, RIGHT, FIRST_ID = 0, 1, 2, 3
# a corpus with more distinct words than 1/_ATTRIBUTE_TABLE_SHARE of the vocabulary reads the
# attributes of known words from a table over the vocabulary
_ATTRIBUTE_TABLE_SHARE = 4
# how many unseen words' attribute rows a fitted encoder keeps between transforms (``_unseen_attributes``)
_UNSEEN_KEPT = 1 << 16



class _VocabIndex(dict):
    """value -> model id, UNKNOWN for a value the vocabulary does not hold."""

    def __missing__(self, key):
        return UNKNOWN



class FieldValues:
    """The value-id half of ``encode.FeatureEncoder``: ``vocabularies_`` (field -> distinct values),
    ``word_counts_``, and the value ids of a corpus. The encoder sets ``fields_``, ``_needs_word``,
    ``_attributes``, ``_lexicon_fields``, ``lexicons`` and ``rare_threshold``."""

    def _field_values(self, corpus, fit, extend=False):
        """Per field, value ids per token (an integer array (n_tokens,)); learns vocabularies when fit; when
        extend, appends the values the vocabularies lack (known values keep their ids) and adds
        the corpus's word counts to ``word_counts_`` (continued training; the caller drops the
        lookup caches, ``_index_cache`` and ``_attribute_cache``, built over the old vocabularies).

        Columns are read once each; word attributes are computed once per distinct word and
        gathered by word id."""
        learn = fit or extend
        values = {}
        base = {f for f in self.fields_ if f not in self._attributes}
        if self._needs_word:
            base.add("word")
        # gazetteer fields (lexicons with multi-word entries) depend on the context, not the word alone
        phrases = self._phrase_fields()
        attributes = self.word_attributes()
        word_local = word_distinct = None
        for field in sorted(base):
            column = corpus.columns[field]
            if learn or (field == "word" and attributes):
                local, distinct = intern_column(column)
                if field == "word":
                    word_local, word_distinct = local, distinct
                if learn:
                    values[field] = self._map_distinct(field, local, distinct, fit, extend)
                else:
                    index = self._vocab_index(field)
                    word_model = np.fromiter(map(index.__getitem__, distinct), dtype=np.int64, count=len(distinct))
                    values[field] = word_model[local]
            else:
                index = self._vocab_index(field)
                values[field] = np.fromiter(map(index.__getitem__, column), dtype=np.int64, count=len(column))
        if not attributes:
            pass
        elif learn or not self._reads_attribute_table(attributes, len(word_distinct)):
            for field in attributes:
                fn = self._attribute_fn(field)
                attr_local, attr_distinct = intern_column([fn(w) for w in word_distinct])
                values[field] = self._map_distinct(field, attr_local[word_local], attr_distinct, fit, extend)
        else:
            # known words read all their attributes from one table over the vocabulary (built once);
            # only unseen words compute them
            per_distinct = self._attribute_matrix(attributes)[word_model]
            unseen = np.flatnonzero(word_model == UNKNOWN).tolist()
            if unseen:
                per_distinct[unseen] = self._unseen_attributes(attributes, [word_distinct[i] for i in unseen])
            per_token = per_distinct.T[:, word_local]
            for k, field in enumerate(attributes):
                values[field] = per_token[k]
        for field in phrases:
            column = lexicon.phrase_values(field, self.lexicons, corpus.columns["word"], corpus.sentence_offsets)
            local, distinct = intern_column(column)
            values[field] = self._map_distinct(field, local, distinct, fit, extend)
        rare = None
        if self._needs_word:
            word_ids = values["word"]
            if learn:
                counts = np.bincount(word_ids, minlength=len(self.vocabularies_["word"]) + FIRST_ID)[FIRST_ID:]
                if extend:
                    counts[: len(self.word_counts_)] += self.word_counts_
                self.word_counts_ = counts.astype(np.int64)
            rare = self._rare_words(learn)[word_ids]
        return values, rare

    def _map_distinct(self, field, local_ids, distinct, fit, extend=False):
        if fit:
            self.vocabularies_[field] = list(distinct)
            return local_ids + FIRST_ID
        if extend:
            # the vocabulary, then the new values in first-seen order (a new list: the old one is unchanged)
            vocab = self.vocabularies_[field]
            interner = Interner(zip(vocab, range(len(vocab))))
            model_ids = np.fromiter(map(interner.__getitem__, distinct), dtype=np.int64, count=len(distinct))
            self.vocabularies_[field] = list(interner)
            return model_ids[local_ids] + FIRST_ID
        index = self._vocab_index(field)
        model_ids = np.fromiter(map(index.__getitem__, distinct), dtype=np.int64, count=len(distinct))
        return model_ids[local_ids]

    def word_attributes(self):
        """The attribute fields read from the word alone (gazetteer fields of multi-word entries depend
        on the context, and are not among them)."""
        phrases = self._phrase_fields()
        return [f for f in self.fields_ if f in self._attributes and f not in phrases]

    def _phrase_fields(self):
        """The gazetteer fields whose lexicons hold multi-word entries."""
        return [f for f in self._lexicon_fields if lexicon.has_phrases(f, self.lexicons)]

    def _reads_attribute_table(self, fields, n_distinct):
        """Whether ``_field_values`` reads the attributes of known words from ``_attribute_matrix``: when
        it is built (``prepare_attributes``), or for a corpus with more distinct words than
        1/_ATTRIBUTE_TABLE_SHARE of the vocabulary, for which building it costs less than computing."""
        built = tuple(fields) in self.__dict__.get("_attribute_cache", {})
        return built or n_distinct * _ATTRIBUTE_TABLE_SHARE >= len(self.vocabularies_["word"])

    def prepare_attributes(self):
        """Build the table of the vocabulary's word attributes ahead of the first transform, so that
        every later transform, however small, reads known words' attributes from it."""
        fields = self.word_attributes()
        if fields:
            self._attribute_matrix(fields)

    def _attribute_matrix(self, fields):
        """int32 (n_words + FIRST_ID, len(fields)): model ids of the attributes ``fields`` of each vocabulary
        word, the row of a word its model id (UNKNOWN and the boundaries: UNKNOWN)."""
        cache = self.__dict__.setdefault("_attribute_cache", {})
        key = tuple(fields)
        if key not in cache:
            words = self.vocabularies_["word"]
            table = np.full((len(words) + FIRST_ID, len(fields)), UNKNOWN, dtype=np.int32)
            for k, field in enumerate(fields):
                index, fn = self._vocab_index(field), self._attribute_fn(field)
                table[FIRST_ID:, k] = np.fromiter((index[fn(w)] for w in words), dtype=np.int32, count=len(words))
            cache[key] = table
        return cache[key]

    def _unseen_attributes(self, fields, words):
        """The model ids of the attributes ``fields`` of each of ``words`` (words the vocabulary lacks), as
        rows; each word's row is kept for the next transforms, up to _UNSEEN_KEPT words (then they are
        all let go), so that the unseen words that come again (names, numbers) are computed once."""
        cache = self.__dict__.setdefault("_attribute_cache", {})
        kept = cache.setdefault(("unseen", *fields), {})
        rows, lookups = [], None
        for word in words:
            row = kept.get(word)
            if row is None:
                if lookups is None:
                    lookups = [(self._vocab_index(field), self._attribute_fn(field)) for field in fields]
                if len(kept) >= _UNSEEN_KEPT:
                    kept.clear()
                row = kept[word] = [index[fn(word)] for index, fn in lookups]
            rows.append(row)
        return rows

    def _rare_words(self, learn):
        """bool (n_words + FIRST_ID,): whether each model word id is rare (seen fewer than
        ``rare_threshold`` times in training; an unknown word is), kept between transforms."""
        cache = self.__dict__.setdefault("_index_cache", {})  # beside the fields' indexes, under a key no field has
        if learn or ("rare",) not in cache:
            known_counts = np.concatenate([np.zeros(FIRST_ID, dtype=np.int64), self.word_counts_])
            cache["rare",] = known_counts < self.rare_threshold
        return cache["rare",]

    def _vocab_index(self, field):
        cache = self.__dict__.setdefault("_index_cache", {})
        if field not in cache:
            vocab = self.vocabularies_[field]
            cache[field] = _VocabIndex(zip(vocab, range(FIRST_ID, FIRST_ID + len(vocab))))
        return cache[field]
