"""Ranking data: groups of candidates as sparse rows, the SVMrank file format, feature vocabulary files,
and the corpus-level score of a choice of one candidate per group.

SVMrank / SVMlight ranking format, one candidate a line::

    <target> qid:<n> <id>:<value> <id>:<value> ... # <comment>

target: the candidate's task score; qid: sentence number, groups of lines with equal qid are
consecutive and qids ascend; feature ids are positive integers, ascending and unique within a line;
values and target are finite numbers; the comment is optional. Blank lines and lines starting with
"#" are skipped. Our writer's comment is ``sentence <i> candidate <r>`` (0-based sentence index and
rank), followed by ``chunks <correct> <predicted> <gold>`` or ``tokens <correct> <total>`` when the
lists were scored against gold labels, so that ``rerank apply`` can compute corpus-level scores.
"""
import math
import re
from dataclasses import dataclass

import numpy as np

from structperc._kernels.rank.ranking import group_argmax
from structperc.corpus import index_ranges
from structperc.errors import InputFormatError
from structperc.evaluate.metrics import f1_from_counts

SCORE_FEATURE = 1
FIRST_FEATURE_ID = 2


# ------------------------------------------------------------------------------------ ranking data
@dataclass
class RankingData:
    """Groups of candidates as CSR arrays (see ``structperc._kernels.rank.ranking``).

    group_offsets int64 (G + 1,); row_offsets int64 (C + 1,); feature_ids int64 (nnz,), ascending
    within a row; values float64 (nnz,); targets float64 (C,); qids int64 (G,); comments: list of C
    str (may be empty strings); line_numbers: int64 (C,) source lines, or None.
    """

    group_offsets: np.ndarray
    row_offsets: np.ndarray
    feature_ids: np.ndarray
    values: np.ndarray
    targets: np.ndarray
    qids: np.ndarray
    comments: list
    line_numbers: np.ndarray | None = None

    @property
    def n_groups(self):
        return len(self.group_offsets) - 1

    @property
    def n_rows(self):
        return len(self.row_offsets) - 1

    @property
    def n_features(self):
        """1 + the largest feature id (the length of a weight vector covering every id)."""
        return int(self.feature_ids.max()) + 1 if len(self.feature_ids) else FIRST_FEATURE_ID

    def take_groups(self, groups):
        """A new RankingData of the given groups, in the given order."""
        groups = np.asarray(groups, dtype=np.int64)
        rows = index_ranges(self.group_offsets[groups], self.group_offsets[groups + 1])
        entries = index_ranges(self.row_offsets[rows], self.row_offsets[rows + 1])
        group_offsets = np.concatenate([[0], np.cumsum(np.diff(self.group_offsets)[groups])]).astype(np.int64)
        row_offsets = np.concatenate([[0], np.cumsum(np.diff(self.row_offsets)[rows])]).astype(np.int64)
        return RankingData(group_offsets, row_offsets, self.feature_ids[entries], self.values[entries],
                           self.targets[rows], self.qids[groups],
                           [self.comments[j] for j in rows] if self.comments else [],
                           None if self.line_numbers is None else self.line_numbers[rows])

    def scores(self, weights):
        """float64 (C,): weights · x of every row (ids past the weights weigh 0)."""
        known = self.feature_ids < len(weights)
        owner = np.repeat(np.arange(self.n_rows), np.diff(self.row_offsets))
        return np.bincount(owner[known], weights=weights[self.feature_ids[known]] * self.values[known],
                           minlength=self.n_rows)

    def best_rows(self):
        """Row of the highest target of every group, ties to the first row; -1 for an empty group."""
        return group_argmax(self.targets, self.group_offsets)


# ------------------------------------------------------------------------------------ SVMrank files
def _number(value):
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def write_svmrank(out, data):
    """Write RankingData in the SVMrank format (see the module docstring)."""
    lines = []
    for g in range(data.n_groups):
        qid = int(data.qids[g])
        for j in range(data.group_offsets[g], data.group_offsets[g + 1]):
            a, b = data.row_offsets[j], data.row_offsets[j + 1]
            features = " ".join(f"{int(f)}:{_number(v)}" for f, v in zip(data.feature_ids[a:b], data.values[a:b]))
            line = f"{_number(data.targets[j])} qid:{qid}"
            if features:
                line += " " + features
            if data.comments and data.comments[j]:
                line += " # " + data.comments[j]
            lines.append(line + "\n")
        if len(lines) > 4096:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))


def _finite(text, what, path, line):
    try:
        value = float(text)
    except ValueError:
        raise InputFormatError(path, line, f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputFormatError(path, line, f"{what} {text!r} is not finite")
    return value


_INTEGER = re.compile(r"[0-9]+\Z")


def read_svmrank(path, encoding="utf-8"):
    """Read an SVMrank/SVMlight ranking file into RankingData, validating every line.

    Raises InputFormatError(path, line, message) on: a missing or malformed qid, qids not grouped
    and ascending, a malformed feature "id:value", a feature id < 1, ids not strictly ascending
    within a line, a target or value that is not a finite number, or a file without candidates.
    """
    name = str(path)
    try:
        handle = open(path, encoding=encoding)  # noqa: SIM115 (closed by the with below)
    except FileNotFoundError:
        raise InputFormatError(name, None, "no such file") from None
    except IsADirectoryError:
        raise InputFormatError(name, None, "is a directory, expected an SVMrank file") from None
    targets, qids_per_row, comments, line_numbers = [], [], [], []
    ids_flat, values_flat, lengths = [], [], []
    previous_qid = None
    with handle:
        for number, raw in enumerate(handle, start=1):
            text, _, comment = raw.partition("#")
            fields = text.split()
            if not fields:
                continue
            if len(fields) < 2 or not fields[1].startswith("qid:"):
                raise InputFormatError(name, number, "expected '<target> qid:<n> <id>:<value> ...'")
            target = _finite(fields[0], "target", name, number)
            qid_text = fields[1][4:]
            if not _INTEGER.match(qid_text):
                raise InputFormatError(name, number, f"qid {qid_text!r} is not a non-negative integer")
            qid = int(qid_text)
            if previous_qid is not None and qid < previous_qid:
                raise InputFormatError(name, number, f"qid {qid} after qid {previous_qid}: "
                                                     "qids must be grouped and ascending")
            previous_qid = qid
            last_id = 0
            for item in fields[2:]:
                fid_text, colon, value_text = item.partition(":")
                if not colon or not _INTEGER.match(fid_text):
                    raise InputFormatError(name, number, f"feature {item!r} is not '<id>:<value>'")
                fid = int(fid_text)
                if fid < 1:
                    raise InputFormatError(name, number, f"feature id {fid} is not positive")
                if fid <= last_id:
                    raise InputFormatError(name, number, f"feature id {fid} after {last_id}: "
                                                         "ids must be ascending and unique within a line")
                last_id = fid
                ids_flat.append(fid)
                values_flat.append(_finite(value_text, f"value of feature {fid}", name, number))
            lengths.append(len(fields) - 2)
            targets.append(target)
            qids_per_row.append(qid)
            comments.append(comment.strip())
            line_numbers.append(number)
    if not targets:
        raise InputFormatError(name, None, "no candidates found")
    qids = np.asarray(qids_per_row, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], qids[1:] != qids[:-1]]))
    group_offsets = np.concatenate([starts, [len(qids)]]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return RankingData(group_offsets, row_offsets, np.asarray(ids_flat, dtype=np.int64),
                       np.asarray(values_flat, dtype=np.float64), np.asarray(targets, dtype=np.float64),
                       qids[starts], comments, np.asarray(line_numbers, dtype=np.int64))


def chosen_score(data, rows):
    """Scores of choosing ``rows`` (one per group): always the mean target; with our comments also
    corpus-level chunk F1 ("f1") or token accuracy ("accuracy"), in percent."""
    out = {"mean_target": float(np.mean(data.targets[rows])) if len(rows) else 0.0}
    totals = np.zeros(3, dtype=np.int64)
    kind = None
    for j in rows:
        parts = data.comments[j].split() if data.comments else []
        if len(parts) >= 8 and parts[4] == "chunks" and kind in (None, "f1"):
            kind = "f1"
            totals += [int(parts[5]), int(parts[6]), int(parts[7])]
        elif len(parts) >= 7 and parts[4] == "tokens" and kind in (None, "accuracy"):
            kind = "accuracy"
            totals += [int(parts[5]), int(parts[6]), 0]
        else:
            return out
    if kind == "f1":
        out["f1"] = f1_from_counts(totals)
    elif kind == "accuracy":
        out["accuracy"] = 100.0 * totals[0] / totals[1] if totals[1] else 0.0
    return out


# ------------------------------------------------------------------------------------ files
# A feature vocabulary file is one JSON object: {"features": [names of GLOBAL_FEATURES] or null,
# "vocabulary": {feature string: id >= 2}}. ``structperc nbest --vocab-out`` writes it from training
# lists; ``--vocab`` reads it to featurize other lists with the same ids.
def read_vocabulary(path):
    """(feature names or None, vocabulary dict) of a feature vocabulary file."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        vocabulary = data["vocabulary"]
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such vocabulary file") from None
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise InputFormatError(path, None, f"not a structperc feature vocabulary ({exc})") from None
    if not isinstance(vocabulary, dict) or not all(isinstance(v, int) and v >= FIRST_FEATURE_ID
                                                   for v in vocabulary.values()):
        raise InputFormatError(path, None, "vocabulary must map feature strings to integer ids >= 2")
    return data.get("features"), vocabulary


def write_vocabulary(path, vocabulary, features):
    """Write a feature vocabulary file atomically."""
    import json

    from structperc.utils.atomic import atomic_write

    with atomic_write(path) as fh:
        json.dump({"features": features, "vocabulary": vocabulary}, fh)

