"""Corpus type, readers and writers: CoNLL columns, CoNLL-U (via the conllu package), PTB tagged .pos.

All readers share one streaming pipeline:

    _read_chunks   bytes -> decoded lists of lines (chunked at line boundaries, so decoding errors
                   can be reported by line number and inputs larger than memory stream through)
    _*Parser.feed  lines -> token columns + sentence boundaries, collected in a _SentenceBuilder
    _SentenceBuilder.take  -> Corpus batches of whole sentences

`read_corpus` is `iter_corpus` with one unbounded batch.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence, TextIO

import conllu
import numpy as np
from conllu.exceptions import ParseException
from conllu.serializer import serialize_field

from structperc.chunks import map_only_types
from structperc.errors import ConfigError, InputFormatError

STDIN_NAME = "<stdin>"
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

# The last column is derived from MISC: "0" when the token is written with no space after it
# (SpaceAfter=No, on the word or on the multiword token it ends; the words inside a multiword token
# have none), "1" otherwise.
CONLLU_COLUMNS = ["word", "lemma", "upos", "xpos", "feats", "head", "deprel", "space_after"]
# conllu token keys of the columns read as they are, in the order of CONLLU_COLUMNS
_CONLLU_KEYS = ["form", "lemma", "upos", "xpos", "feats", "head", "deprel"]
PTB_COLUMNS = ["word", "pos"]
# PTB tags of tokens that may follow the sentence-final "." and still belong to the sentence
_PTB_CLOSING_TAGS = frozenset(["''", ")", "-RRB-", "}", "-RCB-"])


@dataclass
class Corpus:
    """A batch of sentences, stored column-wise.

    Attributes
    ----------
    columns : dict of str to list of str
        Every input column by name, flat over all tokens, in file order. The label column is
        included when the input has it.
    sentence_offsets : ndarray of int64, shape (n_sentences + 1,)
        Tokens of sentence i are ``[sentence_offsets[i], sentence_offsets[i + 1])``.
    label : str or None
        Name of the label column in `columns`, or None when the input had no label column.
    path : str
        File name for messages (``"<stdin>"`` for standard input).
    line_numbers : ndarray of int64, shape (n_tokens,)
        1-based source line of each token.
    lines : list of str or None
        Original token lines without newline (conll, conllu), reused by `write_tagged`. None when
        the reader changed labels (``only_types``) or the format has no per-token lines (ptb).
    format : str
        One of FORMATS.
    paths : list of str or None
        When the corpus concatenates several files: their names, indexed by `file_ids`.
    file_ids : ndarray of int64, shape (n_tokens,), or None
        Index into `paths` of each token's file (None: every token comes from `path`).
    """

    columns: dict[str, list[str]]
    sentence_offsets: np.ndarray
    label: str | None
    path: str
    line_numbers: np.ndarray
    lines: list[str] | None = None
    format: str = "conll"
    paths: list[str] | None = None
    file_ids: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_offsets) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.sentence_offsets[-1])

    def labels(self) -> list[str] | None:
        """The label column, or None when the input had none."""
        return None if self.label is None else self.columns[self.label]

    def where(self, token_index: int) -> tuple[str, int]:
        """(file name, 1-based line) of a token, for error messages."""
        path = self.path if self.file_ids is None else self.paths[self.file_ids[token_index]]
        return path, int(self.line_numbers[token_index])

    def sentence_tokens(self, i: int) -> list[dict[str, str]]:
        """Tokens of sentence i as dicts column name -> value (slow; for inspection and tests)."""
        start, end = int(self.sentence_offsets[i]), int(self.sentence_offsets[i + 1])
        names = list(self.columns)
        return [{name: self.columns[name][t] for name in names} for t in range(start, end)]

    def subset(self, sentence_indices: Iterable[int]) -> "Corpus":
        """A new Corpus holding the given sentences in the given order (dev slices, jackknifing)."""
        indices = np.asarray(list(sentence_indices) if not isinstance(sentence_indices, np.ndarray)
                             else sentence_indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_sentences):
            raise IndexError(f"sentence index out of range 0..{self.n_sentences - 1}")
        starts = self.sentence_offsets[indices]
        lengths = self.sentence_offsets[indices + 1] - starts
        offsets = np.zeros(len(indices) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # token_index[k] = starts[s] + (k - offsets[s]) for the sentence s holding new token k
        token_index = (np.repeat(starts - offsets[:-1], lengths)
                       + np.arange(offsets[-1], dtype=np.int64))
        pick = _picker(token_index)
        return Corpus(
            columns={name: pick(values) for name, values in self.columns.items()},
            sentence_offsets=offsets,
            label=self.label,
            path=self.path,
            line_numbers=self.line_numbers[token_index],
            lines=None if self.lines is None else pick(self.lines),
            format=self.format,
            paths=self.paths,
            file_ids=None if self.file_ids is None else self.file_ids[token_index],
        )


def _picker(token_index: np.ndarray):
    """A function list -> list of the items at token_index."""
    if len(token_index) == 0:
        return lambda values: []
    if len(token_index) == 1:
        only = int(token_index[0])
        return lambda values: [values[only]]
    getter = operator.itemgetter(*token_index.tolist())
    return lambda values: list(getter(values))


def concatenate(corpora: Sequence[Corpus]) -> Corpus:
    """One Corpus holding the sentences of `corpora` in order.

    All parts must have the same column names, label and format. Each token keeps its file and
    line (see `Corpus.where`).
    """
    corpora = list(corpora)
    if not corpora:
        raise ValueError("concatenate needs at least one corpus")
    first = corpora[0]
    for other in corpora[1:]:
        if list(other.columns) != list(first.columns) or other.label != first.label:
            raise ValueError(
                f"cannot concatenate {other.path!r} (columns {list(other.columns)}, label "
                f"{other.label!r}) with {first.path!r} (columns {list(first.columns)}, label "
                f"{first.label!r})")
        if other.format != first.format:
            raise ValueError(f"cannot concatenate formats {first.format!r} and {other.format!r}")
    if len(corpora) == 1:
        return first

    paths: list[str] = []
    path_index: dict[str, int] = {}
    file_ids = []
    for part in corpora:
        part_paths = part.paths if part.paths is not None else [part.path]
        remap = np.array([path_index.setdefault(p, len(path_index)) for p in part_paths],
                         dtype=np.int64)
        for p in part_paths:
            if p not in paths:
                paths.append(p)
        ids = part.file_ids if part.file_ids is not None else np.zeros(part.n_tokens, np.int64)
        file_ids.append(remap[ids])

    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for part in corpora:
        offsets.append(part.sentence_offsets[1:] + base)
        base += part.n_tokens
    columns = {name: [] for name in first.columns}
    for part in corpora:
        for name, values in part.columns.items():
            columns[name].extend(values)
    lines = None
    if all(part.lines is not None for part in corpora):
        lines = [line for part in corpora for line in part.lines]
    single_path = len(paths) == 1
    return Corpus(
        columns=columns,
        sentence_offsets=np.concatenate(offsets),
        label=first.label,
        path=paths[0] if single_path else f"{paths[0]} (+{len(paths) - 1} more files)",
        line_numbers=np.concatenate([part.line_numbers for part in corpora]),
        lines=lines,
        format=first.format,
        paths=None if single_path else paths,
        file_ids=None if single_path else np.concatenate(file_ids),
    )


def default_columns(n: int) -> list[str]:
    """Column names when the user gives none; the last column is the label when n >= 2."""
    if n < 1:
        raise ValueError(f"a corpus needs at least one column, got {n}")
    if n == 1:
        return ["word"]
    if n == 2:
        return ["word", "label"]
    return ["word", "pos"] + [f"col{i}" for i in range(2, n - 1)] + ["label"]


def detect_format(path) -> str:
    """Format name from the file extension: .conllu -> conllu, .pos -> ptb, else conll."""
    suffix = Path(str(path)).suffix.lower()
    if suffix == ".conllu":
        return "conllu"
    if suffix == ".pos":
        return "ptb"
    return "conll"


# --------------------------------------------------------------------------------------------
# Reading raw lines


def _display_path(path) -> str:
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


def _read_chunks(path, encoding: str, chunk_bytes: int = _CHUNK_BYTES
                 ) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number of the first line, lines without newline), chunked at line boundaries.

    Trailing whitespace (including "\\r") is stripped from every line.
    """
    name = _display_path(path)
    stream, owned = _open_binary(path)
    try:
        first_line = 1
        while True:
            data = stream.read(chunk_bytes)
            if not data:
                return
            if not data.endswith(b"\n"):
                data += stream.readline()
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as error:
                line = first_line + data.count(b"\n", 0, error.start)
                raise InputFormatError(
                    name, line, f"cannot decode byte {data[error.start:error.start + 1]!r} as "
                    f"{encoding} ({error.reason}); pass the right --encoding") from None
            except LookupError:
                raise ConfigError(f"unknown encoding {encoding!r}") from None
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


# --------------------------------------------------------------------------------------------
# Sentence accumulation shared by all formats


class _SentenceBuilder:
    """Token columns and sentence boundaries, cut into Corpus batches of whole sentences.

    `cols[k]` holds column k (in the parser's `names` order) of every pending token.
    """

    def __init__(self, path: str, format: str, keep_lines: bool):
        self.path = path
        self.format = format
        self.keep_lines = keep_lines
        self.cols: list[list[str]] = []
        self.line_numbers: list[int] = []
        self.lines: list[str] = []
        self.ends: list[int] = []  # token count after each closed sentence
        self.n_emitted = 0

    def close_sentence(self) -> None:
        n = len(self.line_numbers)
        if n > (self.ends[-1] if self.ends else 0):
            self.ends.append(n)

    @property
    def n_closed(self) -> int:
        return len(self.ends)

    def take(self, n_sentences: int, names: list[str], label: str | None,
             only_types) -> Corpus:
        """Remove the first n_sentences closed sentences and return them as a Corpus."""
        n_tokens = self.ends[n_sentences - 1]
        taken = []
        for column in self.cols:
            taken.append(column[:n_tokens])
            del column[:n_tokens]
        line_numbers = self.line_numbers[:n_tokens]
        del self.line_numbers[:n_tokens]
        lines = None
        if self.keep_lines:
            lines = self.lines[:n_tokens]
            del self.lines[:n_tokens]
        offsets = np.zeros(n_sentences + 1, dtype=np.int64)
        offsets[1:] = self.ends[:n_sentences]
        self.ends = [end - n_tokens for end in self.ends[n_sentences:]]

        columns = dict(zip(names, taken))
        if only_types is not None and label is not None:
            columns[label] = map_only_types(columns[label], only_types)
            if self.format == "conll":
                lines = None  # original lines carry the unmapped labels
        self.n_emitted += n_sentences
        return Corpus(columns=columns, sentence_offsets=offsets, label=label, path=self.path,
                      line_numbers=np.array(line_numbers, dtype=np.int64), lines=lines,
                      format=self.format)


# --------------------------------------------------------------------------------------------
# Format parsers. Each has `feed(first_line, lines)`, `finish()`, and after the first token
# line, `names` (column names in row order) and `label`.


def _check_names(names: Sequence[str], label: str | None) -> None:
    if "w" in names:
        raise ConfigError("column name 'w' is not allowed; name the word column 'word'")
    if len(set(names)) != len(names):
        raise ConfigError(f"duplicate column names in {list(names)}")
    if "word" not in names:
        raise ConfigError(f"columns {list(names)} must include 'word'")
    if label is not None and label not in names:
        raise ConfigError(f"label column {label!r} is not one of the columns {list(names)}")


# Code points that str.split() treats as whitespace (up to U+3000, the largest one).
_WHITESPACE = np.zeros(0x3002, dtype=bool)
_WHITESPACE[[ord(c) for c in map(chr, range(0x3001)) if c.isspace()]] = True


def _fields_per_line(joined: str, n_lines: int) -> np.ndarray:
    """Whitespace-separated field count of each line of `joined` (lines joined by "\n")."""
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    is_space = _WHITESPACE[np.minimum(codes, 0x3001)]
    starts = ~is_space
    starts[1:] &= is_space[:-1]
    line_of_code = np.cumsum(codes == 10)
    return np.bincount(line_of_code[starts], minlength=n_lines)


class _ConllParser:
    format = "conll"

    def __init__(self, path, columns, label, require_label, builder):
        self.path = path
        self.user_columns = list(columns) if columns is not None else None
        self.user_label = label
        self.require_label = require_label
        self.builder = builder
        self.names: list[str] | None = None
        self.label: str | None = None
        self.n_fields = 0
        if self.user_columns is not None:
            if label is None:
                self.user_label = self.user_columns[-1] if len(self.user_columns) >= 2 else None
            _check_names(self.user_columns, self.user_label)

    def _decide_columns(self, n_found: int, line: int) -> None:
        """Fix column names and label from the first token line of the file."""
        if self.user_columns is None:
            names = default_columns(n_found)
            label = self.user_label
            if label is None and n_found >= 2:
                label = names[-1]
            _check_names(names, label)
            if label is None and self.require_label:
                raise InputFormatError(self.path, line,
                                       f"no label column: expected at least 2 columns, found "
                                       f"{n_found}")
            self.names, self.label, self.n_fields = names, label, n_found
            return
        names, label = self.user_columns, self.user_label
        if n_found == len(names):
            self.names, self.label, self.n_fields = names, label, n_found
        elif n_found == len(names) - 1 and label is not None and not self.require_label:
            self.names = [name for name in names if name != label]
            self.label, self.n_fields = None, n_found
        elif n_found == len(names) - 1 and label is not None:
            raise InputFormatError(self.path, line,
                                   f"label column {label!r} missing: expected {len(names)} "
                                   f"columns, found {n_found}")
        else:
            raise InputFormatError(self.path, line,
                                   f"expected {len(names)} columns ({' '.join(names)}), found "
                                   f"{n_found}")

    def feed(self, first_line: int, lines: list[str]) -> None:
        builder = self.builder
        # Lines are right-stripped, so blank lines are "". Token positions are found without a
        # Python-level loop over lines; sentence breaks are gaps between token line positions.
        token_index = [i for i, line in enumerate(lines) if line]
        if not token_index:
            if lines:
                builder.close_sentence()
            return
        token_lines = [lines[i] for i in token_index]
        joined = "\n".join(token_lines)
        if "-DOCSTART-" in joined:
            keep = [k for k, line in enumerate(token_lines) if line.split()[0] != "-DOCSTART-"]
            if len(keep) < len(token_lines):
                token_index = [token_index[k] for k in keep]
                token_lines = [token_lines[k] for k in keep]
                joined = "\n".join(token_lines)
            if not token_index:
                builder.close_sentence()
                return
        # One C-level split for the whole chunk; field counts per line come from numpy, with
        # the same notion of whitespace as str.split.
        flat = joined.split()
        counts = _fields_per_line(joined, len(token_lines))
        if self.names is None:
            self._decide_columns(int(counts[0]), first_line + token_index[0])
            builder.cols = [[] for _ in self.names]
        expected = self.n_fields
        if len(flat) != expected * len(token_lines) or (counts != expected).any():
            k = int(np.flatnonzero(counts != expected)[0])
            raise InputFormatError(self.path, first_line + token_index[k],
                                   f"expected {expected} columns, found {int(counts[k])}")
        if token_index[0] > 0:
            builder.close_sentence()  # a blank or -DOCSTART- line precedes the first token
        n_before = len(builder.line_numbers)
        for column, values in zip(builder.cols, (flat[k::expected] for k in range(expected))):
            column.extend(values)
        positions = np.array(token_index, dtype=np.int64)
        builder.line_numbers.extend((positions + first_line).tolist())
        builder.lines.extend(token_lines)
        # sentence breaks: gaps between consecutive token line positions
        breaks = np.flatnonzero(np.diff(positions) != 1) + 1 + n_before
        builder.ends.extend(breaks.tolist())
        if token_index[-1] != len(lines) - 1:
            builder.close_sentence()

    def finish(self) -> None:
        self.builder.close_sentence()


class _ConlluParser:
    format = "conllu"

    def __init__(self, path, columns, label, require_label, builder):
        if columns is not None and list(columns) != CONLLU_COLUMNS:
            raise ConfigError(f"CoNLL-U columns are fixed: {CONLLU_COLUMNS}; got {list(columns)}")
        label = "upos" if label is None else label
        _check_names(CONLLU_COLUMNS, label)
        self.path = path
        self.names = CONLLU_COLUMNS
        self.label = label
        self.builder = builder
        self.block: list[str] = []
        self.block_first_line = 0

    def feed(self, first_line: int, lines: list[str]) -> None:
        block = self.block
        for offset, line in enumerate(lines):
            if line:
                if not block:
                    self.block_first_line = first_line + offset
                block.append(line)
            elif block:
                self._parse_block()
                block.clear()

    def finish(self) -> None:
        if self.block:
            self._parse_block()
            self.block.clear()

    def _parse_block(self) -> None:
        first = self.block_first_line
        token_lines = []  # (line number, line) of non-comment lines
        for offset, line in enumerate(self.block):
            if line.startswith("#"):
                continue
            n_fields = line.count("\t") + 1
            if n_fields != 10:
                raise InputFormatError(self.path, first + offset,
                                       f"expected 10 tab-separated CoNLL-U fields, found "
                                       f"{n_fields}")
            token_lines.append((first + offset, line))
        if not token_lines:
            return
        text = "\n".join(self.block) + "\n"
        try:
            tokens = conllu.parse_token_and_metadata(text)
        except ParseException as error:
            where = self._locate_error(token_lines)
            raise InputFormatError(self.path, where, f"invalid CoNLL-U: {error}") from None
        if len(tokens) != len(token_lines):
            raise InputFormatError(self.path, first,
                                   f"conllu parsed {len(tokens)} tokens from "
                                   f"{len(token_lines)} token lines")
        builder = self.builder
        line_numbers, kept = builder.line_numbers, builder.lines
        if not builder.cols:
            builder.cols = [[] for _ in CONLLU_COLUMNS]
        space_column = builder.cols[len(_CONLLU_KEYS)]
        range_last, range_space = 0, "1"  # the open multiword token: its last word id, its SpaceAfter
        for token, (line_number, line) in zip(tokens, token_lines):
            token_id = token["id"]
            if not isinstance(token_id, int):
                # multiword token range "1-2" (remember where it ends) or empty node "8.1"
                if len(token_id) == 3 and token_id[1] == "-":
                    range_last, range_space = token_id[2], _space_after(token)
                continue
            for column, key in zip(builder.cols, _CONLLU_KEYS):
                column.append(_conllu_value(token[key]))
            if token_id < range_last:
                space_column.append("0")
            else:
                space_column.append(range_space if token_id == range_last else _space_after(token))
            line_numbers.append(line_number)
            kept.append(line)
        self.builder.close_sentence()

    @staticmethod
    def _locate_error(token_lines) -> int:
        """Line number of the first token line that conllu rejects on its own."""
        for line_number, line in token_lines:
            try:
                conllu.parse_token_and_metadata(line + "\n")
            except ParseException:
                return line_number
        return token_lines[0][0]


def _space_after(token) -> str:
    misc = token["misc"]
    return "0" if misc and misc.get("SpaceAfter") == "No" else "1"


def _conllu_value(value) -> str:
    if isinstance(value, str):
        return value
    return serialize_field(value)


def _is_ptb_separator(line: str) -> bool:
    return line.startswith("===") and not line.strip("=")


class _PtbParser:
    """Penn Treebank tagged .pos files.

    Blank lines in these files also occur inside sentences (the original tagging chunks), so a
    blank line ends a sentence only when the sentence ends with a token tagged "." (possibly
    followed by closing quotes or brackets). A block of only closing quotes/brackets after a
    finished sentence belongs to that sentence. "=====" lines and end of file always end a
    sentence. On the NLTK WSJ sample this gives 3,934 sentences against 3,914 trees in the
    combined/*.mrg files; splitting at every blank line would give 4,979.
    """

    format = "ptb"

    def __init__(self, path, columns, label, require_label, builder):
        if columns is not None and list(columns) != PTB_COLUMNS:
            raise ConfigError(f"PTB columns are fixed: {PTB_COLUMNS}; got {list(columns)}")
        label = "pos" if label is None else label
        _check_names(PTB_COLUMNS, label)
        self.path = path
        self.names = PTB_COLUMNS
        self.label = label
        self.builder = builder
        self.block_size = None  # tokens in the current blank-line block; None between blocks

    def feed(self, first_line: int, lines: list[str]) -> None:
        builder = self.builder
        if not builder.cols:
            builder.cols = [[], []]
        words, tags = builder.cols
        line_numbers = builder.line_numbers
        for offset, line in enumerate(lines):
            if not line:
                self._end_block()
                continue
            if _is_ptb_separator(line):
                self._end_block()
                builder.close_sentence()
                continue
            line_number = first_line + offset
            n_before = len(words)
            for item in line.split():
                if item == "[" or item == "]":
                    continue
                word, tag = self._split_token(item, line_number)
                words.append(word)
                tags.append(tag)
                line_numbers.append(line_number)
            self.block_size = (self.block_size or 0) + len(words) - n_before

    def _split_token(self, item: str, line_number: int) -> tuple[str, str]:
        slash = item.rfind("/")
        while slash > 0 and item[slash - 1] == "\\":
            slash = item.rfind("/", 0, slash - 1)
        if slash <= 0 or slash == len(item) - 1:
            raise InputFormatError(self.path, line_number,
                                   f"token {item!r} is not of the form word/TAG")
        tag = item[slash + 1:]
        if "|" in tag:
            tag = tag.split("|", 1)[0]  # ambiguous tag such as NN|JJ: keep the first
        word = item[:slash]
        if "\\/" in word:
            word = word.replace("\\/", "/")
        return word, tag

    def _end_block(self) -> None:
        block_size = self.block_size
        self.block_size = None
        if not block_size:
            return
        builder = self.builder
        tags = builder.cols[1]
        start = len(tags) - block_size
        if (builder.ends and builder.ends[-1] == start
                and all(tag in _PTB_CLOSING_TAGS for tag in tags[start:])):
            builder.ends.pop()  # closing quotes after the final period belong to that sentence
        sentence_start = builder.ends[-1] if builder.ends else 0
        index = len(tags) - 1
        while index > sentence_start and tags[index] in _PTB_CLOSING_TAGS:
            index -= 1
        if tags[index] == ".":
            builder.close_sentence()

    def finish(self) -> None:
        self._end_block()
        self.builder.close_sentence()


FORMATS = {"conll": _ConllParser, "conllu": _ConlluParser, "ptb": _PtbParser}


def _resolve_format(path, format: str | None) -> str:
    if format is None:
        return detect_format(path)
    if format not in FORMATS:
        raise ValueError(f"unknown corpus format {format!r}; valid formats: "
                         f"{', '.join(sorted(FORMATS))}")
    return format


# --------------------------------------------------------------------------------------------
# Public readers


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector: parsing allocates millions of acyclic objects, and
    the collections they trigger would otherwise dominate reading time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def iter_corpus(path, format: str | None = None, columns: Sequence[str] | None = None,
                label: str | None = None, encoding: str = "utf-8",
                only_types: Iterable[str] | None = None, require_label: bool = False,
                batch_sentences: int | None = 5000) -> Iterator[Corpus]:
    """Read a corpus incrementally, yielding batches of whole sentences.

    Parameters
    ----------
    path : str or Path
        The file, or "-" for standard input.
    format : {"conll", "conllu", "ptb"} or None
        None: from the extension (see `detect_format`).
    columns : list of str or None
        conll only: column names (must include "word"). None: from the first token line's field
        count via `default_columns`.
    label : str or None
        Name of the label column. Default: the last conll column, "upos" for conllu, "pos" for ptb.
    encoding : str
        Text encoding of the file.
    only_types : iterable of str or None
        Keep only chunk tags of these types in the label column; others become "O".
    require_label : bool
        When False, conll lines may lack the label column (one field fewer than `columns`);
        the batches then have ``label=None``.
    batch_sentences : int or None
        Sentences per batch (the last may be smaller); None for one batch.

    Raises
    ------
    InputFormatError
        Malformed or missing input; the message names file:line.
    """
    format = _resolve_format(path, format)
    if batch_sentences is not None and batch_sentences < 1:
        raise ValueError(f"batch_sentences must be positive, got {batch_sentences!r}")
    only_types = None if only_types is None else frozenset(only_types)
    name = _display_path(path)
    builder = _SentenceBuilder(name, format, keep_lines=format != "ptb")
    parser = FORMATS[format](name, columns, label, require_label, builder)

    def take(n):
        return builder.take(n, parser.names, parser.label, only_types)

    for first_line, lines in _read_chunks(path, encoding):
        with _gc_paused():
            parser.feed(first_line, lines)
        # keep one closed sentence back: the ptb reader may still extend it
        while batch_sentences is not None and builder.n_closed > batch_sentences:
            with _gc_paused():
                batch = take(batch_sentences)
            yield batch
    parser.finish()
    while builder.n_closed:
        with _gc_paused():
            batch = take(builder.n_closed if batch_sentences is None
                         else min(batch_sentences, builder.n_closed))
        yield batch
    if builder.n_emitted == 0:
        raise InputFormatError(name, None, "no sentences found")


def read_corpus(path, format: str | None = None, columns: Sequence[str] | None = None,
                label: str | None = None, encoding: str = "utf-8",
                only_types: Iterable[str] | None = None, require_label: bool = True) -> Corpus:
    """Read a whole corpus file into memory. Parameters as for `iter_corpus`."""
    batches = list(iter_corpus(path, format=format, columns=columns, label=label,
                               encoding=encoding, only_types=only_types,
                               require_label=require_label, batch_sentences=None))
    return concatenate(batches)


def read_ptb_files(paths: Iterable, label: str | None = None, encoding: str = "utf-8",
                   only_types: Iterable[str] | None = None) -> Corpus:
    """Read several PTB tagged .pos files into one Corpus (files in the given order)."""
    paths = list(paths)
    if not paths:
        raise ValueError("read_ptb_files needs at least one file")
    return concatenate([read_corpus(path, format="ptb", label=label, encoding=encoding,
                                    only_types=only_types) for path in paths])


# --------------------------------------------------------------------------------------------
# Writer


def write_tagged(out: TextIO, corpus: Corpus, predicted: Sequence[str],
                 extra_columns: Sequence[Sequence[str]] | None = None,
                 sentence_headers: Sequence[str] | None = None) -> None:
    """Write each token's input columns, then its predicted label, then any extra columns.

    The output is conlleval-compatible ("word pos gold pred"), with a blank line after each
    sentence. conll: the original line + " " + prediction when available; conllu: the original
    10-field line + "\\t" + prediction; ptb: "word gold pred".

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
