"""Raw text in, tags and labelled spans with character offsets out.

The text is split by the raw-text reader's rules (``readers.raw``: every line a paragraph, split into
sentences and words) into a Corpus whose ``start`` and ``end`` columns hold each word's offsets in
the text. A model tags it like any other input: its ``space_after`` column comes from the text's own
spacing, and a column that raw text lacks (``pos`` for a chunker) comes from the model's column
taggers (``column_taggers_``, set by ``structperc.models`` for a named model that declares them).
A sentence given as a list of words is tagged the same way (``tag_words``), as the text it would be.

Chunk labels (``chunks.is_bio``) give spans ``(start, end, label, score)``: the chunks of
``chunks.chunk_spans``. ``score`` is the span's marginal probability P(the span is a chunk of its
type | x) under a probabilistic model (crf, memm). It is computed from the node marginals of the
forced decoder (``estimator.marginals``): with the span's labels forced, the Viterbi labeling ŷ stays
the best, so

    P(y_span = ŷ_span | x) = P(ŷ | x) / P(ŷ | x, y_span = ŷ_span)

and the span ends where it does unless the next token continues it (I-X or E-X of its type):

    P(span) = P(y_span = ŷ_span | x) * (1 - sum_{c continues} P(y_{end+1} = c | x, y_span = ŷ_span)).

A perceptron or hinge model defines no probability, so its spans have no score (None).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from structperc.chunks import chunk_spans, is_bio
from structperc.corpus import Corpus
from structperc.readers.raw import RAW_COLUMNS, SEGMENTER, paragraph_columns, words_columns


class TextSpan(NamedTuple):
    """A labelled span of the text: characters ``[start, end)``; score : its probability, or None."""
    start: int
    end: int
    label: str
    score: float | None


def text_corpus(text: str, path: str = "<text>") -> Corpus:
    """The Corpus of raw text (format "raw"): columns ``readers.raw.RAW_COLUMNS``, offsets into ``text``."""
    columns = [[] for _ in RAW_COLUMNS]
    line_numbers, sentence_offsets = [], [0]
    at = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        values, ends = paragraph_columns(line.rstrip("\r\n"))
        before = len(columns[0])
        columns[0].extend(values[0])
        columns[1].extend(values[1])
        for k in (2, 3):
            columns[k].extend(values[k] if at == 0 else (str(int(v) + at) for v in values[k]))
        line_numbers.extend([number] * len(values[0]))
        sentence_offsets.extend(before + end for end in ends)
        at += len(line)
    return Corpus(dict(zip(RAW_COLUMNS, columns)), np.array(sentence_offsets, dtype=np.int64), None, path,
                  np.array(line_numbers, dtype=np.int64), format="raw")


def words_corpus(words, path: str = "<words>") -> Corpus:
    """The raw-text Corpus of one sentence given as its words (``readers.raw.words_columns``)."""
    return Corpus(dict(zip(RAW_COLUMNS, words_columns(list(words)))), np.array([0, len(words)], dtype=np.int64),
                  None, path, np.ones(len(words), dtype=np.int64), format="raw")


def reads_beside_words(model) -> bool:
    """Whether ``model`` was trained on columns other than the word and the label (space_after, pos,
    ...), which a list of words lacks."""
    read = model.metadata.get("input", {})
    return bool(set(read.get("columns") or ["word"]) - {"word", read.get("label")})


def tag_words(tagger, words):
    """[(word, label), ...] of one sentence given as its words, the columns a model reads beside the
    word filled as for raw text: ``space_after`` from the spacing the words would have, the others
    from the model's column taggers."""
    corpus = words_corpus(words)
    names = tagger.predict_corpus(add_input_columns(tagger, corpus))[0]
    return list(zip(corpus.columns["word"], names))


def add_input_columns(tagger, corpus: Corpus) -> Corpus:
    """``corpus`` with the columns of the tagger's column taggers (``column_taggers_``: name -> tagger)
    added, each the labels its tagger predicts; the corpus itself when there are none."""
    feeders = getattr(tagger, "column_taggers_", None) or {}
    for name, feeder in feeders.items():
        if name not in corpus.columns:
            corpus.columns[name] = feeder.predict_corpus(add_input_columns(feeder, corpus))[0]
    return corpus


def sentence_chunks(labels, offsets):
    """Per sentence, its chunks as (type, first token, last token), token indices flat over the corpus."""
    return [[(kind, a + first, a + last) for kind, first, last in chunk_spans(labels[a:b])]
            for a, b in zip(offsets[:-1], offsets[1:])]


def chunk_probabilities(model, encoded, ids, chunks):
    """P(chunk) of every chunk of ``chunks`` (``sentence_chunks``), per sentence (see the module
    docstring): under a first-order CRF without a tag dictionary from one forward-backward of each
    sentence that has a chunk (``_kernels.decode.spans``), else by forcing each chunk's labels
    (``forced_chunk_probabilities``)."""
    from structperc.estimator.marginals import check_probabilistic

    if not any(chunks):
        return [[] for _ in chunks]
    check_probabilistic(model)
    if model.order == 1 and model.normalization == "global" and model.tag_dict is None:
        return chain_chunk_probabilities(model, encoded, ids, chunks)
    return forced_chunk_probabilities(model, encoded, ids, chunks)


def chain_chunk_probabilities(model, encoded, ids, chunks):
    """``chunk_probabilities`` of a first-order CRF: its labels given x are a Markov chain."""
    from structperc._kernels.decode.spans import span_probabilities

    continues = continuation_table(tuple(model.labels))
    span_offsets = np.cumsum([0] + [len(spans) for spans in chunks], dtype=np.int64)
    flat = [span for spans in chunks for span in spans]
    first = np.array([f for _, f, _ in flat], dtype=np.int64)
    last = np.array([t for _, _, t in flat], dtype=np.int64)
    found = span_probabilities(model.weights, model.layout(), model.data(encoded),
                               (np.ascontiguousarray(ids, dtype=np.int64), continues), (span_offsets, first, last))
    at = span_offsets.tolist()
    return [found[at[s]:at[s + 1]].tolist() for s in range(len(chunks))]


@functools.lru_cache(maxsize=64)
def continuation_table(labels: tuple) -> np.ndarray:
    """bool (L, L): whether label c continues a chunk that ends with label p: I-X or E-X after B-X
    or I-X (``chunks.chunk_spans``: E-X and S-X end their chunk)."""
    continues = np.zeros((len(labels), len(labels)), dtype=np.bool_)
    for p, label in enumerate(labels):
        if label[:2] in ("B-", "I-"):
            continues[p] = [other in (f"I-{label[2:]}", f"E-{label[2:]}") for other in labels]
    continues.flags.writeable = False
    return continues


def forced_chunk_probabilities(model, encoded, ids, chunks):
    """``chunk_probabilities`` by forcing: one pass scores every chunk at once. Its input holds a copy
    of each sentence that has a chunk, free, then a copy of the sentence of each chunk, with that
    chunk's labels forced, so that each chunk costs one pass over its own sentence."""
    from structperc._kernels.encode.csr import gather_rows
    from structperc.estimator.marginals import marginals
    from structperc.features.encoded import EncodedCorpus

    scores = [[0.0] * len(spans) for spans in chunks]
    flat = [(s, k, span) for s, spans in enumerate(chunks) for k, span in enumerate(spans)]
    offsets = encoded.sentence_offsets
    with_chunks = [s for s, spans in enumerate(chunks) if spans]
    free_copy = {s: c for c, s in enumerate(with_chunks)}
    of_copy = np.array(with_chunks + [s for s, _, _ in flat], dtype=np.int64)
    lengths = offsets[of_copy + 1] - offsets[of_copy]
    copies = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # token t of copy c is token offsets[s_c] + (t - copies[c]) of the input
    tokens = np.repeat(offsets[of_copy] - copies[:-1], lengths) + np.arange(copies[-1], dtype=np.int64)
    forced = np.full(copies[-1], -1, dtype=np.int64)
    for c, (s, _, (_, first, last)) in enumerate(flat, len(with_chunks)):
        at = copies[c] + first - offsets[s]
        forced[at:at + last - first + 1] = ids[first:last + 1]
    copied = EncodedCorpus(copies, *gather_rows(encoded.feature_offsets, encoded.feature_ids, tokens),
                           *gather_rows(encoded.pair_offsets, encoded.pair_ids, tokens), None,
                           None if encoded.word_ids is None else encoded.word_ids[tokens])
    node, best = marginals(model, copied, forced=forced)
    continues = continuation_table(tuple(model.labels))
    for c, (s, k, (_, first, last)) in enumerate(flat, len(with_chunks)):
        probability = float(np.exp(min(0.0, best[free_copy[s]] - best[c])))
        following = copies[c] + last + 1 - offsets[s]
        if following < copies[c + 1]:
            probability *= max(0.0, 1.0 - float(node[following, continues[ids[last]]].sum()))
        scores[s][k] = probability
    return scores


def tag_corpus(tagger, corpus: Corpus, scores: bool | None = None):
    """(flat predicted labels, per sentence its chunks (type, first, last, score) or None when the
    labels are no chunk scheme) of a raw-text Corpus. scores : None (when the model is probabilistic),
    True or False."""
    corpus = add_input_columns(tagger, corpus)
    ids, _, encoded = tagger.predict_ids(corpus)
    names = tagger.model_.label_names(ids).tolist()
    return names, chunk_annotations(tagger.model_, names, ids, encoded, scores)


def chunk_annotations(model, names, ids, encoded, scores: bool | None = None):
    """Per sentence, its chunks (type, first, last, score) of the predicted labels ``names`` (their
    ids ``ids``) of the encoded input, or None when the labels are no chunk scheme. scores : None
    (when the model is probabilistic), True or False."""
    from structperc.estimator.marginals import NotProbabilisticError, check_probabilistic

    if not is_bio(model.labels):
        return None
    chunks = sentence_chunks(names, encoded.sentence_offsets.tolist())
    if scores is None:
        try:
            check_probabilistic(model)
            scores = True
        except NotProbabilisticError:
            scores = False
    probabilities = chunk_probabilities(model, encoded, ids, chunks) if scores else [[None] * len(c) for c in chunks]
    return [[(*chunk, p) for chunk, p in zip(spans, ps)] for spans, ps in zip(chunks, probabilities)]


def tag_text(tagger, text: str):
    """Sentences of (word, label) of raw text."""
    corpus = text_corpus(text)
    names = tagger.predict_corpus(add_input_columns(tagger, corpus))[0]
    words, offsets = corpus.columns["word"], corpus.sentence_offsets.tolist()
    return [list(zip(words[a:b], names[a:b])) for a, b in zip(offsets[:-1], offsets[1:])]


def text_spans(tagger, text: str) -> list[TextSpan]:
    """The labelled spans of raw text: its chunks for a chunk label set, else one span per word."""
    corpus = text_corpus(text)
    names, chunks = tag_corpus(tagger, corpus)
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    if chunks is None:
        return [TextSpan(s, e, label, None) for s, e, label in zip(starts, ends, names)]
    return [TextSpan(starts[first], ends[last], kind, score)
            for spans in chunks for kind, first, last, score in spans]


__all__ = ["TextSpan", "text_corpus", "tag_text", "text_spans", "tag_corpus", "chunk_annotations", "tag_words",
           "words_corpus", "reads_beside_words", "SEGMENTER"]
