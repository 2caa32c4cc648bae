"""A request's input to a Corpus, and the tagged Corpus to the answer.

Raw text is split as ``structperc tag --output-format jsonl`` splits it (``estimator.text.text_corpus``):
every token's offsets are characters into the request's text. Tokens given by the client
(``sentences``) are kept as given; their offsets are into the sentence's tokens joined by one space.
Both are tagged by ``estimator.text.tag_corpus``, which adds the columns a model's column taggers give
(a chunker's POS) and scores the spans of a probabilistic model.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from structperc.corpus import Corpus
from structperc.readers.raw import RAW_COLUMNS
from structperc.readers.text_writer import sentence_text


@dataclass(frozen=True)
class TagOptions:
    """What a request asks besides the tags: k : the k best labelings (None: none); marginals : P(label |
    x) of every label at every token; span_scores : each span's probability (None: when the model has
    them)."""
    k: int | None = None
    marginals: bool = False
    span_scores: bool | None = None


def tokens_corpus(sentences: list[list[str]]) -> Corpus:
    """The raw-text Corpus of tokenized sentences: offsets into each sentence's tokens joined by one space,
    every token followed by a space (``space_after`` "1") but the last."""
    words, space_after, starts, ends, sentence_offsets, line_numbers = [], [], [], [], [0], []
    for number, tokens in enumerate(sentences, 1):
        at = 0
        for i, token in enumerate(tokens):
            words.append(token)
            space_after.append("1" if i + 1 < len(tokens) else "0")
            starts.append(str(at))
            ends.append(str(at + len(token)))
            at += len(token) + 1
        line_numbers.extend([number] * len(tokens))
        sentence_offsets.append(len(words))
    columns = dict(zip(RAW_COLUMNS, (words, space_after, starts, ends)))
    return Corpus(columns, np.array(sentence_offsets, dtype=np.int64), None, "<request>",
                  np.array(line_numbers, dtype=np.int64), format="raw")


def text_corpus(text: str) -> Corpus:
    from structperc.estimator.text import text_corpus as split_text

    return split_text(text, "<request>")


def sentence_lengths(corpus: Corpus) -> np.ndarray:
    return np.diff(corpus.sentence_offsets)


def tag(served, corpus: Corpus, options: TagOptions) -> tuple[list, list | None]:
    """(flat labels, per sentence its chunks (type, first, last, score) or None) of ``corpus``."""
    from structperc.estimator.text import tag_corpus

    scores = options.span_scores
    if scores and not served.description["probabilistic"]:
        scores = False
    return tag_corpus(served.tagger, corpus, scores)


def answer(served, corpus: Corpus, options: TagOptions, texts=None) -> list[dict | None]:
    """Per sentence of ``corpus`` (None for an empty one): ``text``, ``tokens`` (text, start, end),
    ``tags``; ``spans`` (start, end, label and, for a probabilistic model, score) for a chunk label set;
    ``kbest`` ([{tags, score}], best first) and ``marginals`` ([{label: P}] per token) when asked.

    texts : None, or per sentence the text its offsets are into (None for a sentence of given tokens,
        whose text is its tokens joined by one space)."""
    offsets = corpus.sentence_offsets.tolist()
    if offsets[-1] == 0:
        return [None] * corpus.n_sentences
    names, chunks = tag(served, corpus, options)
    words = corpus.columns["word"]
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    kbest = kbest_lists(served, corpus, options.k) if options.k else None
    marginals = served.tagger.predict_marginals(corpus) if options.marginals else None
    out = []
    for s, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        if a == b:
            out.append(None)
            continue
        text = texts[s] if texts is not None else None
        sentence = {"text": text[starts[a]:ends[b - 1]] if text is not None
                    else sentence_text(words[a:b], starts[a:b], ends[a:b]),
                    "tokens": [{"text": words[i], "start": starts[i], "end": ends[i]} for i in range(a, b)],
                    "tags": names[a:b]}
        if chunks is not None:
            sentence["spans"] = [{"start": starts[first], "end": ends[last], "label": kind,
                                  **({} if score is None else {"score": round(score, 6)})}
                                 for kind, first, last, score in chunks[s]]
        if kbest is not None:
            sentence["kbest"] = kbest[s]
        if marginals is not None:
            sentence["marginals"] = [{label: round(p, 6) for label, p in row.items()} for row in marginals[s]]
        out.append(sentence)
    return out


def tag_batch(served, corpora: list[Corpus], texts: list, options: TagOptions) -> list[list[dict]]:
    """``answer`` of several requests' corpora (``texts``: each one's text, or None for tokens) tagged as
    one corpus, split back per request: one call of each kernel for the batch, not one per request."""
    from structperc.corpus import concatenate

    merged = concatenate(corpora) if len(corpora) > 1 else corpora[0]
    per_sentence = [text for corpus, text in zip(corpora, texts) for _ in range(corpus.n_sentences)]
    sentences = answer(served, merged, options, per_sentence)
    out, at = [], 0
    for corpus in corpora:
        out.append([s for s in sentences[at:at + corpus.n_sentences] if s is not None])
        at += corpus.n_sentences
    return out


def kbest_lists(served, corpus: Corpus, k: int) -> list[list[dict]]:
    """Per sentence, its k best labelings as {"tags", "score"} (``nbest.lists.nbest_corpus``)."""
    from structperc.nbest.lists import nbest_corpus

    nb = nbest_corpus(served.tagger, corpus, k)
    labels = nb.label_names
    out = []
    for s in range(corpus.n_sentences):
        candidates = []
        for j in range(nb.candidate_offsets[s], nb.candidate_offsets[s + 1]):
            path = nb.paths[nb.path_offsets[j]:nb.path_offsets[j + 1]]
            candidates.append({"tags": [labels[c] for c in path], "score": round(float(nb.scores[j]), 6)})
        out.append(candidates)
    return out


def tag_text(served, text: str, options: TagOptions) -> list[dict]:
    corpus = text_corpus(text)
    return [s for s in answer(served, corpus, options, [text] * corpus.n_sentences) if s is not None]


def explain_token(served, tokens: list[str], token: int, top: int = 8) -> dict:
    """Why the model labels token ``token`` of a tokenized sentence as it does: its label, the runner-up,
    the margin, the ``top`` features that favour it most (the rest summed) and the transition terms
    (``estimator.explaining.explain``)."""
    from structperc.estimator.explaining import explain
    from structperc.estimator.text import add_input_columns

    corpus = add_input_columns(served.tagger, tokens_corpus([tokens]))
    explanation = explain(served.tagger, corpus)
    entry = dict(explanation["tokens"][token])
    features = entry["features"]
    if len(features) > top:
        rest = features[top:]
        entry["features"] = features[:top] + [{
            "feature": f"({sum(f.get('more', 1) for f in rest)} more features)",
            "value": 1.0, "weight": sum(f["value"] * f["weight"] for f in rest),
            "other_weight": sum(f["value"] * f["other_weight"] for f in rest)}]
    return {"index": token, "score": explanation["score"], **entry}


def conllu(served, corpus: Corpus) -> str:
    """CoNLL-U of the tagged corpus: the prediction in the model's own field (upos, xpos, ...; another
    label in MISC as ``Label=...``), ``# text`` per sentence, ``SpaceAfter=No`` (``readers.text_writer``)."""
    from structperc.readers.text_writer import write_conllu

    names, _ = tag(served, corpus, TagOptions(span_scores=False))
    out = io.StringIO()
    write_conllu(out, corpus, names, served.description["conllu_field"])
    return out.getvalue()
