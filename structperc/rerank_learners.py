"""Rerankers: learners that choose one candidate per group of RankingData."""
import numpy as np

from ._kernels.ranking import predict_groups, ranking_epoch
from ._kernels.records import Groups
from .errors import ConfigError, ModelFileError
from .npzfile import read_npz, write_npz
from .rerank_data import FIRST_FEATURE_ID, SCORE_FEATURE
from .rerank_features import check_feature_names, featurize

FORMAT_VERSION = 1


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

