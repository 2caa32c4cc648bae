"""Writing tagged raw text with its character offsets: one JSON object per sentence (``jsonl``), or
CoNLL-U as UD writes it (``conllu``): ``# text``, a multiword-token line (``2-3	didn't``) before the
words of each split clitic, and ``SpaceAfter=No`` on a token (the range, for a multiword token) that
the next follows at once.

The input must be raw text (``readers.raw``): its ``start`` and ``end`` columns are the offsets,
counted in characters from the start of the word's line (the ``line`` of the object, 1-based).
"""
from __future__ import annotations

import json
from typing import Sequence, TextIO

from structperc.corpus import Corpus
from structperc.readers.tokenize import joined_words


def sentence_text(words, starts, ends):
    """The text of a sentence from its words and offsets (a gap of n characters as n spaces)."""
    parts = []
    for i, word in enumerate(words):
        if i:
            parts.append(" " * (starts[i] - ends[i - 1]))
        parts.append(word)
    return "".join(parts)


def write_jsonl(out: TextIO, corpus: Corpus, predicted: Sequence[str], chunks=None) -> None:
    """One line per sentence: ``{"line", "text", "tokens": [{"text", "start", "end"}], "tags",
    "spans": [{"start", "end", "label", "score"}]}``; ``spans`` only when ``chunks`` is given (per
    sentence, (type, first token, last token, score or None) with flat token indices), and ``score``
    only when it is not None."""
    words = corpus.columns["word"]
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    offsets = corpus.sentence_offsets.tolist()
    lines = []
    for s, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        if a == b:
            continue
        record = {"line": int(corpus.line_numbers[a]), "text": sentence_text(words[a:b], starts[a:b], ends[a:b]),
                  "tokens": [{"text": words[i], "start": starts[i], "end": ends[i]} for i in range(a, b)],
                  "tags": list(predicted[a:b])}
        if chunks is not None:
            record["spans"] = [{"start": starts[first], "end": ends[last], "label": kind,
                                **({} if score is None else {"score": round(score, 6)})}
                               for kind, first, last, score in chunks[s]]
        lines.append(json.dumps(record, ensure_ascii=False))
    if lines:
        out.write("\n".join(lines) + "\n")


def write_conllu(out: TextIO, corpus: Corpus, predicted: Sequence[str], label: str = "upos") -> None:
    """CoNLL-U: ``# text`` per sentence, the prediction in the ``label`` field (upos, xpos, or another
    label in MISC as ``Label=...``), ``SpaceAfter=No`` where the next word follows at once; a
    multiword-token line before the words of a split clitic, which carries their ``SpaceAfter``."""
    from structperc.readers.writer import CONLLU_FIELDS

    words = corpus.columns["word"]
    space_after = corpus.columns["space_after"]
    starts = [int(v) for v in corpus.columns["start"]]
    ends = [int(v) for v in corpus.columns["end"]]
    offsets = corpus.sentence_offsets.tolist()
    parts = label.split("+") if label else []
    fields = [CONLLU_FIELDS.get(part) for part in parts]
    rows = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        if a == b:
            continue
        text = sentence_text(words[a:b], starts[a:b], ends[a:b])
        rows.append(f"# text = {text}")
        ranges = multiword_tokens(text, [(start - starts[a], end - starts[a]) for start, end
                                         in zip(starts[a:b], ends[a:b])])
        range_end = -1
        for i in range(a, b):
            if i - a in ranges:
                last = a + ranges[i - a]
                range_end = last
                surface = text[starts[i] - starts[a]:ends[last] - starts[a]]
                range_misc = "SpaceAfter=No" if space_after[last] == "0" and last + 1 < b else "_"
                rows.append("\t".join([f"{i - a + 1}-{last - a + 1}", surface] + ["_"] * 7 + [range_misc]))
            columns = [str(i - a + 1), words[i]] + ["_"] * 8
            misc = []
            if fields and None not in fields:
                values = predicted[i].split("|", len(fields) - 1) if len(fields) > 1 else [predicted[i]]
                for field, value in zip(fields, values + ["_"] * (len(fields) - len(values))):
                    columns[field] = value
            else:
                misc.append(f"Label={predicted[i]}")
            if space_after[i] == "0" and i + 1 < b and i > range_end:
                misc.append("SpaceAfter=No")
            columns[9] = "|".join(misc) or "_"
            rows.append("\t".join(columns))
        rows.append("")
    if rows:
        out.write("\n".join(rows) + "\n")


def multiword_tokens(text: str, bounds) -> dict[int, int]:
    """The multiword tokens of a sentence's words: {first word: last word} (0-based) for each run of a
    word and the clitics written against it (``tokenize.joined_words``); ``bounds`` are the words'
    ``(start, end)`` characters in ``text``.

    >>> multiword_tokens("I don't", [(0, 1), (2, 4), (4, 7)])
    {1: 2}
    """
    ranges = {}
    first = 0
    for i, joined in enumerate(joined_words(text, bounds)):
        if joined:
            ranges[first] = i
        else:
            first = i
    return ranges
