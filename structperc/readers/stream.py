"""The streaming layer shared by every format: chunked reading, sentence building, batching.

    read_chunks         bytes -> decoded lists of lines (chunked at line boundaries, so decoding
                         errors can be reported by line number and inputs larger than memory
                         stream through)
    Parser.feed          lines -> token columns + sentence ends, collected in a SentenceBuilder
    SentenceBuilder.take -> Corpus batches of whole sentences

`read_corpus` is `iter_corpus` with one unbounded batch.
"""

from __future__ import annotations

import codecs
import re
import sys
import warnings
from typing import Iterable, Iterator, Sequence

import numpy as np

from structperc.chunks import check_only_types, chunk_types, map_only_types
from structperc.corpus import Corpus, concatenate
from structperc.errors import ConfigError, DataError, InputFormatError, StructpercWarning
from structperc.readers.base import STDIN_NAME
from structperc.readers.encodings import likely_encoding
from structperc.readers.registry import FORMATS, resolve_format
from structperc.utils.collector import collector_paused

_CHUNK_BYTES = 1 << 20
_TRAILING_SPACE = re.compile(r"[^\S\n]\n|[^\S\n]\Z")
# ASCII characters other than "\n" that str.isspace() accepts
_ASCII_SPACE = (" \n", "\t\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _needs_rstrip(text: str) -> bool:
    """Whether some line of ``text`` ends in whitespace (so lines must be right-stripped).

    Plain ASCII text is checked with substring searches (fast); other text with a regex."""
    if text.isascii():
        return any(marker in text for marker in _ASCII_SPACE) or text[-1:] in (" ", "\t")
    return _TRAILING_SPACE.search(text) is not None


def display_path(path) -> str:
    """The file name used in messages ("<stdin>" for "-")."""
    return STDIN_NAME if str(path) == "-" else str(path)


def _open_binary(path):
    if str(path) == "-":
        return sys.stdin.buffer, False
    name = str(path)
    try:
        return open(name, "rb"), True
    except FileNotFoundError:
        raise InputFormatError(name, None, "no such file") from None
    except IsADirectoryError:
        raise InputFormatError(name, None, "is a directory, expected a corpus file") from None
    except PermissionError:
        raise InputFormatError(name, None, "permission denied") from None


def read_chunks(path, encoding: str, chunk_bytes: int = _CHUNK_BYTES, byte_range=None
                 ) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number of the first line, lines without newline), chunked at line boundaries.

    Trailing whitespace (including "\\r") is stripped from every line. byte_range: None, or
    (start, stop, line number at start) to read only the lines of bytes [start, stop) of a file
    (start and stop at line starts).
    """
    name = display_path(path)
    stream, owned = _open_binary(path)
    # a single-byte encoding decodes any bytes: UTF-8 text read so is garbled without an error
    check_utf8 = _any_bytes_decode(encoding)
    try:
        first_line, left = 1, None
        if byte_range is not None:
            start, stop, first_line = byte_range
            stream.seek(start)
            left = stop - start
        while True:
            data = stream.read(chunk_bytes if left is None else min(chunk_bytes, left))
            if not data:
                return
            if not data.endswith(b"\n") and (left is None or len(data) < left):
                data += stream.readline()
            if left is not None:
                left -= len(data)
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as error:
                line = first_line + data.count(b"\n", 0, error.start)
                byte = data[error.start:error.start + 1]
                guess = likely_encoding(data, error.start, encoding)
                if b"\0" in data and not (guess or "").startswith("utf"):  # NUL bytes but not UTF-16: not text
                    raise InputFormatError(
                        name, line, f"cannot decode byte {byte!r} as {encoding}: the file is not text (it holds "
                        f"NUL bytes); give a text file, or a text file's own encoding as encoding=NAME") from None
                hint = (f"it looks like {guess}: give encoding={guess}, or the file's own" if guess
                        else "give the file's own encoding as encoding=NAME")
                raise InputFormatError(
                    name, line, f"cannot decode byte {byte!r} as "
                    f"{encoding} ({error.reason}): the file has another encoding; {hint}") from None
            except LookupError:
                raise ConfigError(f"unknown encoding {encoding!r}") from None
            if check_utf8 and not data.isascii():
                check_utf8 = False
                _warn_if_utf8(data, encoding, name, first_line)
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            if first_line == 1 and lines and lines[0].startswith("\ufeff"):
                lines[0] = lines[0][1:]
            if _needs_rstrip(text):
                lines = [line.rstrip() for line in lines]
            yield first_line, lines
            first_line += len(lines)
    finally:
        if owned:
            stream.close()


def _any_bytes_decode(encoding: str) -> bool:
    """Whether `encoding` is one of the single-byte encodings in which every byte is a character."""
    try:
        return codecs.lookup(encoding).name in ("iso8859-1", "iso8859-15", "cp1252")
    except LookupError:
        return False  # reported when the first chunk is decoded


def _warn_if_utf8(data: bytes, encoding: str, name: str, first_line: int) -> None:
    """A StructpercWarning when the first non-ASCII chunk, read as `encoding`, is valid UTF-8 with
    characters outside ASCII: then it is UTF-8, almost surely, and each such character becomes two or three."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    at = next(i for i, byte in enumerate(data) if byte >= 0x80)
    line = first_line + data.count(b"\n", 0, at)
    start = max(data.rfind(space, 0, at) for space in (b" ", b"\t", b"\n")) + 1
    word = data[start:].split(None, 1)[0]
    warnings.warn(StructpercWarning(
        f"read as {encoding}, but the text is valid UTF-8: {word.decode('utf-8')!r} reads as "
        f"{word.decode(encoding, 'replace')!r}; give the encoding utf-8 if that is the file's", name, line),
        stacklevel=4)


class SentenceBuilder:
    """Token columns and sentence boundaries, cut into Corpus batches of whole sentences.

    `cols[k]` holds column k (in the parser's `names` order) of every pending token;
    `line_numbers` and `lines` hold each pending token's line number and original line.
    """

    def __init__(self, path: str, format: str, keeps_lines: bool, lines_follow_relabelling: bool):
        self.path = path
        self.format = format
        self.keeps_lines = keeps_lines
        self.lines_follow_relabelling = lines_follow_relabelling
        self.cols: list[list[str]] = []
        self.line_numbers: list[int] = []
        self.lines: list[str] = []
        self._ends: list[int] = []  # pending token count after each closed sentence
        self.n_emitted = 0
        self.types_seen: set[str] = set()  # chunk types of the labels, before only_types maps them

    @property
    def open_sentence_start(self) -> int:
        """Index of the first pending token after the last closed sentence."""
        return self._ends[-1] if self._ends else 0

    def close_sentence(self) -> None:
        """End the open sentence here, unless it has no tokens."""
        n = len(self.line_numbers)
        if n > self.open_sentence_start:
            self._ends.append(n)

    def close_sentences_at(self, token_counts: Sequence[int]) -> None:
        """End a sentence after each of these pending token counts (increasing, each one past
        the open sentence's start)."""
        self._ends.extend(token_counts)

    def reopen_last_sentence(self) -> None:
        """Undo the last close: its tokens and the ones after them form one open sentence."""
        self._ends.pop()

    @property
    def n_closed(self) -> int:
        return len(self._ends)

    def take(self, n_sentences: int, names: list[str], label: str | None,
             only_types) -> Corpus:
        """Remove the first n_sentences closed sentences and return them as a Corpus."""
        n_tokens = self._ends[n_sentences - 1]
        taken = []
        for column in self.cols:
            taken.append(column[:n_tokens])
            del column[:n_tokens]
        line_numbers = self.line_numbers[:n_tokens]
        del self.line_numbers[:n_tokens]
        lines = None
        if self.keeps_lines:
            lines = self.lines[:n_tokens]
            del self.lines[:n_tokens]
        offsets = np.zeros(n_sentences + 1, dtype=np.int64)
        offsets[1:] = self._ends[:n_sentences]
        self._ends = [end - n_tokens for end in self._ends[n_sentences:]]

        columns = dict(zip(names, taken))
        if only_types is not None and label is not None:
            self.types_seen |= chunk_types(columns[label])
            columns[label] = map_only_types(columns[label], only_types)
            if not self.lines_follow_relabelling:
                lines = None
        self.n_emitted += n_sentences
        return Corpus(columns=columns, sentence_offsets=offsets, label=label, path=self.path,
                      line_numbers=np.array(line_numbers, dtype=np.int64), lines=lines,
                      format=self.format)


def _format_options(format: str, tag_sep: str | None) -> dict[str, object]:
    """The reader options given, checked against what `format` takes."""
    options = {} if tag_sep is None else {"tag_sep": tag_sep}
    for name in options:
        if name not in FORMATS[format].options:
            takers = sorted(key for key, parser in FORMATS.items() if name in parser.options)
            raise ConfigError(f"option {name} applies only to format {', '.join(takers)}, "
                              f"not to {format}")
    return options


def iter_corpus(path, format: str | None = None, columns: Sequence[str] | None = None,
                label: str | None = None, encoding: str = "utf-8",
                only_types: Iterable[str] | None = None, require_label: bool = False,
                batch_sentences: int | None = 5000, tag_sep: str | None = None, byte_range=None,
                allow_empty: bool = False) -> Iterator[Corpus]:
    """Read a corpus incrementally, yielding batches of whole sentences.

    Parameters
    ----------
    path : str or Path
        The file, or "-" for standard input.
    format : {"conll", "conllu", "ptb", "tagged"} or None
        None: from the extension (see `detect_format`).
    columns : list of str or None
        conll only: column names (must include "word"). None: from the first token line's field
        count via `default_columns`.
    label : str or None
        Name of the label column. Default: the last conll column, "upos" for conllu, "pos" for
        ptb and tagged.
    encoding : str
        Text encoding of the file.
    only_types : iterable of str or None
        Keep only chunk tags of these types in the label column; others become "O". A ConfigError at
        the end when the labels have none of these types (a StructpercWarning when some are missing).
    require_label : bool
        When False, conll lines may lack the label column (one field fewer than `columns`);
        the batches then have ``label=None``.
    batch_sentences : int or None
        Sentences per batch (the last may be smaller); None for one batch.
    tag_sep : str or None
        tagged only: the separator between word and tag (default "/"); tokens are split at its
        last occurrence.
    byte_range : None, or (start, stop, first line number): read only that part of the file, which
        starts and ends at a sentence boundary (``training_read.read_training_columns``); a part
        with no sentence yields nothing instead of raising.
    allow_empty : an input without sentences yields nothing instead of raising (tagging: empty in,
        empty out).

    Raises
    ------
    InputFormatError
        Malformed or missing input; the message names file:line.
    """
    format = resolve_format(path, format)
    options = _format_options(format, tag_sep)
    if batch_sentences is not None and batch_sentences < 1:
        raise DataError(f"batch_sentences must be positive, got {batch_sentences!r}")
    only_types = None if only_types is None else frozenset(only_types)
    name = display_path(path)
    parser_class = FORMATS[format]
    builder = SentenceBuilder(name, format, parser_class.keeps_lines,
                              parser_class.lines_follow_relabelling)
    parser = parser_class(name, builder, columns, label, require_label, options)

    def take(n):
        return builder.take(n, parser.names, parser.label, only_types)

    for first_line, lines in read_chunks(path, encoding, byte_range=byte_range):
        with collector_paused():
            parser.feed(first_line, lines)
        # keep one closed sentence back: the parser may still reopen it
        while batch_sentences is not None and builder.n_closed > batch_sentences:
            with collector_paused():
                batch = take(batch_sentences)
            yield batch
    parser.finish()
    while builder.n_closed:
        with collector_paused():
            batch = take(builder.n_closed if batch_sentences is None
                         else min(batch_sentences, builder.n_closed))
        yield batch
    if builder.n_emitted == 0 and byte_range is None and not allow_empty:
        raise InputFormatError(name, None, "no sentences found")
    if only_types is not None and parser.label is not None and byte_range is None:
        check_only_types(only_types, builder.types_seen, name)


def read_corpus(path, format: str | None = None, columns: Sequence[str] | None = None,
                label: str | None = None, encoding: str = "utf-8",
                only_types: Iterable[str] | None = None, require_label: bool = True,
                tag_sep: str | None = None) -> Corpus:
    """Read a whole corpus file into memory. Parameters as for `iter_corpus`. The corpus keeps the
    options that a model trained on it records (``Corpus.read_options``)."""
    batches = list(iter_corpus(path, format=format, columns=columns, label=label,
                               encoding=encoding, only_types=only_types,
                               require_label=require_label, batch_sentences=None,
                               tag_sep=tag_sep))
    corpus = concatenate(batches)
    corpus.read_options = {"encoding": encoding, **({} if only_types is None else {"only_types": list(only_types)}),
                           **({} if tag_sep is None else {"tag_sep": tag_sep})}
    return corpus


def read_ptb_files(paths: Iterable, label: str | None = None, encoding: str = "utf-8",
                   only_types: Iterable[str] | None = None) -> Corpus:
    """Read several PTB tagged .pos files into one Corpus (files in the given order)."""
    paths = list(paths)
    if not paths:
        raise DataError("read_ptb_files needs at least one file")
    return concatenate([read_corpus(path, format="ptb", label=label, encoding=encoding,
                                    only_types=only_types) for path in paths])
