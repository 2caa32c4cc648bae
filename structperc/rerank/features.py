"""Global features of candidate labelings, and featurizing n-best lists into RankingData.

Global features (Collins 2002, "Ranking algorithms for named-entity extraction") look at a whole
candidate labeling at once. ``GLOBAL_FEATURES`` maps a name to a function (tokens, labels) ->
iterable of feature strings, where ``tokens`` is a dict column name -> list of the sentence's values
and ``labels`` the candidate's label strings; a feature's value is the number of times it is
produced. Feature strings are interned to ids >= 2 by a vocabulary learned on training lists.
Feature 1 is the base model's score relative to the 1-best of the group (score - score of rank 0,
so <= 0).
"""
import collections
import functools

import numpy as np

from structperc.chunks import chunk_spans
from structperc.errors import ConfigError
from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE, RankingData
from structperc.features.templates import word_shape


# ------------------------------------------------------------------------------------ global features
@functools.lru_cache(maxsize=4096)
def _spans(labels):
    return chunk_spans(labels)


def _chunk_feature(prefix, render):
    """A feature of every chunk on its own. ``featurize`` computes it once per distinct chunk of a
    sentence's candidates through ``feature.of_chunk``."""
    def of_chunk(tokens, kind, first, last):
        return f"{prefix}={kind}:{render(tokens, first, last + 1)}"

    def feature(tokens, labels):
        for kind, first, last in _spans(tuple(labels)):
            yield of_chunk(tokens, kind, first, last)
    feature.__name__ = prefix
    feature.of_chunk = of_chunk
    return feature


GLOBAL_FEATURES = {
    # every chunk: its type with ...
    "chunk_words": _chunk_feature("cw", lambda tok, a, b: " ".join(tok["word"][a:b])),
    "chunk_pos": _chunk_feature("cp", lambda tok, a, b: " ".join(tok["pos"][a:b])),
    "chunk_length": _chunk_feature("cl", lambda tok, a, b: str(b - a)),
    "chunk_first": _chunk_feature("cf", lambda tok, a, b: tok["word"][a]),
    "chunk_last": _chunk_feature("cz", lambda tok, a, b: tok["word"][b - 1]),
    "chunk_shape": _chunk_feature("cs", lambda tok, a, b: " ".join(word_shape(w) for w in tok["word"][a:b])),
    # the whole sentence: its sequence of chunk types
    "chunk_sequence": lambda tokens, labels: ["cseq=" + " ".join(kind for kind, _, _ in _spans(tuple(labels)))],
}
DEFAULT_FEATURES = list(GLOBAL_FEATURES)


def _context(tok, a, b, field, offsets, render=str):
    """The values of ``field`` at the given offsets from the chunk [a, b) (negative: before a,
    positive: after b - 1), padded with <s> and </s>, joined by "_"."""
    values = tok[field]
    out = []
    for o in offsets:
        i = a + o if o < 0 else b - 1 + o
        out.append("<s>" if i < 0 else "</s>" if i >= len(values) else render(values[i]))
    return "_".join(out)


# Collins (2002), named-entity reranking: features of every entity of a candidate. Kept apart from
# GLOBAL_FEATURES (the chunking set); every name of either registry is accepted wherever a feature
# name is.
NER_FEATURES = {
    # the whole entity, e.g. PER:Professor_Cohen, and its capitalization pattern, e.g. PER:Xx_Xx
    "entity_words": _chunk_feature("ew", lambda tok, a, b: "_".join(tok["word"][a:b])),
    "entity_shape": _chunk_feature("es", lambda tok, a, b: "_".join(word_shape(w) for w in tok["word"][a:b])),
    # its last word, and that word's capitalization
    "entity_last": _chunk_feature("el", lambda tok, a, b: tok["word"][b - 1]),
    "entity_last_shape": _chunk_feature("els", lambda tok, a, b: word_shape(tok["word"][b - 1])),
}
# word and capitalization bigrams and trigrams before and after the entity (entity_before2 ...
# entity_after3_shape)
for _side, _sign in (("before", -1), ("after", 1)):
    for _n in (2, 3):
        _offsets = tuple(sorted(_sign * k for k in range(1, _n + 1)))
        _name = f"entity_{_side}{_n}"
        NER_FEATURES[_name] = _chunk_feature(
            f"e{_side[0]}{_n}", lambda tok, a, b, o=_offsets: _context(tok, a, b, "word", o))
        NER_FEATURES[_name + "_shape"] = _chunk_feature(
            f"e{_side[0]}{_n}s", lambda tok, a, b, o=_offsets: _context(tok, a, b, "word", o, word_shape))
ENTITY_FEATURES = list(NER_FEATURES)


def _entity_word(tokens, labels):
    """Each word of each entity with its type (PER:Professor, PER:Cohen): the whole-entity string
    split into words that recur in other entities."""
    words = tokens["word"]
    for kind, first, last in _spans(tuple(labels)):
        for w in words[first:last + 1]:
            yield f"ei={kind}:{w}"


# Beyond Collins' list: features that back off from the whole entity and its bigram contexts to
# single words and the length (chosen for the NER table on ned.testa, experiments/collins2002_ner.py)
ENTITY_BACKOFF = {
    "entity_first": _chunk_feature("ef", lambda tok, a, b: tok["word"][a]),
    "entity_first_shape": _chunk_feature("efs", lambda tok, a, b: word_shape(tok["word"][a])),
    "entity_before1": _chunk_feature("eb1", lambda tok, a, b: _context(tok, a, b, "word", (-1,))),
    "entity_after1": _chunk_feature("ea1", lambda tok, a, b: _context(tok, a, b, "word", (1,))),
    "entity_word": _entity_word,
    "entity_length": _chunk_feature("en", lambda tok, a, b: str(b - a)),
}
NER_FEATURES.update(ENTITY_BACKOFF)
FEATURES = {**GLOBAL_FEATURES, **NER_FEATURES}


def check_feature_names(names):
    """The list of feature names (default: all), or ConfigError naming the unknown one."""
    names = DEFAULT_FEATURES if names is None else list(names)
    for name in names:
        if name not in FEATURES:
            raise ConfigError(f"unknown global feature {name!r}: choose from {', '.join(FEATURES)}")
    return names


def _missing_column(name, exc):
    return ConfigError(f"global feature {name!r} needs the input column {exc}")


def candidate_feature_strings(tokens, labels, names):
    """Counter of the feature strings of one candidate."""
    counts = collections.Counter()
    for name in names:
        try:
            counts.update(FEATURES[name](tokens, labels))
        except KeyError as exc:
            raise _missing_column(name, exc) from None
    return counts



def featurize(nb, names=None, vocabulary=None, grow=False):
    """RankingData of an NBestList: one group per sentence (qid = sentence index + 1).

    vocabulary : dict feature string -> id (>= 2); with ``grow`` unseen strings are added (training
    lists), otherwise they are dropped. Targets are the task scores (0 without gold labels).

    The candidates of a sentence share most of their chunks, so a per-chunk feature is rendered
    and looked up once per distinct (feature, chunk) of the sentence. Ids are given in the order
    ``candidate_feature_strings`` produces the strings.
    """
    names = check_feature_names(names)
    features = [FEATURES[name] for name in names]
    vocabulary = {} if vocabulary is None else vocabulary
    corpus = nb.corpus
    o = corpus.sentence_offsets
    columns = corpus.columns
    label_names = nb.label_names
    row_ids, row_values, lengths, comments = [], [], [], []
    ranks = nb.ranks()

    def feature_id(string):
        fid = vocabulary.get(string)
        if fid is None and grow:
            fid = vocabulary[string] = len(vocabulary) + FIRST_FEATURE_ID
        return fid

    for i in range(nb.n_sentences):
        a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
        if b == a:
            continue
        tokens = {name: values[o[i]: o[i + 1]] for name, values in columns.items()}
        top = nb.scores[a]
        chunk_ids = {}  # (feature index, kind, first, last) -> id, or None when dropped
        for j in range(a, b):
            labels = tuple(label_names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            spans = _spans(labels)
            counts = collections.Counter()
            for f, (name, feature) in enumerate(zip(names, features)):
                try:
                    if hasattr(feature, "of_chunk"):
                        for kind, first, last in spans:
                            key = (f, kind, first, last)
                            if key not in chunk_ids:
                                chunk_ids[key] = feature_id(feature.of_chunk(tokens, kind, first, last))
                            counts[chunk_ids[key]] += 1
                    else:
                        counts.update(feature_id(string) for string in feature(tokens, labels))
                except KeyError as exc:
                    raise _missing_column(name, exc) from None
            counts.pop(None, None)
            pairs = sorted(counts.items())
            ids = [SCORE_FEATURE] + [fid for fid, _ in pairs]
            vals = [float(nb.scores[j] - top)] + [float(count) for _, count in pairs]
            row_ids.append(ids)
            row_values.append(vals)
            lengths.append(len(ids))
            comments.append(_comment(nb, i, j, int(ranks[j])))
    cand_counts = np.diff(nb.candidate_offsets)
    group_offsets = np.concatenate([[0], np.cumsum(cand_counts[cand_counts > 0])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat_ids = np.fromiter((f for ids in row_ids for f in ids), dtype=np.int64, count=int(row_offsets[-1]))
    flat_values = np.fromiter((v for vals in row_values for v in vals), dtype=np.float64, count=int(row_offsets[-1]))
    kept = np.flatnonzero(cand_counts > 0)
    targets = (np.zeros(nb.n_candidates) if nb.task_scores is None else nb.task_scores).astype(np.float64)
    return RankingData(group_offsets, row_offsets, flat_ids, flat_values, targets, kept.astype(np.int64) + 1,
                       comments), vocabulary


def _comment(nb, i, j, rank):
    text = f"sentence {i} candidate {rank}"
    if nb.metric == "f1":
        c = nb.counts[j]
        text += f" chunks {c[0]} {c[1]} {c[2]}"
    elif nb.metric == "accuracy":
        c = nb.counts[j]
        text += f" tokens {c[0]} {c[1]}"
    return text

