"""The input formats by name, and the format of a file from its extension."""

from __future__ import annotations

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
