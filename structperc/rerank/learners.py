"""Rerankers: learners that choose one candidate per group of RankingData. ``Reranker`` is the primal
(averaged) ranking perceptron, ``DualReranker`` the voted or averaged perceptron in dual form with a linear or
polynomial kernel, ``BoostReranker`` Collins' ranking boosting, ``LossReranker`` MIRA or the loss-scaled
perceptron. They share featurizing, the base score's scaling and the model file (``base.py``)."""
import time

import numpy as np

from structperc._kernels.rank.loss_ranking import loss_epoch
from structperc._kernels.rank.dual_ranking import Postings, Rows, Support, dual_epoch, dual_predict, linear_vote
from structperc._kernels.rank.rank_boosting import FeaturePairs, PairRows, boost_rounds, pair_differences
from structperc._kernels.rank.ranking import group_argmax, predict_groups, ranking_epoch
from structperc._kernels.records import Groups
from structperc.errors import ConfigError, ModelFileError
from structperc.corpus import index_ranges
from structperc.utils.npz import read_npz
from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE
from structperc.rerank.base import FORMAT_VERSION, RerankerBase

class Learner(RerankerBase):
    """A reranker of the registry (``LEARNERS``), whose files ``load`` reads, whichever learner wrote them."""

    @classmethod
    def load(cls, path):
        """Any reranker file (the learner is recorded in it)."""
        return load_reranker(path)


def load_reranker(path):
    arrays, meta = read_npz(path, "reranker")
    return reranker_from_state(arrays, meta, path)


def reranker_from_state(arrays, meta, path="<model>"):
    """The fitted reranker of ``state()``'s arrays and metadata; ModelFileError naming ``path``."""
    if meta.get("kind") != "structperc-reranker":
        raise ModelFileError(f"{path}: not a structperc reranker file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{path}: reranker format version {meta.get('format_version')!r}, "
                             f"this structperc reads version {FORMAT_VERSION}")
    learner = meta.get("learner", "perceptron")
    if learner not in LEARNERS:
        raise ModelFileError(f"{path}: unknown reranker learner {learner!r}")
    cls = LEARNERS[learner]
    try:
        reranker = cls(features=meta["features"], seed=meta["seed"], score_weight=meta["score_weight"],
                       **{name: meta[name] for name in cls.hyperparameters})
        reranker.restore_arrays(arrays)
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


# ------------------------------------------------------------------------------------ the reranker
class Reranker(Learner):
    """Averaged ranking perceptron over global features.

    Parameters
    ----------
    features : list of names from GLOBAL_FEATURES (None: all of them)
    epochs : passes over the training groups
    average : average the weights (lazily; see ``structperc._kernels.rank.ranking``)
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

    def fit_ranking(self, data, vocabulary=None):
        """Train on RankingData (e.g. from ``read_svmrank``); returns self."""
        self._check_settings()
        n_weights = max(data.n_features, (max(vocabulary.values()) + 1) if vocabulary else 0, FIRST_FEATURE_ID)
        self._fit_scale(data)
        values = self._scaled_values(data)
        w = np.zeros(n_weights)
        w[SCORE_FEATURE] = self.score_weight
        u = np.zeros(n_weights) if self.average else np.zeros(0)
        groups = Groups(data.group_offsets, data.row_offsets, data.feature_ids, values, data.targets,
                        data.best_rows())
        rng = np.random.default_rng(self.seed)
        counter = 0.0
        self.history_ = []
        for epoch in range(1, self.epochs + 1):
            order = rng.permutation(data.n_groups).astype(np.int64)
            counter, mistakes = self._epoch(w, u, counter, groups, order)
            self.history_.append({"epoch": epoch, "mistakes": int(mistakes)})
        self.weights_ = w - u / counter if self.average and counter > 0 else w
        self.vocabulary_ = vocabulary
        self.n_iter_ = self.epochs
        return self

    def _check_settings(self):
        if self.epochs < 1:
            raise ConfigError(f"epochs must be at least 1, got {self.epochs!r}")

    def _epoch(self, w, u, counter, groups, order):
        """(counter, mistakes) after one epoch over the groups in ``order`` (the ranking perceptron's)."""
        return ranking_epoch(w, u, counter, groups, order)

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

    def linear_weights(self):
        """The weights with the base score's divided by ``score_scale_`` (w · scaled x = this · x)."""
        w = self.weights_.copy()
        w[SCORE_FEATURE] /= self.score_scale_
        return w

    # -------------------------------------------------------------- state
    hyperparameters = ("epochs", "average")
    learner = "perceptron"

    def _params(self):
        return {"epochs": self.epochs, "average": self.average}

    def _arrays(self):
        return {"weights": self.weights_}

    def restore_arrays(self, arrays):
        self.weights_ = arrays["weights"].astype(np.float64)


# ------------------------------------------------------------------------------------ dual form
VOTES = ("voted", "averaged")
INITIAL_MISTAKES = 1024  # room for mistakes before the arrays grow (doubling)


def kernel_degree(kernel):
    """1 for "linear", D for "poly:D" (D >= 1); ConfigError otherwise."""
    if kernel == "linear":
        return 1
    name, _, degree = str(kernel).partition(":")
    if name == "poly" and degree.isdigit() and int(degree) >= 1:
        return int(degree)
    raise ConfigError(f"unknown kernel {kernel!r}: give linear or poly:D with an integer D >= 1")


class DualReranker(Learner):
    """The ranking perceptron in dual form: Freund & Schapire's voted perceptron, or the averaged one,
    with a linear or polynomial kernel (Collins & Duffy 2002); see ``structperc._kernels.rank.dual_ranking``.

    Parameters
    ----------
    features, seed, score_weight : as for ``Reranker`` (score_weight: the linear weight w0 of feature 1)
    epochs : passes over the training groups
    kernel : "linear" (x · z) or "poly:D" ((1 + x · z)^D)
    vote : "voted" (survival-weighted vote of all intermediate vectors) or "averaged"

    Attributes
    ----------
    support_offsets_, support_ids_, support_values_ : CSR rows of the mistakes, row 2m the gold and
        row 2m + 1 the predicted candidate of mistake m (scaled values)
    survival_ : float64 (M + 1,) groups visited while each intermediate vector was current
    history_ : list of dict(epoch, mistakes, kernel_evaluations, seconds)
    """

    hyperparameters = ("epochs", "kernel", "vote")
    learner = "dual"

    def __init__(self, features=None, epochs=1, kernel="linear", vote="voted", seed=0, score_weight=1.0):
        self.features = features
        self.epochs = epochs
        self.kernel = kernel
        self.vote = vote
        self.seed = seed
        self.score_weight = score_weight

    def _check(self):
        if self.epochs < 1:
            raise ConfigError(f"epochs must be at least 1, got {self.epochs!r}")
        if self.vote not in VOTES:
            raise ConfigError(f"unknown vote {self.vote!r}: choose one of {', '.join(VOTES)}")
        return kernel_degree(self.kernel)

    def fit_ranking(self, data, vocabulary=None):
        """Train on RankingData; returns self."""
        degree = self._check()
        self._fit_scale(data)
        values = self._scaled_values(data)
        w0 = self._w0()
        best = data.best_rows()
        groups = Groups(data.group_offsets, data.row_offsets, data.feature_ids, values, data.targets, best)
        rng = np.random.default_rng(self.seed)
        mistakes = np.zeros((INITIAL_MISTAKES, 2), dtype=np.int64)
        survival = np.zeros(INITIAL_MISTAKES + 1)
        n_mistakes = 0
        n_weights = max(data.n_features, FIRST_FEATURE_ID)
        w = np.zeros(n_weights if degree == 1 else 0)
        if degree == 1:
            w[SCORE_FEATURE] = self.score_weight
        widest = int(np.diff(data.row_offsets).max()) if data.n_rows else 0

        def postings(capacity):
            # room for the 2 rows of every possible mistake
            entries = 2 * capacity * widest if degree != 1 else 0
            return Postings(np.full(n_weights if degree != 1 else 0, -1, dtype=np.int64),
                            np.empty(entries, dtype=np.int64), np.empty(entries, dtype=np.int64), np.empty(entries),
                            np.zeros(1, dtype=np.int64))

        index = postings(len(mistakes))
        self.history_ = []
        for epoch in range(1, self.epochs + 1):
            order = rng.permutation(data.n_groups).astype(np.int64)
            start = time.perf_counter()
            while True:
                saved, saved_w = survival.copy(), w.copy()
                saved_index = tuple(array.copy() for array in index)
                result, made, evaluations = dual_epoch(w0, w, Support(mistakes, survival), n_mistakes, index,
                                                       groups, degree, order)
                if result >= 0:
                    n_mistakes = result
                    break
                # out of room: grow and rerun the epoch from its start
                grown = np.zeros((2 * len(mistakes), 2), dtype=np.int64)
                grown[: len(mistakes)] = mistakes
                mistakes = grown
                survival = np.zeros(len(mistakes) + 1)
                survival[: len(saved)] = saved
                w = saved_w
                index = postings(len(mistakes))
                for new, old in zip(index, saved_index):
                    if new.ndim and len(old):
                        new[: len(old)] = old
                index[4][0] = saved_index[4][0]
            self.history_.append({"epoch": epoch, "mistakes": int(made), "kernel_evaluations": int(evaluations),
                                  "seconds": time.perf_counter() - start})
        rows = mistakes[:n_mistakes].ravel()
        entries = index_ranges(data.row_offsets[rows], data.row_offsets[rows + 1])
        self.support_offsets_ = np.concatenate([[0], np.cumsum(np.diff(data.row_offsets)[rows])]).astype(np.int64)
        self.support_ids_ = data.feature_ids[entries]
        self.support_values_ = values[entries]
        self.survival_ = survival[: n_mistakes + 1].copy()
        self.vocabulary_ = vocabulary
        self.n_iter_ = self.epochs
        return self

    def _w0(self):
        w0 = np.zeros(FIRST_FEATURE_ID)
        w0[SCORE_FEATURE] = self.score_weight
        return w0

    def vote_and_average(self, data):
        """(voted choice int64 (G,), averaged scores float64 (C,)) of every group, from one pass
        over the mistakes per group."""
        support = Rows(self.support_offsets_, self.support_ids_, self.support_values_)
        candidates = Rows(data.row_offsets, data.feature_ids, self._scaled_values(data))
        degree = kernel_degree(self.kernel)
        if degree == 1:
            return linear_vote(self._w0(), support, self.survival_, data.group_offsets, candidates)
        return dual_predict(self._w0(), support, self.survival_, data.group_offsets, candidates, degree)

    def decision_function(self, data):
        """Averaged scores Σ_m survival[m] v_m · φ(x) of every row (float64 (C,)); the voted choice
        is not a function of one score."""
        return self.vote_and_average(data)[1]

    def choose(self, data):
        """Row of the chosen candidate of every group: the most votes, or the best averaged score
        (ties to the first row)."""
        voted, averaged = self.vote_and_average(data)
        return voted if self.vote == "voted" else group_argmax(averaged, data.group_offsets)

    def _params(self):
        return {"epochs": self.epochs, "kernel": self.kernel, "vote": self.vote}

    def _arrays(self):
        return {"support_offsets": self.support_offsets_, "support_ids": self.support_ids_,
                "support_values": self.support_values_, "survival": self.survival_}

    def restore_arrays(self, arrays):
        self.support_offsets_ = arrays["support_offsets"].astype(np.int64)
        self.support_ids_ = arrays["support_ids"].astype(np.int64)
        self.support_values_ = arrays["support_values"].astype(np.float64)
        self.survival_ = arrays["survival"].astype(np.float64)


# ------------------------------------------------------------------------------------ boosting
def exp_loss_weight(differences, upper=1e4):
    """argmin_{a >= 0} Σ exp(-a d) over the given differences d (bisection on the convex loss's slope)."""
    d = np.asarray(differences, dtype=np.float64)

    def slope(a):
        return float(-(d * np.exp(np.clip(-a * d, None, 700.0))).sum())

    if len(d) == 0 or slope(0.0) >= 0:
        return 0.0
    hi = 1.0
    while slope(hi) < 0 and hi < upper:
        hi *= 2.0
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class BoostReranker(Learner):
    """Collins' (2000) ranking boosting over binary features (``structperc._kernels.rank.rank_boosting``).

    Parameters
    ----------
    features, seed : as for ``Reranker`` (boosting is deterministic; seed is only recorded)
    rounds : feature updates
    epsilon : smoothing ε of the step ½ log((W+ + εZ) / (W- + εZ))
    score_weight : weight α0 of the relative base score (feature 1), or None to fit it first by
        minimizing the exponential loss of the base score alone

    Attributes
    ----------
    weights_ : float64 (n_weights,) α; weights_[1] = α0
    picks_, steps_ : the feature and δ of every round (``weights_at`` replays a prefix)
    history_ : [dict(rounds, loss)] the loss before and after boosting
    """

    hyperparameters = ("rounds", "epsilon")
    learner = "boost"

    def __init__(self, features=None, rounds=1000, epsilon=0.001, seed=0, score_weight=None):
        self.features = features
        self.rounds = rounds
        self.epsilon = epsilon
        self.seed = seed
        self.score_weight = score_weight

    def _indicators(self, data):
        """Values as the learner sees them: feature 1 scaled, every other non-zero value 1."""
        values = self._scaled_values(data)
        others = data.feature_ids != SCORE_FEATURE
        values[others] = (values[others] != 0).astype(np.float64)
        return values

    def fit_ranking(self, data, vocabulary=None):
        """Train on RankingData; returns self."""
        if self.rounds < 0:
            raise ConfigError(f"rounds must be at least 0, got {self.rounds!r}")
        if not self.epsilon > 0:
            raise ConfigError(f"epsilon must be positive, got {self.epsilon!r}")
        self._fit_scale(data)
        values = self._indicators(data)
        n_weights = max(data.n_features, (max(vocabulary.values()) + 1) if vocabulary else 0, FIRST_FEATURE_ID)
        best = data.best_rows()
        group_of_row = np.repeat(np.arange(data.n_groups), np.diff(data.group_offsets))
        gold_of_row = best[group_of_row]
        other = np.flatnonzero(data.targets < data.targets[gold_of_row]).astype(np.int64)
        gold = gold_of_row[other].astype(np.int64)
        base = np.zeros(data.n_rows)
        owner = np.repeat(np.arange(data.n_rows), np.diff(data.row_offsets))
        is_score = data.feature_ids == SCORE_FEATURE
        base[owner[is_score]] = values[is_score]
        base_difference = base[gold] - base[other]
        alpha0 = exp_loss_weight(base_difference) if self.score_weight is None else float(self.score_weight)
        pair_offsets, pair_features, pair_signs = pair_differences(gold, other, data.row_offsets, data.feature_ids,
                                                                   values, FIRST_FEATURE_ID)
        pair_of_entry = np.repeat(np.arange(len(gold)), np.diff(pair_offsets))
        by_feature = np.argsort(pair_features, kind="stable")
        feature_offsets = np.concatenate([[0], np.cumsum(np.bincount(pair_features, minlength=n_weights))])
        alpha = np.zeros(n_weights)
        alpha[SCORE_FEATURE] = alpha0
        margins = alpha0 * base_difference
        loss_before = float(np.exp(-margins).sum())
        self.picks_ = np.full(self.rounds, -1, dtype=np.int64)
        self.steps_ = np.zeros(self.rounds)
        pairs = PairRows(pair_offsets, pair_features, pair_signs)
        by_feature = FeaturePairs(feature_offsets.astype(np.int64), pair_of_entry[by_feature].astype(np.int64),
                                  pair_signs[by_feature])
        loss = boost_rounds(margins, pairs, by_feature, alpha, int(self.rounds), float(self.epsilon), self.picks_,
                            self.steps_)
        self.weights_ = alpha
        self.history_ = [{"rounds": 0, "loss": loss_before}, {"rounds": int(self.rounds), "loss": float(loss)}]
        self.vocabulary_ = vocabulary
        self.n_iter_ = int(self.rounds)
        return self

    def weights_at(self, rounds):
        """The weights after the first ``rounds`` rounds."""
        w = np.zeros_like(self.weights_)
        w[SCORE_FEATURE] = self.weights_[SCORE_FEATURE]
        kept = self.picks_[:rounds]
        np.add.at(w, kept[kept >= 0], self.steps_[:rounds][kept >= 0])
        return w

    def _weights_for(self, data, weights=None):
        w = self.weights_ if weights is None else weights
        if data.n_features > len(w):
            w = np.concatenate([w, np.zeros(data.n_features - len(w))])
        return w

    def decision_function(self, data, weights=None):
        """α · h(x) of every row (float64 (C,))."""
        w = self._weights_for(data, weights)
        owner = np.repeat(np.arange(data.n_rows), np.diff(data.row_offsets))
        return np.bincount(owner, weights=w[data.feature_ids] * self._indicators(data), minlength=data.n_rows)

    def choose(self, data, weights=None):
        """Row of the highest-scoring candidate of every group (ties to the first row); ``weights``
        (e.g. from ``weights_at``) replaces the learned ones."""
        return predict_groups(self._weights_for(data, weights), data.group_offsets, data.row_offsets,
                              data.feature_ids, self._indicators(data))

    def _params(self):
        return {"rounds": self.rounds, "epsilon": self.epsilon}

    def _arrays(self):
        return {"weights": self.weights_, "picks": self.picks_, "steps": self.steps_}

    def restore_arrays(self, arrays):
        self.weights_ = arrays["weights"].astype(np.float64)
        self.picks_ = arrays["picks"].astype(np.int64)
        self.steps_ = arrays["steps"].astype(np.float64)


# ------------------------------------------------------------------------------------ loss
UPDATES = ("mira", "scaled")


class LossReranker(Reranker):
    """A ranking learner that uses each candidate's loss (its target below the group's best):
    MIRA or the loss-scaled ranking perceptron, averaged (``structperc._kernels.rank.loss_ranking``).

    Parameters
    ----------
    features, epochs, average, seed, score_weight : as for ``Reranker``
    update : "mira" (step min(C, violation / ||x_best - x_ŷ||²)) or "scaled" (step = the loss)
    margin : m, the margin asked per unit of loss (0: a plain mistake-driven update)
    aggressiveness : C, MIRA's largest step
    """

    hyperparameters = ("epochs", "average", "update", "margin", "aggressiveness")
    learner = "loss"

    def __init__(self, features=None, epochs=10, average=True, seed=0, score_weight=1.0, update="mira", margin=1.0,
                 aggressiveness=0.1):
        super().__init__(features, epochs, average, seed, score_weight)
        self.update = update
        self.margin = margin
        self.aggressiveness = aggressiveness

    def _check_settings(self):
        super()._check_settings()
        if self.update not in UPDATES:
            raise ConfigError(f"unknown update {self.update!r}: choose one of {', '.join(UPDATES)}")
        if not self.margin >= 0 or not self.aggressiveness > 0:
            raise ConfigError(f"margin must be >= 0 and aggressiveness > 0, got {self.margin!r}, "
                              f"{self.aggressiveness!r}")

    def _epoch(self, w, u, counter, groups, order):
        """One epoch of MIRA or the loss-scaled perceptron; the updates count as its mistakes."""
        return loss_epoch(w, u, counter, groups, order, float(self.margin), float(self.aggressiveness),
                          self.update == "mira")

    def _params(self):
        return {"epochs": self.epochs, "average": self.average, "update": self.update, "margin": self.margin,
                "aggressiveness": self.aggressiveness}


LEARNERS = {"perceptron": Reranker, "dual": DualReranker, "boost": BoostReranker, "loss": LossReranker}
