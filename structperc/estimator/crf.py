"""``CRF``: sklearn-crfsuite's estimator, with its constructor, on a ``Tagger`` held inside."""
import logging
import os
import tempfile

from sklearn.base import BaseEstimator

from structperc.errors import ConfigError
from structperc.estimator.base import Fitted
from structperc.estimator.tagger import SequenceTags, Tagger
from structperc.evaluate.scorers import flat_accuracy_score
from structperc.train.sgd import l2_of_c2

logger = logging.getLogger("structperc.crf")

# CRFsuite's defaults (``crfsuite -H``) of the options that have a counterpart here: a value equal to
# the default is accepted, any other one must be supported by the chosen algorithm
NUM_MEMORIES, MAX_LINESEARCH = 6, 20
CALIBRATION = {"calibration_eta": 0.1, "calibration_rate": 2.0, "calibration_candidates": 10,
               "calibration_max_trials": 20}
# epochs when max_iterations is None: CRFsuite's for lbfgs is "until a stopping test holds";
# for l2sgd its 1000 epochs are cut short by its own delta test, which structperc's SGD lacks
DEFAULT_EPOCHS = {"lbfgs": 1_000_000, "l2sgd": 10, "ap": 100, "pa": 100}
ALGORITHMS = ("lbfgs", "l2sgd", "ap", "pa", "arow")


class TrainingLog:
    """The per-iteration log of a fit, as sklearn-crfsuite's ``training_log_``: ``iterations`` is a
    list of dicts (num, loss, active_features, feature_norm, time, and scores on the dev data),
    ``last_iteration`` the last one."""

    def __init__(self, iterations):
        self.iterations = iterations

    @property
    def last_iteration(self):
        return self.iterations[-1] if self.iterations else {}

    def __repr__(self):
        return f"TrainingLog({len(self.iterations)} iterations)"


class CRF(SequenceTags, BaseEstimator, Fitted):
    """A linear-chain CRF with sklearn-crfsuite's constructor and methods: change the import only.

    Input is sklearn-crfsuite's: per sentence a list of feature dicts (``features/dicts.py``: a str
    value v is the attribute ``key=v``, True or a number the attribute ``key`` with that value).

    Parameters
    ----------
    algorithm : "lbfgs" (None), "l2sgd", "ap", "pa"; "arow" has no counterpart here (ConfigError).
        lbfgs: the crf trainer's solver "lbfgs" (L-BFGS, OWL-QN when c1 > 0; CRFsuite's objective
        -sum log P(y | x) + c1 ||w||_1 + c2 ||w||², the same units). l2sgd: the crf trainer's SGD
        with the same L2 term. ap: the averaged perceptron. pa: the structured hinge loss by
        averaged SGD (the closest rule; CRFsuite's passive-aggressive updates differ).
    min_freq : features seen fewer times are dropped (``Tagger``'s ``min_count``: counted in
        occurrences, CRFsuite sums the values).
    all_possible_states : a weight for every (attribute, label) pair (``Tagger``'s ``all_pairs``); by
        default only the pairs seen in training, as CRFsuite.
    all_possible_transitions : lbfgs: learn every label transition; by default those never seen in
        the training labels are held at 0, as CRFsuite. The other algorithms always learn all.
    c1, c2 : L1 (lbfgs only) and L2 (lbfgs, l2sgd) strengths in CRFsuite's units; None: 0 and 1.
    max_iterations : lbfgs iterations, or epochs of the other algorithms; None: lbfgs runs until a
        stopping test holds, l2sgd 10 epochs, ap and pa 100 (CRFsuite's).
    epsilon, period, delta : lbfgs's stopping tests (CRFsuite's meaning and defaults).
    num_memories, max_linesearch : lbfgs; only CRFsuite's defaults (6, 20) are supported.
    calibration_samples : l2sgd: sentences of the learning-rate calibration. calibration_eta,
        calibration_rate, calibration_candidates, calibration_max_trials: only CRFsuite's defaults,
        which are structperc's (0.1, 2, 10, 20).
    averaging : ap, pa: average the weights (None: True, as CRFsuite).
    verbose : log each iteration on the ``structperc.crf`` logger (the library never prints).
    linesearch, pa_type, c, error_sensitive, variance, gamma, model_filename, keep_tempfiles,
    trainer_cls : accepted for the signature; any value other than the default is a ConfigError
        (no counterpart here).

    Attributes
    ----------
    tagger_ : the fitted ``Tagger``
    classes_ : list of the labels
    state_features_ : {(attribute, label): weight} of the nonzero emission weights
    transition_features_ : {(label_from, label_to): weight} of the nonzero transition weights
    training_log_ : ``TrainingLog``
    size_ : bytes of the model file

    Differences from sklearn-crfsuite / CRFsuite
    --------------------------------------------
    - Attribute names in ``state_features_`` are ``key:value`` as CRFsuite's (split at the first "=").
    - ``predict`` returns a list of lists, not a numpy object array.
    - With X_dev, the weights of the iteration (epoch) with the best dev score are kept (token
      accuracy, or entity F1 for BIO labels); CRFsuite only reports the holdout scores.
    - lbfgs with c1 = 0 is scipy's L-BFGS-B (its line search, not CRFsuite's More-Thuente); with
      c1 > 0 OWL-QN with backtracking, as CRFsuite. Both converge to the same optimum.
    - l2sgd has no delta stopping test (max_iterations epochs run), and learns every transition
      and the start and end weights. A model file is structperc's, never CRFsuite's.
    """

    fitted_attributes = ("tagger_",)  # read before fit: NotFittedError (``base.Fitted``)

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None, all_possible_transitions=None,
                 c1=None, c2=None, max_iterations=None, num_memories=None, epsilon=None, period=None, delta=None,
                 linesearch=None, max_linesearch=None, calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None, calibration_max_trials=None,
                 pa_type=None, c=None, error_sensitive=None, averaging=None, variance=None, gamma=None,
                 verbose=False, model_filename=None, keep_tempfiles=False, trainer_cls=None):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls

    # ------------------------------------------------------------------ parameters
    def _algorithm(self):
        algorithm = "lbfgs" if self.algorithm is None else self.algorithm
        if algorithm == "arow":
            raise ConfigError("CRF: algorithm 'arow' has no counterpart in structperc (use lbfgs, l2sgd, ap or pa)")
        if algorithm not in ALGORITHMS:
            raise ConfigError(f"CRF: unknown algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}")
        return algorithm

    def _check_params(self, algorithm):
        """ConfigError naming a parameter set to a value that ``algorithm`` does not support here."""
        def refuse(name, why):
            raise ConfigError(f"CRF: {name}={getattr(self, name)!r} {why}")

        unsupported = {"linesearch": None, "pa_type": None, "c": None, "error_sensitive": None, "variance": None,
                       "gamma": None, "model_filename": None, "keep_tempfiles": False, "trainer_cls": None}
        for name, default in unsupported.items():
            if getattr(self, name) != default:
                refuse(name, "is not supported by structperc's CRF")
        if self.num_memories not in (None, NUM_MEMORIES):
            refuse("num_memories", f"is not supported: L-BFGS keeps {NUM_MEMORIES} corrections")
        if self.max_linesearch not in (None, MAX_LINESEARCH):
            refuse("max_linesearch", f"is not supported: the line search takes up to {MAX_LINESEARCH} trials")
        for name, default in CALIBRATION.items():
            if getattr(self, name) not in (None, default):
                refuse(name, f"is not supported: the calibration uses CRFsuite's default {default}")
        takes = {
            "lbfgs": {"c1", "c2", "epsilon", "period", "delta", "all_possible_transitions"},
            "l2sgd": {"c2", "calibration_samples"},
            "ap": {"averaging"},
            "pa": {"averaging"},
        }[algorithm]
        for name in ("c1", "c2", "epsilon", "period", "delta", "calibration_samples", "averaging"):
            if getattr(self, name) is not None and name not in takes:
                refuse(name, f"does not apply to algorithm {algorithm!r}")
        for name in ("c1", "c2"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                refuse(name, "must be >= 0")
        if self.max_iterations is not None and (int(self.max_iterations) != self.max_iterations
                                                or self.max_iterations < 1):
            refuse("max_iterations", "must be a positive integer")

    def _tagger(self, n_sentences):
        """The Tagger that trains what this CRF's parameters ask for, on ``n_sentences`` sentences."""
        algorithm = self._algorithm()
        self._check_params(algorithm)
        n = max(n_sentences, 1)
        epochs = int(self.max_iterations) if self.max_iterations is not None else DEFAULT_EPOCHS[algorithm]
        common = {"epochs": epochs, "min_count": int(self.min_freq or 0),
                  "all_pairs": bool(self.all_possible_states)}
        c2 = 1.0 if self.c2 is None else float(self.c2)
        if algorithm == "lbfgs":
            c1 = 0.0 if self.c1 is None else float(self.c1)
            # CRFsuite's c1 ||w||_1 + c2 ||w||² is the crf rule's N l1 ||w||_1 + (N l2 / 2) ||w||²
            return Tagger(trainer="crf", solver="lbfgs", l2=l2_of_c2(c2, n), l1=c1 / n, epsilon=self.epsilon,
                          period=self.period, delta=self.delta, boundary=False,
                          unseen_transitions=bool(self.all_possible_transitions), **common)
        if algorithm == "l2sgd":
            return Tagger(trainer="crf", l2=l2_of_c2(c2, n), calibration_sentences=self.calibration_samples, **common)
        average = True if self.averaging is None else bool(self.averaging)
        return Tagger(trainer="perceptron" if algorithm == "ap" else "hinge", average=average, **common)

    # ------------------------------------------------------------------ training
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on the feature dicts X (list of sentences, each a list of dicts) and labels y
        (list of lists of str); X_dev, y_dev: held-out data scored after each iteration. Returns self."""
        if (X_dev is None) != (y_dev is None):
            raise ValueError("Pass both X_dev and y_dev to use the holdout data")
        X, y = list(X), list(y)
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} sentences, y has {len(y)}")
        tagger = self._tagger(len(X))
        iterations = []

        def on_epoch(record):
            entry = {"num": record.epoch, "time": record.seconds, **record.stats}
            if record.dev is not None:
                entry["scores"] = dict(record.dev)
            iterations.append(entry)
            if self.verbose:
                logger.info("iteration %d: %s", record.epoch,
                            ", ".join(f"{k} {v}" for k, v in entry.items() if k not in ("num", "scores")))

        dev = None if X_dev is None else list(X_dev)
        tagger.fit(X, y, dev=dev, dev_y=None if y_dev is None else list(y_dev), callback=on_epoch)
        self.tagger_ = tagger
        self.training_log_ = TrainingLog(iterations)
        self._size = None
        return self

    # ------------------------------------------------------------------ prediction
    def predict(self, X):
        """Per sentence, the list of predicted labels."""
        return self.tagger_.predict(list(X))

    def predict_single(self, xseq):
        """The predicted labels of one sentence (a list of feature dicts)."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X):
        """Per sentence, per token, {label: P(y_t = label | x)}."""
        return self.tagger_.predict_marginals(list(X))

    def predict_marginals_single(self, xseq):
        """``predict_marginals`` of one sentence."""
        return self.predict_marginals([xseq])[0]

    def score(self, X, y):
        """Token accuracy, a fraction (sklearn-crfsuite's flat accuracy)."""
        return flat_accuracy_score(y, self.predict(X))

    # ------------------------------------------------------------------ the model
    @property
    def classes_(self):
        return list(self.tagger_.labels_)

    @property
    def state_features_(self):
        return {(_crfsuite_attribute(attribute), label): weight
                for (attribute, label), weight in self.tagger_.state_features_.items()}

    @property
    def transition_features_(self):
        return {pair: weight for pair, weight in self.tagger_.transition_features_.items() if weight != 0}

    @property
    def size_(self):
        if getattr(self, "_size", None) is None:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.npz")
                self.tagger_.save(path)
                self._size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        return self._size


def _crfsuite_attribute(name):
    """CRFsuite's name ``key:value`` of the attribute that ``features/dicts.py`` names ``key=value``."""
    key, sep, value = name.partition("=")
    return f"{key}:{value}" if sep else name
