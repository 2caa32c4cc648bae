"""Entity gazetteers gathered from gold labels: each entity's string and lower-cased string with the
counts of the types it takes, and the jackknifed ones of the training folds, so that no candidate
sees its own gold (``context.ListContext`` reads them)."""
import collections
from dataclasses import dataclass

import numpy as np

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


def jackknifed_gazetteers(corpus, fold_of):
    """One Gazetteer per fold, from the gold entities of the other folds' sentences."""
    folds = int(fold_of.max()) + 1 if len(fold_of) else 0
    return [Gazetteer.from_corpus(corpus, np.flatnonzero(fold_of != f)) for f in range(folds)]
