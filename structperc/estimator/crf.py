"""``CRF``: sklearn-crfsuite's estimator, with its constructor, on a ``Tagger`` held inside."""
import os
import tempfile

from structperc.errors import ConfigError, DataError, ModelFileError
from structperc.estimator.base import Fitted
from structperc.estimator.sklearn_base import SklearnBase, builds_on_sklearn
from structperc.estimator.tagger import SequenceTags, Tagger
from structperc.evaluate.scorers import flat_accuracy_score
from structperc.train.sgd import l2_of_c2

# CRFsuite's defaults (``crfsuite -H``) of the options that have a counterpart here: a value equal to
# the default is accepted, any other one must be supported by the chosen algorithm
NUM_MEMORIES, MAX_LINESEARCH = 6, 20
CALIBRATION = {"calibration_eta": 0.1, "calibration_rate": 2.0, "calibration_candidates": 10,
               "calibration_max_trials": 20}
NAN = float("nan")


class Algorithm:
    """One of CRFsuite's training algorithms as this CRF runs it: the parameters it takes beyond those
    all take, its epochs when max_iterations is None, and CRFsuite's "Loss" of an iteration from the
    statistics of an epoch of the rule that trains it."""

    def __init__(self, takes, epochs, loss):
        self.takes, self.epochs, self.loss = frozenset(takes), epochs, loss


# epochs when max_iterations is None: CRFsuite's for lbfgs is "until a stopping test holds"; for l2sgd
# its 1000 epochs are cut short by its own delta test, which structperc's SGD lacks
ALGORITHMS = {
    "lbfgs": Algorithm({"c1", "c2", "epsilon", "period", "delta", "all_possible_transitions"}, 1_000_000,
                       lambda stats: stats.get("loss", NAN)),
    "l2sgd": Algorithm({"c2", "calibration_samples"}, 10, lambda stats: -stats.get("objective", NAN)),
    # CRFsuite's ap counts the wrong labels
    "ap": Algorithm({"averaging"}, 100, lambda stats: stats.get("token_errors", NAN)),
    "pa": Algorithm({"averaging", "pa_type", "c", "error_sensitive"}, 100, lambda stats: stats.get("loss", NAN)),
    "arow": Algorithm({"variance", "gamma"}, 100, lambda stats: stats.get("loss", NAN)),
}
# parameters not recorded in the model file: where it is, and what is refused unless default
NOT_RECORDED = ("model_filename", "keep_tempfiles", "trainer_cls")


class TrainingLog:
    """The per-iteration log of a fit, as sklearn-crfsuite's ``training_log_``: ``iterations`` is a
    list of dicts (num, loss, time, the rule's own figures such as active_features and feature_norm,
    and ``scores`` on the dev data), ``last_iteration`` the last one."""

    def __init__(self, iterations):
        self.iterations = iterations

    @property
    def last_iteration(self):
        return self.iterations[-1] if self.iterations else {}

    def __repr__(self):
        return f"TrainingLog({len(self.iterations)} iterations)"


def iteration_line(entry):
    """One iteration of ``verbose`` output, laid out as sklearn-crfsuite prints it."""
    parts = [f"Iter {entry['num']:<3} ", f"time={entry['time']:<5.2f} ", f"loss={entry['loss']:<8.2f} "]
    if "active_features" in entry:
        parts.append(f"active={entry['active_features']:<5} ")
    scores = entry.get("scores")
    if scores:
        parts.append(f"accuracy={scores['accuracy'] / 100:0.3f}  ")
        if "f1" in scores:
            parts.append(f"precision={scores['precision'] / 100:0.3f}  recall={scores['recall'] / 100:0.3f}  "
                         f"F1={scores['f1'] / 100:0.3f}  ")
    if "feature_norm" in entry:
        parts.append(f"feature_norm={entry['feature_norm']:<8.2f}")
    return "".join(parts).strip()


@builds_on_sklearn
class CRF(SequenceTags, SklearnBase, Fitted):
    """A linear-chain CRF with sklearn-crfsuite's constructor and methods: change the import only.

    Input is sklearn-crfsuite's: per sentence a list of feature dicts (``features/dicts.py``: a str
    value v is the attribute ``key=v``, True or a number the attribute ``key`` with that value;
    UTF-8 bytes are read as str).

    Parameters
    ----------
    algorithm : "lbfgs" (None), "l2sgd", "ap", "pa" or "arow", CRFsuite's training algorithms.
        lbfgs: the crf trainer's solver "lbfgs" (L-BFGS, OWL-QN when c1 > 0; CRFsuite's objective
        -sum log P(y | x) + c1 ||w||_1 + c2 ||w||², the same units). l2sgd: the crf trainer's SGD
        with the same L2 term. ap: the averaged perceptron. pa: the passive-aggressive rule
        (``train/passive_aggressive.py``). arow: AROW (``train/arow.py``).
    min_freq : features seen fewer times are dropped (``Tagger``'s ``min_count``: counted in
        occurrences, CRFsuite sums the values).
    all_possible_states : a weight for every (attribute, label) pair (``Tagger``'s ``all_pairs``); by
        default only the pairs seen in training, as CRFsuite.
    all_possible_transitions : lbfgs: learn every label transition; by default those never seen in
        the training labels are held at 0, as CRFsuite. The other algorithms always learn all.
    c1, c2 : L1 (lbfgs only) and L2 (lbfgs, l2sgd) strengths in CRFsuite's units; None: 0 and 1.
    max_iterations : lbfgs iterations, or epochs of the other algorithms; None: lbfgs runs until a
        stopping test holds, l2sgd 10 epochs, ap, pa and arow 100 (CRFsuite's).
    epsilon, period, delta : lbfgs's stopping tests (CRFsuite's meaning and defaults).
    num_memories, max_linesearch : lbfgs; only CRFsuite's defaults (6, 20) are supported.
    calibration_samples : l2sgd: sentences of the learning-rate calibration. calibration_eta,
        calibration_rate, calibration_candidates, calibration_max_trials: only CRFsuite's defaults,
        which are structperc's (0.1, 2, 10, 20).
    pa_type, c, error_sensitive : pa: the variant (0: no slack, 1: PA-I, 2: PA-II), the
        aggressiveness C and whether the margin grows with the wrong labels; None: CRFsuite's
        1, 1.0 and True.
    averaging : ap, pa: average the weights (None: True, as CRFsuite).
    variance, gamma : arow: the initial variance and the trade-off γ (None: CRFsuite's 1.0, 1.0).
    verbose : print one line per iteration on stdout, as sklearn-crfsuite does.
    model_filename : None, or a path. ``fit`` writes the model there; before any ``fit``, a model
        file already there is the model (read on first use), as sklearn-crfsuite reads it. The file
        is structperc's (``save``), never CRFsuite's.
    linesearch, keep_tempfiles, trainer_cls : accepted for the signature; any value other than the
        default is a ConfigError (no counterpart here: structperc writes no temporary model file).

    Attributes
    ----------
    Before ``fit`` (and without a model file) each of these is None.

    tagger_ : the fitted ``Tagger``
    classes_ : list of the labels
    num_attributes_ : number of attributes in the model
    attributes_ : list of the attributes, by attribute id (CRFsuite's ``key:value`` names)
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
        if algorithm not in ALGORITHMS:
            raise ConfigError(f"CRF: unknown algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}")
        return algorithm

    def _check_params(self, algorithm):
        """ConfigError naming a parameter set to a value that ``algorithm`` does not support here."""
        def refuse(name, why):
            raise ConfigError(f"CRF: {name}={getattr(self, name)!r} {why}")

        for name, default in {"linesearch": None, "keep_tempfiles": False, "trainer_cls": None}.items():
            if getattr(self, name) != default:
                refuse(name, "is not supported by structperc's CRF")
        if self.num_memories not in (None, NUM_MEMORIES):
            refuse("num_memories", f"is not supported: L-BFGS keeps {NUM_MEMORIES} corrections")
        if self.max_linesearch not in (None, MAX_LINESEARCH):
            refuse("max_linesearch", f"is not supported: the line search takes up to {MAX_LINESEARCH} trials")
        for name, default in CALIBRATION.items():
            if getattr(self, name) not in (None, default):
                refuse(name, f"is not supported: the calibration uses CRFsuite's default {default}")
        taken = set().union(*(a.takes for a in ALGORITHMS.values()))
        for name in sorted(taken - ALGORITHMS[algorithm].takes - {"all_possible_transitions"}):
            if getattr(self, name) is not None:
                refuse(name, f"does not apply to algorithm {algorithm!r}")
        for name in ("c1", "c2"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                refuse(name, "must be >= 0")
        if self.max_iterations is not None and (int(self.max_iterations) != self.max_iterations
                                                or self.max_iterations < 1):
            refuse("max_iterations", "must be a positive integer")
        if self.pa_type is not None and self.pa_type not in (0, 1, 2):
            refuse("pa_type", "must be 0 (PA), 1 (PA-I) or 2 (PA-II)")
        if self.c is not None and not self.c > 0:
            refuse("c", "must be > 0 (the aggressiveness of pa)")

    def _tagger(self, n_sentences):
        """The Tagger that trains what this CRF's parameters ask for, on ``n_sentences`` sentences."""
        algorithm = self._algorithm()
        self._check_params(algorithm)
        n = max(n_sentences, 1)
        epochs = int(self.max_iterations) if self.max_iterations is not None else ALGORITHMS[algorithm].epochs
        common = {"epochs": epochs, "min_count": int(self.min_freq or 0),
                  "all_pairs": bool(self.all_possible_states)}
        c2 = 1.0 if self.c2 is None else float(self.c2)
        average = None if self.averaging is None else bool(self.averaging)  # None: the rule's True
        if algorithm == "lbfgs":
            c1 = 0.0 if self.c1 is None else float(self.c1)
            # CRFsuite's c1 ||w||_1 + c2 ||w||² is the crf rule's N l1 ||w||_1 + (N l2 / 2) ||w||²
            return Tagger(trainer="crf", solver="lbfgs", l2=l2_of_c2(c2, n), l1=c1 / n, epsilon=self.epsilon,
                          period=self.period, delta=self.delta, boundary=False,
                          unseen_transitions=bool(self.all_possible_transitions), **common)
        if algorithm == "l2sgd":
            return Tagger(trainer="crf", l2=l2_of_c2(c2, n), calibration_sentences=self.calibration_samples, **common)
        if algorithm == "ap":
            return Tagger(trainer="perceptron", average=average, **common)
        if algorithm == "pa":
            return Tagger(trainer="pa", pa_type=self.pa_type, aggressiveness=self.c, average=average,
                          error_sensitive=None if self.error_sensitive is None else bool(self.error_sensitive),
                          **common)
        return Tagger(trainer="arow", variance=self.variance, gamma=self.gamma, **common)

    # ------------------------------------------------------------------ training
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on the feature dicts X (list of sentences, each a list of dicts) and labels y
        (list of lists of str); X_dev, y_dev: held-out data scored after each iteration. With
        ``model_filename``, the model is written there. Returns self."""
        if (X_dev is None) != (y_dev is None):
            raise DataError("Pass both X_dev and y_dev to use the holdout data")
        X, y = list(X), list(y)
        if len(X) != len(y):
            raise DataError(f"X has {len(X)} sentences, y has {len(y)}")
        algorithm = self._algorithm()
        tagger = self._tagger(len(X))
        iterations = []

        def on_epoch(record):
            loss = float(ALGORITHMS[algorithm].loss(record.stats))
            entry = {"num": record.epoch, "time": record.seconds, "loss": loss,
                     **{k: v for k, v in record.stats.items() if k != "loss"}}
            if record.dev is not None:
                entry["scores"] = dict(record.dev)
            iterations.append(entry)
            if self.verbose:
                print(iteration_line(entry), flush=True)

        dev = None if X_dev is None else list(X_dev)
        tagger.fit(X, y, dev=dev, dev_y=None if y_dev is None else list(y_dev), callback=on_epoch)
        tagger.model_.metadata["crf"] = self._record()
        self._fitted = tagger
        self._training_log = TrainingLog(iterations)
        self._size = None
        if self.model_filename is not None:
            self.save(self.model_filename)
        return self

    def _record(self):
        """The parameters a model file keeps, so that ``load_model`` gives back this CRF."""
        return {name: value for name, value in self.get_params().items() if name not in NOT_RECORDED}

    def __sklearn_is_fitted__(self):
        return self.tagger_ is not None

    # ------------------------------------------------------------------ prediction
    def _model(self):
        tagger = self.tagger_
        if tagger is None:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This CRF is not fitted yet: call fit, or give model_filename of a saved model")
        return tagger

    def predict(self, X):
        """Per sentence, the list of predicted labels."""
        return self._model().predict(list(X))

    def predict_single(self, xseq):
        """The predicted labels of one sentence (a list of feature dicts)."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X):
        """Per sentence, per token, {label: P(y_t = label | x)} under the CRF the weights define,
        whichever algorithm trained them (forward-backward on the weights, as CRFsuite)."""
        return self._model().predict_marginals(list(X), any_rule=True)

    def predict_marginals_single(self, xseq):
        """``predict_marginals`` of one sentence."""
        return self.predict_marginals([xseq])[0]

    def explain(self, xseq, labels=None, versus=None):
        """``Tagger.explain`` of one sequence of feature dicts: every term of its path's score."""
        return self.tagger_.explain(xseq, labels, versus)

    def score(self, X, y):
        """Token accuracy, a fraction (sklearn-crfsuite's flat accuracy)."""
        return flat_accuracy_score(y, self.predict(X))

    # ------------------------------------------------------------------ the model
    @property
    def tagger_(self):
        """The fitted ``Tagger``; before ``fit``, the model in ``model_filename`` when that file
        exists (read once), else None."""
        tagger = self.__dict__.get("_fitted")
        if tagger is None and self.model_filename is not None and os.path.exists(self.model_filename):
            tagger = self._fitted = Tagger.load(self.model_filename)
        return tagger

    @property
    def training_log_(self):
        return self.__dict__.get("_training_log")

    @property
    def classes_(self):
        tagger = self.tagger_
        return None if tagger is None else list(tagger.labels_)

    @property
    def num_attributes_(self):
        tagger = self.tagger_
        return None if tagger is None else len(tagger.model_.encoder.attributes_)

    @property
    def attributes_(self):
        tagger = self.tagger_
        return None if tagger is None else [_crfsuite_attribute(a) for a in tagger.model_.encoder.attributes_]

    @property
    def state_features_(self):
        tagger = self.tagger_
        if tagger is None:
            return None
        return {(_crfsuite_attribute(attribute), label): weight
                for (attribute, label), weight in tagger.state_features_.items()}

    @property
    def transition_features_(self):
        tagger = self.tagger_
        if tagger is None:
            return None
        return {pair: weight for pair, weight in tagger.transition_features_.items() if weight != 0}

    @property
    def size_(self):
        """Bytes of the model file (the one ``save`` writes)."""
        tagger = self.tagger_
        if tagger is None:
            return None
        if self.__dict__.get("_size") is None:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "model.npz")
                tagger.save(path)
                self._size = os.path.getsize(path)
        return self._size

    # ------------------------------------------------------------------ files
    def save(self, path):
        """Write the model file (atomically); ``structperc.load_model`` and ``CRF.load`` read it back
        as this CRF."""
        self._model().save(path)
        self._size = os.path.getsize(path)
        return path

    @classmethod
    def load(cls, path):
        """The CRF of a model file written by ``save`` (or by ``fit`` with ``model_filename``)."""
        return cls.from_tagger(Tagger.load(path))

    @classmethod
    def from_tagger(cls, tagger):
        """A fitted CRF around a ``Tagger`` trained on feature dicts, with the parameters its model
        records (the defaults when the model was not trained through a CRF)."""
        if tagger.model_.metadata.get("input", {}).get("format") != "dicts":
            raise ModelFileError("a CRF is a model trained on feature dicts; this one was trained on token "
                                 "columns: load it with structperc.load_model")
        recorded = tagger.model_.metadata.get("crf", {})
        crf = cls(**{name: value for name, value in recorded.items() if name not in NOT_RECORDED})  # never a path
        crf._fitted = tagger
        return crf


def _crfsuite_attribute(name):
    """CRFsuite's name ``key:value`` of the attribute that ``features/dicts.py`` names ``key=value``."""
    key, sep, value = name.partition("=")
    return f"{key}:{value}" if sep else name
