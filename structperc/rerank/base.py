"""What the rerankers share (``learners.py``): featurizing, the scaling of the base score (feature 1)
and the model file."""

import numpy as np

from structperc.errors import ConfigError
from structperc.utils.npz import write_npz
from structperc.rerank.data import SCORE_FEATURE
from structperc.rerank.features import check_feature_names, featurize

FORMAT_VERSION = 1


class RerankerBase:
    """Featurizing, base-score scaling and the model file shared by the rerankers. Subclasses set
    ``learner`` and implement ``fit_ranking``, ``choose``, ``decision_function``, ``_params`` (meta
    of the hyperparameters), ``_arrays`` / ``restore_arrays`` (learned state)."""

    learner = None

    def fit(self, nb):
        """Learn the vocabulary on training n-best lists (with gold labels) and train; returns self."""
        if nb.metric is None:
            raise ConfigError(f"{nb.corpus.path}: training n-best lists need gold labels")
        data, vocabulary = featurize(nb, self.features, {}, grow=True)
        return self.fit_ranking(data, vocabulary)

    def _fit_scale(self, data):
        score_values = data.values[data.feature_ids == SCORE_FEATURE]
        nonzero = np.abs(score_values[score_values != 0])
        self.score_scale_ = float(nonzero.mean()) if len(nonzero) else 1.0

    def linear_weights(self):
        """w with w · x = this reranker's score of a candidate x (the base score unscaled), or None
        when its score is not linear in x."""
        return None

    def _scaled_values(self, data):
        """Feature values with feature 1 (the relative model score) divided by ``score_scale_``."""
        values = data.values.copy()
        values[data.feature_ids == SCORE_FEATURE] /= self.score_scale_
        return values

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
    def state(self):
        """(arrays, JSON-able metadata) of the fitted reranker: what ``save`` writes and
        ``reranker_from_state`` reads back (a reranked model file keeps them beside its base)."""
        vocabulary = self.vocabulary_ or {}
        strings = sorted(vocabulary, key=vocabulary.get)
        ids = np.fromiter((vocabulary[s] for s in strings), dtype=np.int64, count=len(strings))
        meta = {
            "format_version": FORMAT_VERSION, "kind": "structperc-reranker", "learner": self.learner,
            "features": check_feature_names(self.features), **self._params(), "seed": self.seed,
            "score_weight": self.score_weight, "score_scale": self.score_scale_, "history": self.history_,
            "has_vocabulary": self.vocabulary_ is not None,
        }
        arrays = {
            **self._arrays(),
            "vocabulary": np.array(strings, dtype=np.str_) if strings else np.zeros(0, dtype="<U1"),
            "vocabulary_ids": ids,
        }
        return arrays, meta

    def save(self, path):
        """``.npz`` (learned arrays, vocabulary) plus JSON metadata, written atomically."""
        arrays, meta = self.state()
        return write_npz(path, arrays, meta)
