"""Writing a tagged corpus: the input columns, the predicted label, any extra columns."""

from __future__ import annotations

import operator
from typing import Sequence, TextIO

from structperc.corpus import Corpus


def write_tagged(out: TextIO, corpus: Corpus, predicted: Sequence[str],
                 extra_columns: Sequence[Sequence[str]] | None = None,
                 sentence_headers: Sequence[str] | None = None) -> None:
    """Write each token's input columns, then its predicted label, then any extra columns.

    The output is conlleval-compatible ("word pos gold pred"), with a blank line after each
    sentence. conll: the original line + " " + prediction when available; conllu: the original
    10-field line + "\\t" + prediction; ptb and tagged: "word gold pred".

    Parameters
    ----------
    out : text stream
    corpus : Corpus
    predicted : sequence of str, length n_tokens
    extra_columns : sequence of sequences of str, each of length n_tokens, or None
    sentence_headers : one line per sentence written before it (e.g. a "# ..." comment), or None
    """
    n_tokens = corpus.n_tokens
    if len(predicted) != n_tokens:
        raise ValueError(f"{len(predicted)} predictions for {n_tokens} tokens")
    extra_columns = list(extra_columns or [])
    for index, column in enumerate(extra_columns):
        if len(column) != n_tokens:
            raise ValueError(f"extra column {index} has {len(column)} values for {n_tokens} tokens")
    separator = "\t" if corpus.format == "conllu" else " "
    if corpus.lines is not None and corpus.format in ("conll", "conllu"):
        base = corpus.lines
    else:
        base = [" ".join(fields) for fields in zip(*corpus.columns.values())]
    if extra_columns:
        rows = [separator.join(fields) for fields in zip(base, predicted, *extra_columns)]
    else:
        suffix = {tag: separator + tag for tag in set(predicted)}
        rows = list(map(operator.add, base, map(suffix.__getitem__, predicted)))
    offsets = corpus.sentence_offsets.tolist()
    # one join for the batch: the last row of a sentence carries the blank line after it, the
    # first row the sentence's header
    for end in offsets[1:]:
        if end > 0:
            rows[end - 1] += "\n"
    if sentence_headers is not None:
        for i, start in enumerate(offsets[:-1]):
            if start < offsets[i + 1]:
                rows[start] = sentence_headers[i] + "\n" + rows[start]
    if rows:
        out.write("\n".join(rows))
        out.write("\n")
