"""The input formats by name, and the format of a file from its extension."""

from __future__ import annotations

import re
from pathlib import Path

from structperc.errors import ConfigError
from structperc.readers.base import Parser
from structperc.readers.conll import ConllParser
from structperc.readers.conllu import ConlluParser
from structperc.readers.ptb import PtbParser
from structperc.readers.raw import RawParser
from structperc.readers.tagged import TaggedParser

DEFAULT_FORMAT = "conll"
FORMATS: dict[str, type[Parser]] = {
    parser.format: parser for parser in (ConllParser, ConlluParser, PtbParser, TaggedParser, RawParser)
}


def detect_format(path) -> str:
    """Format name from the file extension: .conllu -> conllu, .pos -> ptb, .tagged -> tagged,
    .raw -> raw, else conll."""
    suffix = Path(str(path)).suffix.lower()
    for name, parser in FORMATS.items():
        if suffix in parser.extensions:
            return name
    return DEFAULT_FORMAT


def resolve_format(path, format: str | None) -> str:
    """`format`, checked against FORMATS, or the format detected from `path` when None."""
    if format is None:
        return detect_format(path)
    if format not in FORMATS:
        raise ConfigError(f"unknown corpus format {format!r}; valid formats: "
                          f"{', '.join(sorted(FORMATS))}")
    return format


# a word glued to the final punctuation of a sentence: the end of a line of raw text, never a label
_SENTENCE_END = re.compile(r"\w[.!?][\"')\]]?$")


def looks_like_raw_text(path, format: str | None, columns=None, encoding: str = "utf-8") -> bool:
    """Whether the first line of ``path`` that is neither blank nor a comment is a line of raw text
    rather than a token line of ``format`` (``columns``: the format's column names, when known): words
    without a tab where CoNLL-U has ten tab-separated fields; where a CoNLL line has a token and its
    columns, a line that ends a sentence, with a word glued to its final punctuation or with more
    fields than the columns. Standard input ("-") is peeked at, not read. False for the other formats
    and for an empty input."""
    if format not in ("conll", "conllu"):
        return False
    line = _first_line(path, encoding)
    if line is None:
        return False
    fields = line.split()
    if format == "conllu":
        return "\t" not in line and len(fields) > 1
    ends_sentence = fields[-1] in (".", "!", "?") or _SENTENCE_END.search(fields[-1]) is not None
    return len(fields) > 1 and ends_sentence and (columns is None or len(fields) > len(columns)
                                                  or fields[-1] not in (".", "!", "?"))


def _first_line(path, encoding):
    """The first line of the input that is neither blank nor a comment (from at most the first 64 KiB),
    or None."""
    import sys

    if str(path) == "-":
        stream = sys.stdin.buffer
        data = stream.peek(1 << 16)[: 1 << 16] if hasattr(stream, "peek") else b""
    else:
        try:
            with open(path, "rb") as handle:
                data = handle.read(1 << 16)
        except OSError:
            return None  # the reading that tags the input reports it
    text = data.decode(encoding, errors="replace")
    return next((line for line in text.splitlines()
                 if line.strip() and not line.startswith(("#", "-DOCSTART-"))), None)
