"""Raw text: every non-blank line is a paragraph, split into sentences and words.

The words are those of ``tokenize.word_spans``, the sentences those of ``sentences.sentence_ends``.
The format has four columns and no label: ``word``; ``space_after`` ("1" when space follows the word
or it ends its line, "0" when another word follows at once), as the CoNLL-U reader gives it, so that
templates trained on CoNLL-U's spacing read the text's own; and ``start`` and ``end``, the word's
character offsets in its line. It is input to tag, never training data.
"""

from __future__ import annotations

from structperc.errors import ConfigError
from structperc.readers.base import Parser
from structperc.readers.sentences import sentence_ends
from structperc.readers.tokenize import TOKENIZER, joins_previous, tokenize, word_spans  # noqa: F401 (tokenize: public)

# what splits raw text, recorded with the models that tag it
SEGMENTER = f"{TOKENIZER}; sentences by punctuation and line breaks"
RAW_COLUMNS = ["word", "space_after", "start", "end"]


def paragraph_columns(text: str) -> tuple[list[list[str]], list[int]]:
    """([words, space_after, start, end], the index after each sentence's last word) of one paragraph."""
    spans = word_spans(text)
    words = [text[s.start:s.end] for s in spans]
    space_after = ["0" if i + 1 < len(spans) and spans[i + 1].start == s.end else "1" for i, s in enumerate(spans)]
    return [words, space_after, [str(s.start) for s in spans], [str(s.end) for s in spans]], sentence_ends(text, spans)


# words written against the word before them in text (closing punctuation) or after them (opening)
_NO_SPACE_BEFORE = {",", ".", ";", ":", "!", "?", ")", "]", "}", "%", "...", "''", "”", "’"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "#", "``", "“", "‘"}


def words_columns(words: list[str]) -> list[list[str]]:
    """[words, space_after, start, end] of one sentence given as its words, as ``paragraph_columns``
    gives them for the text the words would be written as: a space between two words, but none before
    a clitic (``tokenize.joins_previous``: do n't) or closing punctuation, nor after opening punctuation.

    >>> words_columns(["She", "did", "n't", "go", "."])[1]
    ['1', '0', '1', '0', '1']
    """
    starts, ends, at = [], [], 0
    for i, word in enumerate(words):
        if i and not (word in _NO_SPACE_BEFORE or words[i - 1] in _NO_SPACE_AFTER
                      or joins_previous(word, words[i - 1])):
            at += 1
        starts.append(at)
        at += len(word)
        ends.append(at)
    space_after = ["0" if i + 1 < len(words) and starts[i + 1] == ends[i] else "1" for i in range(len(words))]
    return [list(words), space_after, [str(v) for v in starts], [str(v) for v in ends]]


class RawParser(Parser):
    """Every non-blank line is a paragraph of sentences (see the module docstring)."""

    format = "raw"
    extensions = (".raw",)
    title = "raw text"
    fixed_columns = RAW_COLUMNS
    default_label = None
    keeps_lines = False

    def __init__(self, path, builder, columns, label, require_label, options):
        if require_label:
            raise ConfigError(f"{path}: raw text has no labels, so it cannot be training or test data; "
                              f"it can only be tagged (a labelled corpus has one token per line, its label last)")
        if label is not None:
            raise ConfigError(f"raw text has no label column, got label {label!r}")
        super().__init__(path, builder, columns, label, require_label, options)

    def feed(self, first_line: int, lines: list[str]) -> None:
        builder = self.builder
        cols = builder.cols
        line_numbers = builder.line_numbers
        for offset, line in enumerate(lines):
            values, ends = paragraph_columns(line)
            if not ends:
                continue
            start = 0
            for end in ends:
                for column, new in zip(cols, values):
                    column.extend(new[start:end])
                line_numbers.extend([first_line + offset] * (end - start))
                builder.close_sentence()
                start = end
