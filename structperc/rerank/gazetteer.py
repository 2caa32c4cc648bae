"""Entity gazetteers gathered from gold labels: each entity's string and lower-cased string with the
counts of the types it takes, and the jackknifed ones of the training folds, so that no candidate
sees its own gold (``context.ListContext`` reads them)."""
import collections
import functools
from dataclasses import dataclass

import numpy as np

from structperc._kernels.rank.interning import intern_ranges, new_trie
from structperc.chunks import chunk_spans


def entity_keys(words, first, last):
    """(string, lower-cased string) of the entity words[first..last]."""
    string = " ".join(words[first: last + 1])
    return string, string.lower()


@dataclass
class Gazetteer:
    """Entity string (and lower-cased string) -> Counter of types, from gold labels."""

    strings: dict
    lowers: dict

    @classmethod
    def from_corpus(cls, corpus, sentences=None):
        strings = collections.defaultdict(collections.Counter)
        lowers = collections.defaultdict(collections.Counter)
        words, labels, o = corpus.columns["word"], corpus.columns[corpus.label], corpus.sentence_offsets
        for i in range(corpus.n_sentences) if sentences is None else sentences:
            w = words[o[i]: o[i + 1]]
            for kind, first, last in chunk_spans(labels[o[i]: o[i + 1]]):
                string, lower = entity_keys(w, first, last)
                strings[string][kind] += 1
                lowers[lower][kind] += 1
        return cls(dict(strings), dict(lowers))

    def arrays(self):
        """The gazetteer as arrays for a model file: keys, types and counts (strings first)."""
        rows = [(0, k, t, c) for k, ts in self.strings.items() for t, c in ts.items()]
        rows += [(1, k, t, c) for k, ts in self.lowers.items() for t, c in ts.items()]
        return {"gazetteer_table": np.array([r[0] for r in rows], dtype=np.int64),
                "gazetteer_keys": np.array([r[1] for r in rows], dtype=np.str_) if rows else np.zeros(0, "<U1"),
                "gazetteer_types": np.array([r[2] for r in rows], dtype=np.str_) if rows else np.zeros(0, "<U1"),
                "gazetteer_counts": np.array([r[3] for r in rows], dtype=np.float64)}

    @classmethod
    def from_arrays(cls, arrays):
        tables = (collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter))
        for table, key, kind, count in zip(arrays["gazetteer_table"].tolist(), arrays["gazetteer_keys"].tolist(),
                                           arrays["gazetteer_types"].tolist(), arrays["gazetteer_counts"].tolist()):
            tables[table][key][kind] += count
        return cls(dict(tables[0]), dict(tables[1]))

    @functools.cached_property
    def interned(self):
        """The gazetteer over integer ids (made once): an InternedGazetteer."""
        return InternedGazetteer.of(self)


@dataclass(frozen=True)
class InternedGazetteer:
    """A Gazetteer as tries of word ids, for ``_kernels.rank.type_shares``.

    A key is split at its spaces into words (an entity string is its words joined by spaces), and
    each word interned: ``words`` (of the strings table), ``lowers`` (of the lower-cased table), dict
    word -> id. string_trie, lower_trie: ``_kernels.rank.interning`` tries of the keys' word ids;
    string_entry, lower_entry int64 (nodes,): the entry of the key ending at a node, or -1. Entry e's
    types and counts, in the order the Gazetteer holds them: entry_types (into ``type_names``) and
    entry_counts float64 [entry_offsets[e]: entry_offsets[e + 1]].
    """

    words: dict
    lowers: dict
    string_trie: object
    lower_trie: object
    string_entry: np.ndarray
    lower_entry: np.ndarray
    entry_offsets: np.ndarray
    entry_types: np.ndarray
    entry_counts: np.ndarray
    type_names: list

    @classmethod
    def of(cls, gazetteer):
        type_index, kinds, counts, offsets = {}, [], [], [0]
        found = []
        for table in (gazetteer.strings, gazetteer.lowers):
            index, items, bounds, entries = {}, [], [], []
            for key, types in table.items():
                start = len(items)
                items.extend(index.setdefault(w, len(index)) for w in key.split(" "))
                bounds.append((start, len(items)))
                entries.append(len(offsets) - 1)
                for kind, count in types.items():
                    kinds.append(type_index.setdefault(kind, len(type_index)))
                    counts.append(count)
                offsets.append(len(kinds))
            trie = new_trie()
            bounds = np.asarray(bounds, dtype=np.int64).reshape(-1, 2)
            nodes = intern_ranges(trie, np.asarray(items, dtype=np.int64), bounds[:, 0].copy(), bounds[:, 1].copy())
            entry_of_node = np.full(len(trie), -1, dtype=np.int64)
            entry_of_node[nodes] = entries
            found.append((index, trie, entry_of_node))
        (words, string_trie, string_entry), (lowers, lower_trie, lower_entry) = found
        return cls(words, lowers, string_trie, lower_trie, string_entry, lower_entry,
                   np.asarray(offsets, dtype=np.int64), np.asarray(kinds, dtype=np.int64),
                   np.asarray(counts, dtype=np.float64), list(type_index))


def jackknifed_gazetteers(corpus, fold_of):
    """One Gazetteer per fold, from the gold entities of the other folds' sentences."""
    folds = int(fold_of.max()) + 1 if len(fold_of) else 0
    return [Gazetteer.from_corpus(corpus, np.flatnonzero(fold_of != f)) for f in range(folds)]
