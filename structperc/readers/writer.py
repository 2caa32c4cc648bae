"""Writing a tagged corpus: the input columns, the predicted label, any extra columns."""

from __future__ import annotations

import operator
from typing import Sequence, TextIO

from structperc.corpus import Corpus
from structperc.errors import ConfigError, DataError

# output formats besides the input's own: ``tagged`` writes each sentence on one line of word/TAG tokens;
# ``jsonl`` and ``conllu`` write tagged raw text with its offsets (``text_writer``)
OUTPUT_FORMATS = ("tagged", "jsonl", "conllu")
TEXT_OUTPUT_FORMATS = ("jsonl", "conllu")
# the 0-based CoNLL-U field of each column a CoNLL-U corpus reads (``readers.conllu.CONLLU_COLUMNS``)
CONLLU_FIELDS = {"word": 1, "lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7}


def write_tagged(out: TextIO, corpus: Corpus, predicted: Sequence[str],
                 extra_columns: Sequence[Sequence[str]] | None = None,
                 sentence_headers: Sequence[str] | None = None, output_format: str | None = None,
                 keep_gold: bool = False, tag_sep: str = "/") -> None:
    """Write each token's input columns with its predicted label, then any extra columns.

    By the corpus's format, with a blank line after each sentence:

    - conll: the original line + " " + prediction (conlleval-compatible "word pos gold pred");
    - conllu: the original lines, comments and multiword tokens included, with the prediction in the
      label's own field (``upos``, ``xpos``; the parts of a joined label such as ``upos+feats`` each in
      theirs), so that the output is CoNLL-U again; with ``keep_gold`` the gold stays and the
      prediction is an 11th field;
    - ptb, tagged: "word gold pred"; raw: "word pred".

    ``output_format="tagged"`` writes instead one line per sentence of ``word<tag_sep>pred`` tokens.

    Parameters
    ----------
    out : text stream
    corpus : Corpus
    predicted : sequence of str, length n_tokens
    extra_columns : sequence of sequences of str, each of length n_tokens, or None
    sentence_headers : one line per sentence written before it (e.g. a "# ..." comment), or None
    output_format : None (as the input) or "tagged"
    keep_gold : CoNLL-U: add the prediction as a column instead of writing it over the gold label
    tag_sep : the word/tag separator of ``output_format="tagged"``
    """
    n_tokens = corpus.n_tokens
    if len(predicted) != n_tokens:
        raise DataError(f"{len(predicted)} predictions for {n_tokens} tokens")
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"unknown output format {output_format!r}; choose from {', '.join(OUTPUT_FORMATS)} "
                          f"(or none: the input's format)")
    if output_format in TEXT_OUTPUT_FORMATS:
        raise ConfigError(f"the {output_format} output format writes tagged raw text: use readers.text_writer")
    extra_columns = list(extra_columns or [])
    for index, column in enumerate(extra_columns):
        if len(column) != n_tokens:
            raise DataError(f"extra column {index} has {len(column)} values for {n_tokens} tokens")
    offsets = corpus.sentence_offsets.tolist()
    if output_format == "tagged":
        if extra_columns:
            raise ConfigError("the tagged output format has no room for extra columns (marginals)")
        _write_tagged_lines(out, corpus, predicted, offsets, sentence_headers, tag_sep)
        return
    separator = "\t" if corpus.format == "conllu" else " "
    if corpus.lines is not None and corpus.format in ("conll", "conllu"):
        base = corpus.lines
    elif corpus.format == "raw":  # its other columns (spacing, offsets) are the reader's, not the text's
        base = list(corpus.columns["word"])
    else:
        base = [" ".join(fields) for fields in zip(*corpus.columns.values())]
    fields = None
    if corpus.format == "conllu" and not keep_gold and corpus.lines is not None:
        fields = _conllu_label_fields(corpus.label)
    if fields is not None:
        rows = _conllu_rows(base, predicted, fields, extra_columns)
    elif extra_columns:
        rows = [separator.join(fields) for fields in zip(base, predicted, *extra_columns)]
    else:
        suffix = {tag: separator + tag for tag in set(predicted)}
        rows = list(map(operator.add, base, map(suffix.__getitem__, predicted)))
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


def _write_tagged_lines(out, corpus, predicted, offsets, sentence_headers, tag_sep):
    words = corpus.columns["word"]
    lines = []
    for i, (start, end) in enumerate(zip(offsets[:-1], offsets[1:])):
        if start == end:
            continue
        if sentence_headers is not None:
            lines.append(sentence_headers[i])
        lines.append(" ".join(word + tag_sep + tag for word, tag in zip(words[start:end], predicted[start:end])))
    if lines:
        out.write("\n".join(lines))
        out.write("\n")


def _conllu_label_fields(label):
    """The CoNLL-U fields (0-based) that the label ``label`` fills, one per part of a joined label
    (``upos+feats``); None when one of them is not a CoNLL-U field (the prediction is appended then)."""
    if label is None:
        return None
    parts = label.split("+")
    if any(part not in CONLLU_FIELDS for part in parts):
        return None
    return [CONLLU_FIELDS[part] for part in parts]


def _conllu_rows(entries, predicted, fields, extra_columns):
    """CoNLL-U rows with the prediction in ``fields``. An entry is a word's line, after the
    comment, multiword-token and empty-node lines that precede it (``ConlluParser``), all joined
    by newlines; the word's line is the one whose ID is a plain integer."""
    n_parts = len(fields)
    rows = []
    for k, (entry, label) in enumerate(zip(entries, predicted)):
        lines = entry.split("\n") if "\n" in entry else [entry]
        at = next((i for i, line in enumerate(lines) if line.split("\t", 1)[0].isdigit()), len(lines) - 1)
        columns = lines[at].split("\t")
        # a joined label's parts were joined with "|"; the last part (feats) may hold "|" itself
        values = label.split("|", n_parts - 1) if n_parts > 1 else [label]
        values += ["_"] * (n_parts - len(values))
        for field, value in zip(fields, values):
            columns[field] = value
        columns.extend(column[k] for column in extra_columns)
        lines[at] = "\t".join(columns)
        rows.append("\n".join(lines))
    return rows
