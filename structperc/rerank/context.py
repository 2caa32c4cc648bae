"""Features a first-order tagger cannot have: a candidate scored against the rest of its document,
against entity gazetteers, and as a whole sequence; and the featurizing of n-best lists with them.

Feature families (each switched on by name in ``featurize_in_context``):

- ``entity``: Collins' (2002) features of every entity of a candidate (``features.ENTITY_FEATURES``)
  plus each word of each entity (``entity_word``).
- ``chunk``: the chunking features of every chunk (``features.GLOBAL_FEATURES``: its words, POS,
  length, first and last word, shape).
- ``document``: for every entity of a candidate (type T, words s), the types that s, its lower-cased
  form and its last word get *elsewhere* in its document (the other sentences; the document's own
  sentence is left out), counted in the base's 1-best (``d1``) and in the other sentences' candidates,
  each candidate weighing 1/k (``dn``). A feature ``d1s:T=T'`` has the share of T' among those
  occurrences as its value; ``d1s:agree`` the share of T itself; ``d1s:T:none`` fires when s occurs
  nowhere else. For the last word the shares count occurrences outside entities too (``O``). Every
  capitalised word that the candidate leaves outside its entities adds ``d1o:T'`` (the share of T'
  that word gets elsewhere), so leaving out a name the rest of the document labels costs.
- ``gazetteer``: the same shares (``gs``, ``gl``) in a gazetteer of gold entities. For training lists
  the gazetteer of a sentence is gathered from the other jackknife folds only, so that no candidate
  sees its own gold; for other lists from all the training corpus.
- ``sequence``: label trigrams of the candidate (``l3=``) and its number of entities of each type
  (``nT=T:n``), with the sequence of its entity types (``chunk_sequence``).
- ``rank``: the candidate's rank in the base's list (``rank=r``, 5 and beyond as one).

Feature 1 is always the base's score relative to the group's 1-best (``features.featurize``).

Documents come from the file: a sentence's document is the number of ``-DOCSTART-`` (CoNLL) or
``# newdoc`` (CoNLL-U) lines before its first token (``document_ids``), or ``document_size``
consecutive sentences, or the sentence alone.
"""
import collections
import functools
import os
from dataclasses import dataclass

import numpy as np

from structperc.chunks import chunk_spans
from structperc.errors import ConfigError
from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE, RankingData
from structperc.rerank.features import ENTITY_FEATURES, FEATURES, GLOBAL_FEATURES

FAMILIES = ("entity", "chunk", "document", "gazetteer", "sequence", "rank")
ENTITY_FAMILY = ENTITY_FEATURES + ["entity_word"]
CHUNK_FAMILY = [name for name in GLOBAL_FEATURES if name != "chunk_sequence"]
DOCUMENT_MARKERS = ("-DOCSTART-", "# newdoc")


def check_families(families):
    families = list(FAMILIES if families is None else families)
    for name in families:
        if name not in FAMILIES:
            raise ConfigError(f"unknown feature family {name!r}: choose from {', '.join(FAMILIES)}")
    return families


# ------------------------------------------------------------------------------------ documents
@functools.lru_cache(maxsize=32)
def _marker_lines(path, mtime, size):
    """Sorted 1-based line numbers of the document markers of a file."""
    lines = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.startswith(DOCUMENT_MARKERS):
                lines.append(number)
    return np.asarray(lines, dtype=np.int64)


def marker_lines(path):
    """Line numbers of the document markers of ``path``, or None when it is not a readable file."""
    if not path or not os.path.isfile(path):
        return None
    stat = os.stat(path)
    return _marker_lines(os.path.abspath(path), stat.st_mtime_ns, stat.st_size)


def document_ids(corpus, document_size=None):
    """The document (int64 (n_sentences,), non-decreasing within a file) of every sentence.

    The file's markers when it has any; else blocks of ``document_size`` sentences; else each
    sentence is a document of its own."""
    n = corpus.n_sentences
    first_tokens = np.minimum(corpus.sentence_offsets[:-1], max(corpus.n_tokens - 1, 0))
    if n and corpus.n_tokens:
        paths = corpus.paths if corpus.paths is not None else [corpus.path]
        file_ids = (corpus.file_ids[first_tokens] if corpus.file_ids is not None
                    else np.zeros(n, dtype=np.int64))
        markers = [marker_lines(p) for p in paths]
        if any(m is not None and len(m) for m in markers):
            first_lines = corpus.line_numbers[first_tokens]
            out = np.zeros(n, dtype=np.int64)
            base = 0
            for f, m in enumerate(markers):
                here = file_ids == f
                m = np.zeros(0, dtype=np.int64) if m is None else m
                out[here] = base + np.searchsorted(m, first_lines[here])
                base += len(m) + 1
            return out
    if document_size:
        return np.arange(n, dtype=np.int64) // int(document_size)
    return np.arange(n, dtype=np.int64)


# ------------------------------------------------------------------------------------ entity keys
def entity_keys(words, first, last):
    """(string, lower-cased string) of the entity words[first..last]."""
    string = " ".join(words[first: last + 1])
    return string, string.lower()


def _is_capitalised(word):
    return word[:1].isupper()


class TypeCounts:
    """Per document (or gazetteer), key -> Counter of types, with each sentence's own share kept
    apart so that ``elsewhere`` leaves a sentence's own occurrences out."""

    def __init__(self):
        self.total = collections.defaultdict(collections.Counter)
        self.own = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))

    def add(self, key, kind, weight, sentence):
        self.total[key][kind] += weight
        self.own[sentence][key][kind] += weight

    def elsewhere(self, key, sentence):
        total = self.total.get(key)
        if not total:
            return {}
        own = self.own.get(sentence, {}).get(key)
        if not own:
            return total
        out = {kind: count - own.get(kind, 0) for kind, count in total.items()}
        return {kind: count for kind, count in out.items() if count > 1e-9}


def _share_features(prefix, kind, counts, out, with_none=True):
    """``prefix:kind=T'`` (share of T') and ``prefix:agree`` (share of kind) of a Counter of types."""
    total = sum(counts.values())
    if total <= 0:
        if with_none:
            out.append((f"{prefix}:{kind}:none", 1.0))
        return
    for other, count in counts.items():
        out.append((f"{prefix}:{kind}={other}", count / total))
    out.append((f"{prefix}:agree", counts.get(kind, 0.0) / total))


# ------------------------------------------------------------------------------------ context
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


class ListContext:
    """What the document-level features of an NBestList read: per document the types of entity
    strings, lower-cased strings and words in the base's 1-best and in all candidates.

    nb : NBestList; documents : int64 (n_sentences,) (``document_ids``); gazetteers : list of
    Gazetteer and gazetteer_of : int64 (n_sentences,) the gazetteer of each sentence (or None).
    """

    def __init__(self, nb, documents, gazetteers=None, gazetteer_of=None):
        self.documents = np.asarray(documents, dtype=np.int64)
        self.gazetteers = gazetteers or []
        self.gazetteer_of = gazetteer_of
        names = nb.label_names
        corpus = nb.corpus
        words, o = corpus.columns["word"], corpus.sentence_offsets
        one = collections.defaultdict(TypeCounts)   # (document) -> counts of 1-best keys
        many = collections.defaultdict(TypeCounts)  # (document) -> counts over the candidates
        for i in range(nb.n_sentences):
            a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
            if b == a:
                continue
            d = int(self.documents[i])
            w = words[o[i]: o[i + 1]]
            weight = 1.0 / (b - a)
            for j in range(a, b):
                labels = tuple(names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
                inside = np.zeros(len(w), dtype=bool)
                for kind, first, last in _cached_spans(labels):
                    string, lower = entity_keys(w, first, last)
                    inside[first: last + 1] = True
                    for key in (("s", string), ("l", lower)):
                        many[d].add(key, kind, weight, i)
                        if j == a:
                            one[d].add(key, kind, 1.0, i)
                    for t in range(first, last + 1):
                        many[d].add(("w", w[t]), kind, weight, i)
                        if j == a:
                            one[d].add(("w", w[t]), kind, 1.0, i)
                for t in np.flatnonzero(~inside):
                    if _is_capitalised(w[t]):
                        many[d].add(("w", w[t]), "O", weight, i)
                        if j == a:
                            one[d].add(("w", w[t]), "O", 1.0, i)
        self.one, self.many = one, many

    def gazetteer(self, i):
        if self.gazetteer_of is None or not self.gazetteers:
            return None
        return self.gazetteers[int(self.gazetteer_of[i])]

    def entity_features(self, i, words, kind, first, last, families):
        """(feature string, value) pairs of the entity words[first..last] of type ``kind``."""
        out = []
        string, lower = entity_keys(words, first, last)
        head = words[last]
        if "document" in families:
            d = int(self.documents[i])
            for source, counts in (("d1", self.one.get(d)), ("dn", self.many.get(d))):
                if counts is None:
                    continue
                _share_features(f"{source}s", kind, counts.elsewhere(("s", string), i), out)
                _share_features(f"{source}l", kind, counts.elsewhere(("l", lower), i), out, with_none=False)
                _share_features(f"{source}h", kind, counts.elsewhere(("w", head), i), out, with_none=False)
        if "gazetteer" in families:
            gazetteer = self.gazetteer(i)
            if gazetteer is not None:
                _share_features("gs", kind, gazetteer.strings.get(string, {}), out)
                _share_features("gl", kind, gazetteer.lowers.get(lower, {}), out, with_none=False)
        return out

    def outside_features(self, i, word):
        """(feature string, value) pairs of a capitalised word left outside every entity."""
        if not _is_capitalised(word):
            return ()
        out = []
        d = int(self.documents[i])
        for source, counts in (("d1o", self.one.get(d)), ("dno", self.many.get(d))):
            if counts is None:
                continue
            elsewhere = counts.elsewhere(("w", word), i)
            total = sum(elsewhere.values())
            for kind, count in elsewhere.items():
                out.append((f"{source}:{kind}", count / total))
        return out


@functools.lru_cache(maxsize=65536)
def _cached_spans(labels):
    return chunk_spans(labels)


# ------------------------------------------------------------------------------------ featurizing
def candidate_merits(nb):
    """Per candidate, 2 * correct - predicted entities (``NBestList.oracle_choice``'s merit): the
    targets the learners rank by; corpus F1 rises with it at a fixed number of gold entities."""
    if nb.metric != "f1":
        return np.zeros(nb.n_candidates) if nb.task_scores is None else nb.task_scores.astype(np.float64)
    return (2 * nb.counts[:, 0] - nb.counts[:, 1]).astype(np.float64)


def featurize_in_context(nb, families, context=None, vocabulary=None, grow=False):
    """RankingData of an NBestList with the feature families ``families`` (see the module
    docstring); one group per sentence with candidates (qid = sentence index + 1), targets from
    ``candidate_merits``. ``context`` (a ListContext) is needed by ``document`` and ``gazetteer``.
    Returns (RankingData, vocabulary)."""
    families = check_families(families)
    if context is None and ("document" in families or "gazetteer" in families):
        raise ConfigError("the document and gazetteer features need a ListContext")
    vocabulary = {} if vocabulary is None else vocabulary
    corpus = nb.corpus
    o = corpus.sentence_offsets
    columns = corpus.columns
    names = nb.label_names
    entity_names = (ENTITY_FAMILY if "entity" in families else []) + (CHUNK_FAMILY if "chunk" in families else [])
    chunk_features = [FEATURES[n] for n in entity_names if hasattr(FEATURES[n], "of_chunk")]
    has_entity_word = "entity_word" in entity_names
    in_context = [f for f in families if f in ("document", "gazetteer")]
    ranks = nb.ranks()

    def feature_id(string):
        fid = vocabulary.get(string)
        if fid is None and grow:
            fid = vocabulary[string] = len(vocabulary) + FIRST_FEATURE_ID
        return fid

    row_ids, row_values, lengths = [], [], []
    for i in range(nb.n_sentences):
        a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
        if b == a:
            continue
        tokens = {name: values[o[i]: o[i + 1]] for name, values in columns.items()}
        words = tokens["word"]
        top = nb.scores[a]
        span_cache, outside_cache, trigram_cache = {}, {}, {}
        for j in range(a, b):
            labels = tuple(names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            spans = _cached_spans(labels)
            values = collections.defaultdict(float)
            for kind, first, last in spans:
                key = (kind, first, last)
                pairs = span_cache.get(key)
                if pairs is None:
                    found = [(f.of_chunk(tokens, kind, first, last), 1.0) for f in chunk_features]
                    if has_entity_word:
                        found += [(f"ei={kind}:{w}", 1.0) for w in words[first: last + 1]]
                    if in_context:
                        found += context.entity_features(i, words, kind, first, last, in_context)
                    pairs = span_cache[key] = [(fid, v) for fid, v in ((feature_id(s), v) for s, v in found)
                                               if fid is not None]
                for fid, v in pairs:
                    values[fid] += v
            if "document" in families:
                inside = np.zeros(len(labels), dtype=bool)
                for kind, first, last in spans:
                    inside[first: last + 1] = True
                for t in np.flatnonzero(~inside):
                    pairs = outside_cache.get(t)
                    if pairs is None:
                        pairs = outside_cache[t] = [(fid, v) for fid, v in (
                            (feature_id(s), v) for s, v in context.outside_features(i, words[t])) if fid is not None]
                    for fid, v in pairs:
                        values[fid] += v
            if "sequence" in families:
                padded = ("<s>", "<s>") + labels + ("</s>",)
                for t in range(len(padded) - 2):
                    gram = padded[t: t + 3]
                    fid = trigram_cache.get(gram, -1)
                    if fid == -1:
                        fid = trigram_cache[gram] = feature_id("l3=" + " ".join(gram))
                    if fid is not None:
                        values[fid] += 1.0
                by_type = collections.Counter(kind for kind, _, _ in spans)
                for kind, n in by_type.items():
                    fid = feature_id(f"nT={kind}:{min(n, 4)}")
                    if fid is not None:
                        values[fid] += 1.0
                fid = feature_id("cseq=" + " ".join(kind for kind, _, _ in spans))
                if fid is not None:
                    values[fid] += 1.0
            if "rank" in families:
                fid = feature_id(f"rank={min(int(ranks[j]), 5)}")
                if fid is not None:
                    values[fid] += 1.0
            pairs = sorted(values.items())
            row_ids.append([SCORE_FEATURE] + [fid for fid, _ in pairs])
            row_values.append([float(nb.scores[j] - top)] + [v for _, v in pairs])
            lengths.append(len(pairs) + 1)
    cand_counts = np.diff(nb.candidate_offsets)
    group_offsets = np.concatenate([[0], np.cumsum(cand_counts[cand_counts > 0])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    nnz = int(row_offsets[-1])
    flat_ids = np.fromiter((f for ids in row_ids for f in ids), dtype=np.int64, count=nnz)
    flat_values = np.fromiter((v for vals in row_values for v in vals), dtype=np.float64, count=nnz)
    kept = np.flatnonzero(cand_counts > 0).astype(np.int64)
    return RankingData(group_offsets, row_offsets, flat_ids, flat_values, candidate_merits(nb), kept + 1,
                       []), vocabulary
