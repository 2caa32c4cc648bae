"""Reranking n-best lists: global features, the SVMrank file format, and an averaged ranking perceptron.

Global features (Collins 2002, "Ranking algorithms for named-entity extraction") look at a whole
candidate labeling at once. ``GLOBAL_FEATURES`` maps a name to a function (tokens, labels) ->
iterable of feature strings, where ``tokens`` is a dict column name -> list of the sentence's values
and ``labels`` the candidate's label strings; a feature's value is the number of times it is
produced. Feature strings are interned to ids >= 2 by a vocabulary learned on training lists.
Feature 1 is the base model's score relative to the 1-best of the group (score - score of rank 0,
so <= 0).

SVMrank / SVMlight ranking format, one candidate a line::

    <target> qid:<n> <id>:<value> <id>:<value> ... # <comment>

target: the candidate's task score; qid: sentence number, groups of lines with equal qid are
consecutive and qids ascend; feature ids are positive integers, ascending and unique within a line;
values and target are finite numbers; the comment is optional. Blank lines and lines starting with
"#" are skipped. Our writer's comment is ``sentence <i> candidate <r>`` (0-based sentence index and
rank), followed by ``chunks <correct> <predicted> <gold>`` or ``tokens <correct> <total>`` when the
lists were scored against gold labels, so that ``rerank apply`` can compute corpus-level scores.
"""
import collections
import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from ._kernels.ranking import group_argmax, predict_groups, ranking_epoch
from .chunks import chunk_spans
from ._kernels.records import Groups
from .errors import ConfigError, InputFormatError, ModelFileError
from .npzfile import read_npz, write_npz
from .templates import word_shape

FORMAT_VERSION = 1
SCORE_FEATURE = 1
FIRST_FEATURE_ID = 2


# ------------------------------------------------------------------------------------ global features
@functools.lru_cache(maxsize=4096)
def _spans(labels):
    return chunk_spans(labels)


def _chunk_feature(prefix, render):
    """A feature of every chunk on its own. ``featurize`` computes it once per distinct chunk of a
    sentence's candidates through ``feature.of_chunk``."""
    def of_chunk(tokens, kind, first, last):
        return f"{prefix}={kind}:{render(tokens, first, last + 1)}"

    def feature(tokens, labels):
        for kind, first, last in _spans(tuple(labels)):
            yield of_chunk(tokens, kind, first, last)
    feature.__name__ = prefix
    feature.of_chunk = of_chunk
    return feature


GLOBAL_FEATURES = {
    # every chunk: its type with ...
    "chunk_words": _chunk_feature("cw", lambda tok, a, b: " ".join(tok["word"][a:b])),
    "chunk_pos": _chunk_feature("cp", lambda tok, a, b: " ".join(tok["pos"][a:b])),
    "chunk_length": _chunk_feature("cl", lambda tok, a, b: str(b - a)),
    "chunk_first": _chunk_feature("cf", lambda tok, a, b: tok["word"][a]),
    "chunk_last": _chunk_feature("cz", lambda tok, a, b: tok["word"][b - 1]),
    "chunk_shape": _chunk_feature("cs", lambda tok, a, b: " ".join(word_shape(w) for w in tok["word"][a:b])),
    # the whole sentence: its sequence of chunk types
    "chunk_sequence": lambda tokens, labels: ["cseq=" + " ".join(kind for kind, _, _ in _spans(tuple(labels)))],
}
DEFAULT_FEATURES = list(GLOBAL_FEATURES)


def check_feature_names(names):
    """The list of feature names (default: all), or ConfigError naming the unknown one."""
    names = DEFAULT_FEATURES if names is None else list(names)
    for name in names:
        if name not in GLOBAL_FEATURES:
            raise ConfigError(f"unknown global feature {name!r}: choose from {', '.join(GLOBAL_FEATURES)}")
    return names


def _missing_column(name, exc):
    return ConfigError(f"global feature {name!r} needs the input column {exc}")


def candidate_feature_strings(tokens, labels, names):
    """Counter of the feature strings of one candidate."""
    counts = collections.Counter()
    for name in names:
        try:
            counts.update(GLOBAL_FEATURES[name](tokens, labels))
        except KeyError as exc:
            raise _missing_column(name, exc) from None
    return counts


# ------------------------------------------------------------------------------------ ranking data
@dataclass
class RankingData:
    """Groups of candidates as CSR arrays (see ``structperc._kernels.ranking``).

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
        from .nbest import _ranges

        groups = np.asarray(groups, dtype=np.int64)
        rows = _ranges(self.group_offsets[groups], self.group_offsets[groups + 1])
        entries = _ranges(self.row_offsets[rows], self.row_offsets[rows + 1])
        group_offsets = np.concatenate([[0], np.cumsum(np.diff(self.group_offsets)[groups])]).astype(np.int64)
        row_offsets = np.concatenate([[0], np.cumsum(np.diff(self.row_offsets)[rows])]).astype(np.int64)
        return RankingData(group_offsets, row_offsets, self.feature_ids[entries], self.values[entries],
                           self.targets[rows], self.qids[groups],
                           [self.comments[j] for j in rows] if self.comments else [],
                           None if self.line_numbers is None else self.line_numbers[rows])

    def best_rows(self):
        """Row of the highest target of every group, ties to the first row; -1 for an empty group."""
        return group_argmax(self.targets, self.group_offsets)


def featurize(nb, names=None, vocabulary=None, grow=False):
    """RankingData of an NBestList: one group per sentence (qid = sentence index + 1).

    vocabulary : dict feature string -> id (>= 2); with ``grow`` unseen strings are added (training
    lists), otherwise they are dropped. Targets are the task scores (0 without gold labels).

    The candidates of a sentence share most of their chunks, so a per-chunk feature is rendered
    and looked up once per distinct (feature, chunk) of the sentence. Ids are given in the order
    ``candidate_feature_strings`` produces the strings.
    """
    names = check_feature_names(names)
    features = [GLOBAL_FEATURES[name] for name in names]
    vocabulary = {} if vocabulary is None else vocabulary
    corpus = nb.corpus
    o = corpus.sentence_offsets
    columns = corpus.columns
    label_names = nb.label_names
    row_ids, row_values, lengths, comments = [], [], [], []
    ranks = nb.ranks()

    def feature_id(string):
        fid = vocabulary.get(string)
        if fid is None and grow:
            fid = vocabulary[string] = len(vocabulary) + FIRST_FEATURE_ID
        return fid

    for i in range(nb.n_sentences):
        a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
        if b == a:
            continue
        tokens = {name: values[o[i]: o[i + 1]] for name, values in columns.items()}
        top = nb.scores[a]
        chunk_ids = {}  # (feature index, kind, first, last) -> id, or None when dropped
        for j in range(a, b):
            labels = tuple(label_names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            spans = _spans(labels)
            counts = collections.Counter()
            for f, (name, feature) in enumerate(zip(names, features)):
                try:
                    if hasattr(feature, "of_chunk"):
                        for kind, first, last in spans:
                            key = (f, kind, first, last)
                            if key not in chunk_ids:
                                chunk_ids[key] = feature_id(feature.of_chunk(tokens, kind, first, last))
                            counts[chunk_ids[key]] += 1
                    else:
                        counts.update(feature_id(string) for string in feature(tokens, labels))
                except KeyError as exc:
                    raise _missing_column(name, exc) from None
            counts.pop(None, None)
            pairs = sorted(counts.items())
            ids = [SCORE_FEATURE] + [fid for fid, _ in pairs]
            vals = [float(nb.scores[j] - top)] + [float(count) for _, count in pairs]
            row_ids.append(ids)
            row_values.append(vals)
            lengths.append(len(ids))
            comments.append(_comment(nb, i, j, int(ranks[j])))
    cand_counts = np.diff(nb.candidate_offsets)
    group_offsets = np.concatenate([[0], np.cumsum(cand_counts[cand_counts > 0])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat_ids = np.fromiter((f for ids in row_ids for f in ids), dtype=np.int64, count=int(row_offsets[-1]))
    flat_values = np.fromiter((v for vals in row_values for v in vals), dtype=np.float64, count=int(row_offsets[-1]))
    kept = np.flatnonzero(cand_counts > 0)
    targets = (np.zeros(nb.n_candidates) if nb.task_scores is None else nb.task_scores).astype(np.float64)
    return RankingData(group_offsets, row_offsets, flat_ids, flat_values, targets, kept.astype(np.int64) + 1,
                       comments), vocabulary


def _comment(nb, i, j, rank):
    text = f"sentence {i} candidate {rank}"
    if nb.metric == "f1":
        c = nb.counts[j]
        text += f" chunks {c[0]} {c[1]} {c[2]}"
    elif nb.metric == "accuracy":
        c = nb.counts[j]
        text += f" tokens {c[0]} {c[1]}"
    return text


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
        handle = open(path, encoding=encoding)
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


# ------------------------------------------------------------------------------------ the reranker
class Reranker:
    """Averaged ranking perceptron over global features.

    Parameters
    ----------
    features : list of names from GLOBAL_FEATURES (None: all of them)
    epochs : passes over the training groups
    average : average the weights (lazily; see ``structperc._kernels.ranking``)
    seed : seed of the per-epoch shuffles of the groups
    score_weight : initial weight of feature 1 (the relative base-model score); with a positive value
        the untrained reranker keeps the base model's 1-best. Use 0 for files whose feature 1 is not
        a model score.

    Attributes
    ----------
    weights_ : float64 (n_weights,) the (averaged) weights; weights_[f] belongs to feature id f
    score_scale_ : mean |value| of the non-zero feature-1 values in training; feature 1 is divided
        by it (in training and prediction) so that its scale is comparable to the count features
    vocabulary_ : dict feature string -> id, or None when trained on a plain SVMrank file
    history_ : list of dict(epoch, mistakes) per epoch
    n_iter_ : epochs run
    """

    def __init__(self, features=None, epochs=10, average=True, seed=0, score_weight=1.0):
        self.features = features
        self.epochs = epochs
        self.average = average
        self.seed = seed
        self.score_weight = score_weight

    def fit(self, nb):
        """Learn the vocabulary on training n-best lists (with gold labels) and train; returns self."""
        if nb.metric is None:
            raise ConfigError(f"{nb.corpus.path}: training n-best lists need gold labels")
        data, vocabulary = featurize(nb, self.features, {}, grow=True)
        return self.fit_ranking(data, vocabulary)

    def fit_ranking(self, data, vocabulary=None):
        """Train on RankingData (e.g. from ``read_svmrank``); returns self."""
        if self.epochs < 1:
            raise ConfigError(f"epochs must be at least 1, got {self.epochs!r}")
        n_weights = max(data.n_features, (max(vocabulary.values()) + 1) if vocabulary else 0, FIRST_FEATURE_ID)
        score_values = data.values[data.feature_ids == SCORE_FEATURE]
        nonzero = np.abs(score_values[score_values != 0])
        self.score_scale_ = float(nonzero.mean()) if len(nonzero) else 1.0
        values = self._scaled_values(data)
        w = np.zeros(n_weights)
        w[SCORE_FEATURE] = self.score_weight
        u = np.zeros(n_weights) if self.average else np.zeros(0)
        best = data.best_rows()
        rng = np.random.default_rng(self.seed)
        counter = 0.0
        self.history_ = []
        for epoch in range(1, self.epochs + 1):
            order = rng.permutation(data.n_groups).astype(np.int64)
            groups = Groups(data.group_offsets, data.row_offsets, data.feature_ids, values, data.targets, best)
            counter, mistakes = ranking_epoch(w, u, counter, groups, order)
            self.history_.append({"epoch": epoch, "mistakes": int(mistakes)})
        self.weights_ = w - u / counter if self.average and counter > 0 else w
        self.vocabulary_ = vocabulary
        self.n_iter_ = self.epochs
        return self

    def _scaled_values(self, data):
        """Feature values with feature 1 (the relative model score) divided by ``score_scale_``."""
        values = data.values.copy()
        values[data.feature_ids == SCORE_FEATURE] /= self.score_scale_
        return values

    def _weights_for(self, data):
        w = self.weights_
        if data.n_features > len(w):
            w = np.concatenate([w, np.zeros(data.n_features - len(w))])
        return w

    def decision_function(self, data):
        """w · x of every row (float64 (C,))."""
        w = self._weights_for(data)
        ids, values, offsets = data.feature_ids, self._scaled_values(data), data.row_offsets
        owner = np.repeat(np.arange(data.n_rows), np.diff(offsets))
        return np.bincount(owner, weights=w[ids] * values, minlength=data.n_rows)

    def choose(self, data):
        """Row of the highest-scoring candidate of every group (ties to the first row)."""
        return predict_groups(self._weights_for(data), data.group_offsets, data.row_offsets,
                              data.feature_ids, self._scaled_values(data))

    def rerank(self, nb):
        """Per sentence of an NBestList, the index of the chosen candidate (-1 for none)."""
        if self.vocabulary_ is None:
            raise ConfigError("this reranker was trained on an SVMrank file without a feature vocabulary; "
                              "it can only rerank SVMrank files")
        data, _ = featurize(nb, self.features, self.vocabulary_, grow=False)
        rows = self.choose(data)
        choice = np.full(nb.n_sentences, -1, dtype=np.int64)
        # rows of featurized data are the candidates of the non-empty sentences, in order
        choice[data.qids - 1] = rows[: data.n_groups]
        return choice

    # -------------------------------------------------------------- file
    def save(self, path):
        """``.npz`` (weights, vocabulary) plus JSON metadata, written atomically."""
        vocabulary = self.vocabulary_ or {}
        strings = sorted(vocabulary, key=vocabulary.get)
        ids = np.fromiter((vocabulary[s] for s in strings), dtype=np.int64, count=len(strings))
        meta = {
            "format_version": FORMAT_VERSION, "kind": "structperc-reranker",
            "features": check_feature_names(self.features), "epochs": self.epochs, "average": self.average,
            "seed": self.seed, "score_weight": self.score_weight, "score_scale": self.score_scale_,
            "history": self.history_,
            "has_vocabulary": self.vocabulary_ is not None,
        }
        arrays = {
            "weights": self.weights_,
            "vocabulary": np.array(strings, dtype=np.str_) if strings else np.zeros(0, dtype="<U1"),
            "vocabulary_ids": ids,
        }
        return write_npz(path, arrays, meta)

    @classmethod
    def load(cls, path):
        arrays, meta = read_npz(path, "reranker")
        if meta.get("kind") != "structperc-reranker":
            raise ModelFileError(f"{path}: not a structperc reranker file")
        if meta.get("format_version") != FORMAT_VERSION:
            raise ModelFileError(f"{path}: reranker format version {meta.get('format_version')!r}, "
                                 f"this structperc reads version {FORMAT_VERSION}")
        try:
            reranker = cls(features=meta["features"], epochs=meta["epochs"], average=meta["average"],
                           seed=meta["seed"], score_weight=meta["score_weight"])
            reranker.weights_ = arrays["weights"].astype(np.float64)
            reranker.vocabulary_ = (
                dict(zip(arrays["vocabulary"].tolist(), arrays["vocabulary_ids"].tolist()))
                if meta["has_vocabulary"] else None
            )
            reranker.score_scale_ = float(meta["score_scale"])
            reranker.history_ = meta["history"]
            reranker.n_iter_ = len(reranker.history_)
        except KeyError as exc:
            raise ModelFileError(f"{path}: reranker file lacks {exc}") from None
        return reranker


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
        denominator = totals[1] + totals[2]
        out["f1"] = 200.0 * totals[0] / denominator if denominator else 0.0
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

    from .files import atomic_write

    with atomic_write(path) as fh:
        json.dump({"features": features, "vocabulary": vocabulary}, fh)


def write_nbest_file(tagger, input, k, output=None, format="block", features=None, vocab=None, vocab_out=None):
    """The k best labelings of every sentence of a corpus file, written as "block" or "svmrank".

    input is read as ``tagger`` read its training corpus, with or without the label column.
    svmrank: ``vocab`` reads a fixed feature vocabulary (unseen features are dropped), otherwise one
    is learned on these lists and written to ``vocab_out`` when given. output: a file written
    atomically, or None for standard output. Returns the NBestList summary plus "output".
    """
    from .files import open_output
    from .nbest import nbest_corpus, write_block

    if format not in ("block", "svmrank"):
        raise ConfigError(f"unknown n-best format {format!r}: choose one of block, svmrank")
    names = check_feature_names(features)
    vocabulary = read_vocabulary(vocab)[1] if vocab else None
    nb = nbest_corpus(tagger, tagger.read(input, require_label=False), k)
    with open_output(output) as out:
        if format == "block":
            write_block(out, nb)
        else:
            data, vocabulary = featurize(nb, names, vocabulary, grow=vocab is None)
            write_svmrank(out, data)
    if format == "svmrank" and vocab_out:
        write_vocabulary(vocab_out, vocabulary, names)
    summary = nb.summary()
    summary["output"] = str(output) if output else None
    return summary


def train_reranker_file(path, vocab=None, **params):
    """A Reranker(**params) trained on an SVMrank file; with ``vocab`` (a feature vocabulary file)
    its features and vocabulary are stored in the reranker. Returns (reranker, summary)."""
    data = read_svmrank(path)
    features, vocabulary = read_vocabulary(vocab) if vocab else (None, None)
    reranker = Reranker(features=features, **params).fit_ranking(data, vocabulary)
    summary = {"groups": data.n_groups, "candidates": data.n_rows,
               "weights": int(len(reranker.weights_)), "history": reranker.history_}
    return reranker, summary


def apply_reranker_file(reranker, path, output=None):
    """Choose one candidate per qid of an SVMrank file and write "QID INDEX SCORE # COMMENT" lines
    (INDEX: 0-based position within the qid; SCORE: w . x) to ``output`` (atomically) or standard
    output. Returns {"groups"} plus, when the file has targets, the "reranked", "first" and "oracle"
    scores of ``chosen_score``."""
    from .files import open_output

    data = read_svmrank(path)
    rows = reranker.choose(data)
    scores = reranker.decision_function(data)
    with open_output(output) as out:
        lines = []
        for g, j in enumerate(rows):
            line = f"{int(data.qids[g])} {int(j - data.group_offsets[g])} {float(scores[j])!r}"
            if data.comments[j]:
                line += f" # {data.comments[j]}"
            lines.append(line + "\n")
        out.write("".join(lines))
    summary = {"groups": data.n_groups}
    if np.any(data.targets != 0):
        summary["reranked"] = chosen_score(data, rows)
        summary["first"] = chosen_score(data, data.group_offsets[:-1])
        summary["oracle"] = chosen_score(data, data.best_rows())
    return summary
