"""CoNLL column files: one token per line, whitespace-separated fields, blank lines end sentences.

"-DOCSTART-" lines are document separators and end a sentence.
"""

from __future__ import annotations

import numpy as np

from structperc.errors import DataError, InputFormatError
from structperc.readers.base import Parser, check_names


def default_columns(n: int) -> list[str]:
    """Column names when the user gives none; the last column is the label when n >= 2."""
    if n < 1:
        raise DataError(f"a corpus needs at least one column, got {n}")
    if n == 1:
        return ["word"]
    if n == 2:
        return ["word", "label"]
    return ["word", "pos"] + [f"col{i}" for i in range(2, n - 1)] + ["label"]


# Code points that str.split() treats as whitespace (up to U+3000, the largest one).
_WHITESPACE = np.zeros(0x3002, dtype=bool)
_WHITESPACE[[ord(c) for c in map(chr, range(0x3001)) if c.isspace()]] = True


def _fields_per_line(joined: str, n_lines: int) -> np.ndarray:
    """Whitespace-separated field count of each line of `joined` (lines joined by "\n")."""
    if joined.isascii():  # one byte per character
        codes = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        is_space = _WHITESPACE[codes]
    else:
        codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        is_space = _WHITESPACE[np.minimum(codes, 0x3001)]
    starts = ~is_space
    starts[1:] &= is_space[:-1]
    # a field's line: the newlines before its first character
    lines = np.searchsorted(np.flatnonzero(codes == 10), np.flatnonzero(starts))
    return np.bincount(lines, minlength=n_lines)


def _looks_like_conllu(line: str) -> bool:
    """A CoNLL-U word line: 10 tab-separated fields, the first an integer, a range or a decimal."""
    fields = line.split("\t")
    return len(fields) == 10 and fields[0].replace("-", "").replace(".", "").isdigit()


def _looks_tagged(line: str) -> bool:
    """Every whitespace-separated field is word/TAG (non-empty on both sides of a "/")."""
    items = line.split()
    return bool(items) and all(item.rpartition("/")[0] and item.rpartition("/")[2] for item in items)


def format_hint(lines: list[str], bad_line: str, expected: int) -> str:
    """A hint for a column-count error: the format that `lines` (a chunk of token lines) or the
    offending line `bad_line` (where `expected` fields were expected) look like, or "" when none."""
    if any(_looks_like_conllu(line) for line in lines[:100]):
        return "; this looks like CoNLL-U: read it as format conllu"
    if _looks_tagged(bad_line):
        return "; this looks like word/TAG tokens, one sentence per line: read it as format tagged"
    if max(len(bad_line.split()), expected) >= 5:
        return ("; if this is raw text, one sentence per line, it is format raw, which can be tagged "
                "but has no labels")
    return ""


class ConllParser(Parser):
    """Columns named by the user, or by `default_columns` from the first token line.

    With ``require_label=False`` the lines may lack the label column; `label` is then None.
    """

    format = "conll"
    title = "CoNLL"
    # the kept lines end in the original label
    lines_follow_relabelling = False

    def __init__(self, path, builder, columns, label, require_label, options):
        super().__init__(path, builder, columns, label, require_label, options)
        self.user_columns = list(columns) if columns is not None else None
        self.user_label = label
        self.n_fields = 0
        # the distinct labels while there is at most one of them (None once there are more), with the
        # default columns of many fields: a file of raw sentences, one per line, reads so (``finish``)
        self.label_values: set[str] | None = None
        self.n_tokens = 0
        self.first_token_line = 0
        if self.user_columns is not None:
            if label is None:
                self.user_label = self.user_columns[-1] if len(self.user_columns) >= 2 else None
            check_names(self.user_columns, self.user_label)

    def _decide_columns(self, n_found: int, line: int, first_line: str) -> None:
        """Fix column names and label from the first token line of the file (`first_line`, at `line`)."""
        if self.user_columns is None:
            names = default_columns(n_found)
            label = self.user_label
            if label is None and n_found >= 2:
                label = names[-1]
            check_names(names, label)
            if label is None and self.require_label:
                raise InputFormatError(self.path, line,
                                       f"no label column: expected at least 2 columns, found "
                                       f"{n_found}")
            if n_found == 10 and _looks_like_conllu(first_line):
                raise InputFormatError(self.path, line,
                                       "10 tab-separated fields with a word number first: this looks like "
                                       "CoNLL-U; read it as format conllu (or name its columns to read it as "
                                       "CoNLL columns)")
            self.names, self.label, self.n_fields = names, label, n_found
            if self.require_label and n_found >= 3:
                self.label_values, self.first_token_line = set(), line
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
            self._decide_columns(int(counts[0]), first_line + token_index[0], token_lines[0])
            builder.cols = [[] for _ in self.names]
        expected = self.n_fields
        if len(flat) != expected * len(token_lines) or (counts != expected).any():
            k = int(np.flatnonzero(counts != expected)[0])
            raise InputFormatError(self.path, first_line + token_index[k],
                                   f"expected {expected} columns, found {int(counts[k])}"
                                   + format_hint(token_lines, token_lines[k], expected))
        if self.label_values is not None:
            self.label_values |= set(flat[self.names.index(self.label)::expected])
            self.n_tokens += len(token_lines)
            if len(self.label_values) > 1:
                self.label_values = None
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
        builder.close_sentences_at(breaks.tolist())
        if token_index[-1] != len(lines) - 1:
            builder.close_sentence()

    def finish(self) -> None:
        if self.label_values is not None:
            error = raw_text_error(self.path, self.first_token_line, self.n_fields, self.label_values, self.n_tokens)
            if error is not None:
                raise error
        super().finish()


def raw_text_error(path, line, n_fields, label_values, n_tokens):
    """The error for a file of raw sentences read as CoNLL columns, or None when it does not look so.

    Such a file reads, when its lines have the same number of words, as columns of which the last,
    the label, is always the final punctuation. The rule: the default columns, at least 3 of them
    (`n_fields`), more than one token, and one label value (`label_values`) with no letter or digit:
    a labelled corpus whose every token has the same punctuation label cannot be meant."""
    if n_fields < 3 or n_tokens < 2 or len(label_values) != 1:
        return None
    (value,) = label_values
    if any(ch.isalnum() for ch in value):
        return None
    return InputFormatError(path, line,
                            f"every line has {n_fields} fields and the label (the last) is always {value!r}: "
                            f"this looks like raw text, one sentence per line, not one token per line with "
                            f"its label last (raw text is format raw, which can be tagged but has no labels "
                            f"to train on)")
