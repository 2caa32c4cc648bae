"""The Corpus type: token columns and sentence offsets, with subsets and concatenation; and
``index_ranges``, the flat indices of many [start, end) ranges (sentences, candidates, rows).

Reading and writing files is `structperc.readers`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from structperc.errors import ConfigError, DataError

def index_ranges(starts, ends):
    """The concatenation of ``arange(starts[i], ends[i])`` over i, without a Python loop.

    Parameters
    ----------
    starts, ends : array-like of int, shape (n_ranges,)
        Range i is [starts[i], ends[i]); ends[i] >= starts[i].

    Returns
    -------
    ndarray of int64, shape (sum of ends - starts,)
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # item k of range i is starts[i] + (k - offsets[i])
    return np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)


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
        the reader changed labels (``only_types``) or the format has no per-token lines (ptb,
        tagged).
    format : str
        A name in `structperc.readers.FORMATS`.
    paths : list of str or None
        When the corpus concatenates several files: their names, indexed by `file_ids`.
    file_ids : ndarray of int64, shape (n_tokens,), or None
        Index into `paths` of each token's file (None: every token comes from `path`).
    read_options : dict or None
        How `read_corpus` read the file beyond its format, columns and label: ``encoding``, and
        ``only_types`` and ``tag_sep`` when given. A model trained on the corpus records them, as
        one trained on the file from the command line does, so that its later reads read alike.
        None for a corpus made of token lists.
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
    read_options: dict | None = field(default=None, repr=False, compare=False)

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_offsets) - 1

    def __len__(self) -> int:
        """The number of sentences, as ``len`` of a list of sentences gives."""
        return self.n_sentences

    def __repr__(self) -> str:
        """One short line: where from, the sizes and the columns (not the tokens themselves)."""
        paths = f", files={len(self.paths)}" if self.paths else ""
        return (f"Corpus(path={self.path!r}{paths}, format={self.format!r}, sentences={self.n_sentences:,}, "
                f"tokens={self.n_tokens:,}, columns={list(self.columns)!r}, label={self.label!r})")

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

    def subset(self, sentence_indices: Iterable[int]) -> "Corpus":
        """A new Corpus holding the given sentences in the given order (dev slices, jackknifing)."""
        indices = np.asarray(list(sentence_indices) if not isinstance(sentence_indices, np.ndarray)
                             else sentence_indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_sentences):
            raise IndexError(f"sentence index out of range 0..{self.n_sentences - 1}")
        starts, ends = self.sentence_offsets[indices], self.sentence_offsets[indices + 1]
        offsets = np.zeros(len(indices) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=offsets[1:])
        token_index = index_ranges(starts, ends)
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
            read_options=self.read_options,
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
        raise DataError("concatenate needs at least one corpus")
    first = corpora[0]
    for other in corpora[1:]:
        if list(other.columns) != list(first.columns) or other.label != first.label:
            raise DataError(
                f"cannot concatenate {other.path!r} (columns {list(other.columns)}, label "
                f"{other.label!r}) with {first.path!r} (columns {list(first.columns)}, label "
                f"{first.label!r})")
        if other.format != first.format:
            raise DataError(f"cannot concatenate formats {first.format!r} and {other.format!r}")
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
        read_options=first.read_options if all(part.read_options == first.read_options for part in corpora) else None,
    )


def _token_lists(X, what="X"):
    """The sentences of X as a list, each checked to be a sequence of tokens, not a str."""
    if isinstance(X, str):
        raise DataError(f"{what} is a str; give a list of sentences, each a list of tokens")
    sentences = list(X)
    for i, sent in enumerate(sentences):
        if isinstance(sent, str):
            raise DataError(f"{what}[{i}] is the str {sent[:40]!r}, not a list of tokens: split it into tokens "
                            f"(structperc.readers.raw.tokenize splits raw English text)")
    return sentences


def as_corpus(X, y=None, columns=None):
    """A Corpus from a Corpus, or from lists of tokens (str, or tuples of column values).

    columns : names of the token values (default ``word``, then ``pos``, then ``col2``...);
    y : None, or one label per token of each sentence (the column ``label``).

    Raises DataError for a str where a sentence (a list of tokens) is expected, tokens of different
    widths, labels that do not match the tokens, or (with y) no token at all, naming the sentence."""
    if isinstance(X, Corpus):
        return X
    sentences = _token_lists(X)
    first = next((tok for sent in sentences for tok in sent), "")
    width = 1 if isinstance(first, str) else len(first)
    default = ["word"] if width == 1 else ["word", "pos"] + [f"col{i}" for i in range(2, width)]
    names = list(columns) if columns else default
    if len(names) != width:
        raise ConfigError(f"columns {names!r} do not match tokens of {width} values")
    if y is not None and "label" in names:
        raise ConfigError(f"columns {names!r} name a token value 'label', the name of the label column that y fills")
    values = {name: [] for name in names}
    lengths = []
    for i, sent in enumerate(sentences):
        lengths.append(len(sent))
        for tok in sent:
            row = (tok,) if isinstance(tok, str) else tok
            if len(row) != width:
                raise DataError(f"X[{i}] has a token of {len(row)} values ({tok!r}); the first token has {width}")
            for name, v in zip(names, row):
                values[name].append(v)
    label = None
    if y is not None:
        label = "label"
        values[label] = flat_labels(sentences, y)
        if not values[label]:
            raise DataError("no tokens: X holds no sentence with a token")
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Corpus(
        columns=values, sentence_offsets=offsets, label=label, path="<memory>",
        line_numbers=np.zeros(int(offsets[-1]), dtype=np.int64),
    )


def flat_labels(X, y):
    """The labels of y flat over the tokens, checked against the sentence lengths of X.

    Raises DataError when y is None or its sentences do not match X's (naming the first that does not)."""
    if y is None:
        raise DataError("training data has no labels: give y")
    y = _token_lists(y, "y")
    if len(X) != len(y):
        raise DataError(f"X has {len(X)} sentences and y {len(y)}")
    for i, (tokens, labels) in enumerate(zip(X, y)):
        if len(tokens) != len(labels):
            raise DataError(f"sentence {i} has {len(tokens)} tokens in X and {len(labels)} labels in y")
    return [label for labels in y for label in labels]
