"""The protocol every input format follows: a Parser turns lines into token columns and sentences.

The streaming layer (`structperc.readers.stream`) owns files, decoding and batching; a parser
only interprets lines. For each chunk of whole lines it calls ``parser.feed(first_line, lines)``
and at end of file ``parser.finish()``:

- `lines` are decoded, without their newline and right-stripped (a blank line is ""); the first
  one is line `first_line` (1-based) of the file. A sentence may run on across chunks.
- A parser appends every token to the builder (`stream.SentenceBuilder`): field k to
  ``builder.cols[k]`` (one list per name in `names`), its line number to ``builder.line_numbers``
  and, when the format `keeps_lines`, its original line to ``builder.lines``.
- It ends sentences through the builder only: ``close_sentence()`` (a no-op when no token is
  pending), ``close_sentences_at(token_counts)``, and ``reopen_last_sentence()``. Batches never
  take the last closed sentence before ``finish()``, so a parser may always reopen it.
- Malformed input raises `InputFormatError` naming the file and line.

A new format is one module with a Parser subclass, plus its line in `registry.FORMATS`.
"""

from __future__ import annotations

from typing import Sequence

from structperc.errors import ConfigError, InputFormatError

STDIN_NAME = "<stdin>"


def check_names(names: Sequence[str], label: str | None) -> None:
    """Reject column names a corpus cannot have, and a label that is not one of them."""
    if "w" in names:
        raise ConfigError("column name 'w' is not allowed; name the word column 'word'")
    if len(set(names)) != len(names):
        raise ConfigError(f"duplicate column names in {list(names)}")
    if "word" not in names:
        raise ConfigError(f"columns {list(names)} must include 'word'")
    if label is not None and label not in names:
        raise ConfigError(f"label column {label!r} is not one of the columns {list(names)}")


class Parser:
    """Base class of the format parsers (see the module docstring for the protocol).

    Class attributes
    ----------------
    format : str
        Name in `registry.FORMATS` (and in `Corpus.format`).
    extensions : tuple of str
        Lower-case file suffixes that `detect_format` maps to this format.
    title : str
        Name of the format in messages.
    fixed_columns : list of str or None
        The column names of a format whose columns are fixed; None when the columns come from
        the user or the file (then the subclass sets `names` and `label`, and fills
        ``builder.cols``, by the first token line).
    default_label : str or None
        Label column of a fixed-column format when the user names none.
    keeps_lines : bool
        Whether every token's original line is kept for `write_tagged`.
    lines_follow_relabelling : bool
        Whether the kept lines stay valid when ``only_types`` rewrites the label column.
    options : dict of str to default value
        The format's own reader options (such as ``tag_sep``); others are an error.

    Instance attributes
    -------------------
    names : list of str or None
        Column names, in the order of ``builder.cols``.
    label : str or None
        Name of the label column, or None when the input has none.
    """

    format: str = ""
    extensions: tuple[str, ...] = ()
    title: str = ""
    fixed_columns: list[str] | None = None
    default_label: str | None = None
    keeps_lines: bool = True
    lines_follow_relabelling: bool = True
    options: dict[str, object] = {}

    def __init__(self, path: str, builder, columns: Sequence[str] | None, label: str | None,
                 require_label: bool, options: dict[str, object]):
        self.path = path
        self.builder = builder
        self.require_label = require_label
        self.option_values = {**self.options, **options}
        self.names: list[str] | None = None
        self.label: str | None = None
        if self.fixed_columns is not None:
            if columns is not None and list(columns) != self.fixed_columns:
                raise ConfigError(f"{self.title} columns are fixed: {self.fixed_columns}; "
                                  f"got {list(columns)}")
            label = self.default_label if label is None else label
            check_names(self.fixed_columns, label)
            self.names, self.label = self.fixed_columns, label
            builder.cols = [[] for _ in self.names]

    def feed(self, first_line: int, lines: list[str]) -> None:
        """Parse one chunk of lines (see the module docstring)."""
        raise NotImplementedError

    def finish(self) -> None:
        """End of input: close the pending sentence."""
        self.builder.close_sentence()

    def bad_token(self, item: str, line_number: int, shape: str) -> InputFormatError:
        """The error for a token that is not of the form `shape` (such as word/TAG)."""
        return InputFormatError(self.path, line_number, f"token {item!r} is not of the form {shape}")
