"""Feature dicts (scikit-learn-crfsuite's input) as encoded corpora with real feature values.

A token is a dict {name: value}; a sentence a list of tokens. Each item is an attribute:

    str v           the binary attribute ``name=v`` (UTF-8 bytes are read as that str, as
                    python-crfsuite reads them; other bytes are a DataError)
    True            the binary attribute ``name``
    int / float     the attribute ``name`` with that real value
    False           the attribute ``name`` with the value 0; None adds nothing
    list of str     one binary attribute ``name=v`` per item

An attribute of value 0 adds nothing to any score or gradient, so it is kept out of the encoded
features; but, as in CRFsuite, it makes its (attribute, gold label) pair a weight of a model that
has only the pairs seen in training (``zero_offsets`` and ``zero_ids``, a CSR of the same tokens).

Attribute strings are interned once in one pass over the dicts (a dict lookup per item, then numpy);
the result is the same CSR layout as the template encoder's plus ``feature_values`` (float32 per
occurrence), left as None when every value is 1 so that a binary corpus takes the binary kernels.
"""
from dataclasses import dataclass
from itertools import chain

import numpy as np

from structperc.features.encoded import EncodedCorpus
from structperc.errors import ConfigError, DataError
from structperc.utils.collector import collector_paused
from structperc.utils.interning import Index, Interner

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class EncodedAttributes(EncodedCorpus):
    """An EncodedCorpus with a float32 value per feature occurrence (None: all 1), and the attributes
    of value 0 of each token (``zero_offsets`` int64 (n_tokens + 1,), ``zero_ids``; None: none)."""

    feature_values: np.ndarray | None = None
    zero_offsets: np.ndarray | None = None
    zero_ids: np.ndarray | None = None


def read_dicts(X):
    """(attribute names list, values float64 or None when all 1, sentence_offsets, feature_offsets) of X.

    The (key, value) items of every token are interned as pairs in one C-level pass (``map`` over
    the chained items into ``np.fromiter``), and only the distinct pairs are turned into attributes
    in Python. A value None is left out; a value 0 (or False) is kept with its value.
    Lists (unhashable) take ``_read_dicts_items``, one item at a time.
    """
    X = X if isinstance(X, (list, tuple)) else list(X)
    sentence_lengths = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
    tokens = list(chain.from_iterable(X))
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    pairs = Interner()
    try:
        pair_ids = np.fromiter(map(pairs.__getitem__, chain.from_iterable(map(dict.items, tokens))),
                               dtype=np.int64, count=int(lengths.sum()))
    except TypeError:  # a list value, or a token that is not a dict
        return _read_dicts_items(X)
    del tokens
    names, values, real = [], [], False
    for key, v in pairs:
        name, value = _attribute(key, v)
        names.append(name)
        values.append(value)
        real = real or (value != 1.0 and name is not None)
    sentence_offsets = np.zeros(len(sentence_lengths) + 1, dtype=np.int64)
    np.cumsum(sentence_lengths, out=sentence_offsets[1:])
    feature_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=feature_offsets[1:])
    present = np.array([name is not None for name in names], dtype=bool)
    keep = present[pair_ids]
    pair_values = np.array(values, dtype=np.float64)
    occurrence_values = pair_values[pair_ids] if real else None
    pair_ids, occurrence_values, feature_offsets = _keep_entries(pair_ids, occurrence_values, feature_offsets, keep)
    return (names, pair_ids), occurrence_values, sentence_offsets, feature_offsets


def _text(key, v):
    """The str of the bytes ``v`` (a value of feature ``key``) read as UTF-8; DataError for others."""
    try:
        return v.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"feature {key!r}: the bytes value {v[:40]!r} is not UTF-8 ({exc.reason} at byte "
                        f"{exc.start}): give a str, or bytes in UTF-8") from None


def _attribute(key, v):
    """(attribute name or None when absent, value) of one dict item."""
    if v.__class__ is str:
        return f"{key}={v}", 1.0
    if isinstance(key, bytes):
        key = _text(key, key)
    if isinstance(v, (bytes, bytearray)):
        return f"{key}={_text(key, bytes(v))}", 1.0
    if v is True or (isinstance(v, np.bool_) and v):
        return str(key), 1.0
    if v is None:
        return None, 0.0
    if v is False or isinstance(v, np.bool_):
        return str(key), 0.0
    if isinstance(v, (int, float, np.number)):
        return str(key), float(v)
    raise ConfigError(f"feature {key!r}: value {v!r} is not a str, bool, number or list of str")


def _read_dicts_items(X):
    """``read_dicts`` one item at a time (the input has list values)."""
    names, values = [], []
    token_ends, sentence_lengths = [], []
    for sentence in X:
        sentence_lengths.append(len(sentence))
        for token in sentence:
            for key, v in token.items():
                if isinstance(v, (list, tuple)):
                    key = _text(key, key) if isinstance(key, bytes) else key
                    for item in v:
                        item = _text(key, bytes(item)) if isinstance(item, (bytes, bytearray)) else item
                        names.append(f"{key}={item}")
                        values.append(1.0)
                    continue
                name, value = _attribute(key, v)
                if name is not None:
                    names.append(name)
                    values.append(value)
            token_ends.append(len(names))
    sentence_offsets = np.zeros(len(sentence_lengths) + 1, dtype=np.int64)
    np.cumsum(sentence_lengths, out=sentence_offsets[1:])
    feature_offsets = np.zeros(len(token_ends) + 1, dtype=np.int64)
    feature_offsets[1:] = token_ends
    value_array = np.array(values, dtype=np.float64)
    names_ids = np.arange(len(names), dtype=np.int64)
    return (names, names_ids), (None if np.all(value_array == 1.0) else value_array), sentence_offsets, feature_offsets


def _keep_entries(ids, values, feature_offsets, keep):
    """Drop the occurrences where ``keep`` is False; (ids, values, feature_offsets)."""
    if keep.all():
        return ids, values, feature_offsets
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)  # kept_before[k]: occurrences < k kept
    np.cumsum(keep, out=kept_before[1:])
    offsets = kept_before[feature_offsets]
    return ids[keep], (values[keep] if values is not None else None), offsets


class AttributeEncoder:
    """Maps lists of feature dicts to feature ids, as ``FeatureEncoder`` maps corpora.

    Parameters
    ----------
    min_count : drop attributes seen fewer than this many times in training

    Attributes
    ----------
    attributes_ : list of str, the attribute of each feature id
    labels_ : list of str
    """

    template_strings_: list = []

    def __init__(self, min_count=0):
        self.min_count = min_count

    # ---------------------------------------------------------------- encoding
    def _encode(self, X, index, labels):
        """(ids, values, sentence_offsets, feature_offsets, gold, zeros): the attributes of value 0
        apart, ``zeros`` = (zero_ids, zero_offsets)."""
        with collector_paused():  # the items of every token, interned: millions of short-lived tuples
            (names, name_of), values, sentence_offsets, feature_offsets = read_dicts(X)
            # names[name_of[k]] is the attribute of occurrence k; look each distinct name up once
            get = index.__getitem__
            ids = np.fromiter((get(name) if name is not None else -1 for name in names), dtype=np.int64,
                              count=len(names))[name_of]
            gold = None
            if labels is not None:
                if len(labels) != int(feature_offsets.shape[0] - 1):
                    raise DataError("y must give one label per token")
                gold = self.label_ids(labels)
        zeros = (_EMPTY, None)
        if values is not None:
            zero = values == 0.0
            zeros = _keep_entries(ids, None, feature_offsets, zero)[::2]
            ids, values, feature_offsets = _keep_entries(ids, values, feature_offsets, ~zero)
            if (values == 1.0).all():
                values = None
        return ids, values, sentence_offsets, feature_offsets, gold, zeros

    def _record(self, ids, values, sentence_offsets, feature_offsets, gold, zeros=(_EMPTY, None)):
        n_tokens = len(feature_offsets) - 1
        empty_offsets = np.zeros(n_tokens + 1, dtype=np.int64)
        values = None if values is None else values.astype(np.float32)
        zero_ids, zero_offsets = zeros
        return EncodedAttributes(sentence_offsets, feature_offsets, ids, empty_offsets, _EMPTY, gold, None, values,
                                 zero_offsets, None if zero_offsets is None else zero_ids)

    def fit_transform(self, X, labels):
        """Learn the attribute index and the labels (sorted) from X and its flat labels; encode X."""
        self.labels_ = sorted(set(labels))
        self.attributes_ = []
        return self.extend(X, labels)

    def extend(self, X, labels):
        """Add the attributes and labels of X that are new (appended after the known ones, so known
        ids stay) and encode X; for continued training."""
        known = set(self.labels_)
        self.labels_ = self.labels_ + sorted({label for label in labels if label not in known})
        n_known = len(self.attributes_)
        interner = Interner(zip(self.attributes_, range(n_known)))
        ids, values, sentence_offsets, feature_offsets, gold, zeros = self._encode(X, interner, labels)
        new = list(interner)[n_known:]
        if self.min_count > 1 and new:
            counts = np.bincount(ids, minlength=len(interner))
            keep_id = np.concatenate([np.ones(n_known, dtype=bool), counts[n_known:] >= self.min_count])
            renumber = np.cumsum(keep_id) - 1
            ids, values, feature_offsets = _keep_entries(ids, values, feature_offsets, keep_id[ids])
            ids = renumber[ids]
            zero_ids, zero_offsets = zeros
            if zero_offsets is not None:
                zero_ids, _, zero_offsets = _keep_entries(zero_ids, None, zero_offsets, keep_id[zero_ids])
                zeros = (renumber[zero_ids], zero_offsets)
            new = [name for name, keep in zip(new, keep_id[n_known:]) if keep]
        self.attributes_ = self.attributes_ + new
        self.__dict__.pop("_index", None)
        return self._record(ids, values, sentence_offsets, feature_offsets, gold, zeros)

    def transform(self, X, labels=None):
        """Encode X with the learned index; attributes not seen in training are dropped."""
        ids, values, sentence_offsets, feature_offsets, gold, _ = self._encode(X, self._attribute_index(), labels)
        ids, values, feature_offsets = _keep_entries(ids, values, feature_offsets, ids >= 0)
        return self._record(ids, values, sentence_offsets, feature_offsets, gold)

    def _attribute_index(self):
        if "_index" not in self.__dict__:
            self._index = Index(zip(self.attributes_, range(len(self.attributes_))))
        return self._index

    def label_ids(self, labels):
        index = Index(zip(self.labels_, range(len(self.labels_))))
        return np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=len(labels))

    # ---------------------------------------------------------------- the model's view
    @property
    def n_features_(self):
        return len(self.attributes_)

    @property
    def n_pair_features_(self):
        return 0

    def drop_features(self, keep, keep_pair):
        """Keep only the features where ``keep`` is True (ids are renumbered in order)."""
        self.attributes_ = [a for a, k in zip(self.attributes_, keep) if k]
        self.__dict__.pop("_index", None)

    def prepare(self):
        self._attribute_index()

    def describe_feature(self, feature_id, pair=False):
        return self.attributes_[feature_id]

    # ---------------------------------------------------------------- persistence
    def state(self):
        attributes = np.array(self.attributes_, dtype=np.str_) if self.attributes_ else np.zeros(0, dtype="<U1")
        return {"attributes": attributes}, {"kind": "attributes", "min_count": self.min_count,
                                            "labels": self.labels_, "templates": []}

    @classmethod
    def from_state(cls, arrays, meta):
        enc = cls(min_count=meta["min_count"])
        enc.labels_ = list(meta["labels"])
        enc.attributes_ = arrays["attributes"].tolist()
        return enc
