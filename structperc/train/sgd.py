"""What the SGD rules (crf, memm, hinge) share: ``ScaledSGDRule`` (lazily scaled and averaged
weights, the learning-rate schedule, see ``_kernels/learn/sgd.py``), the default L2 strength and the
calibration of the initial learning rate on a sample.
"""
import numpy as np

from structperc.errors import ConfigError
from structperc.train.base import LearningRule, NON_NEGATIVE, POSITIVE, Param


# The defaults, chosen on development data (experiments/sgd_defaults.py, results/sgd_defaults.md: CoNLL-2000
# chunking and NP chunking on a held-out tenth of train, EWT UPOS on dev, CoNLL-2002 Dutch NER on testa with
# templates and with feature dicts): c2 = 0.1, sklearn-crfsuite tutorial's value, over CRFsuite's 1; and twice
# the calibrated rate when the weights are averaged, as the average smooths out the larger steps' noise.
DEFAULT_C2 = 0.1
AVERAGED_RATE_FACTOR = 2.0


def _sgd():
    """The SGD kernels (``_kernels/learn/sgd.py``), imported on a rule's first use and not with the
    registry: a command that only tags imports the rules' declarations, never their kernels."""
    from structperc._kernels.learn import sgd

    return sgd


def squared_norm(w):
    """||w||², summed by numpy's own loop: a BLAS dot of a long vector wakes BLAS's threads, which
    then spin on the other cores for a while after it returns."""
    return float(np.einsum("i,i", w, w))


def l2_of_c2(c2, n_sentences):
    """The per-example λ of CRFsuite's c2 over ``n_sentences``: λ = 2 c2 / N, so that the penalty of the
    whole objective, (N λ / 2) ||w||², is c2 ||w||²."""
    return 2.0 * c2 / max(n_sentences, 1)


def default_l2(n_sentences):
    """λ of c2 = ``DEFAULT_C2`` (``l2_of_c2``)."""
    return l2_of_c2(DEFAULT_C2, n_sentences)


def calibration_sample(n_sentences, size):
    """``size`` evenly spaced sentence indices (all of them when the corpus is smaller); no RNG."""
    if n_sentences <= size:
        return np.arange(n_sentences, dtype=np.int64)
    return np.linspace(0, n_sentences - 1, size).round().astype(np.int64)


def calibrate_eta0(trial, initial, eta=0.1, rate=2.0, candidates=10, max_trials=20):
    """The initial learning rate that raises a sample's objective most in one pass (CRFsuite's
    l2sgd calibration): try eta, eta * rate, ... while the pass improves on ``initial``, then
    eta / rate, eta / rate², ...; keep the best of the candidates tried.

    trial : callable(eta) -> objective after one pass from the initial weights (higher is better)
    initial : the sample's objective at the initial weights
    """
    best_eta, best = eta, -np.inf
    decreasing, left, trials = False, candidates, 0
    current = eta
    while trials < max_trials and (left > 0 or not decreasing):
        value = trial(current)
        trials += 1
        improved = np.isfinite(value) and value > initial
        if improved:
            left -= 1
        if np.isfinite(value) and value > best:
            best_eta, best = current, value
        if not decreasing:
            if improved and left > 0:
                current *= rate
            else:
                decreasing, left, current = True, candidates, eta / rate
        else:
            current /= rate
    return best_eta


class ScaledSGDRule(LearningRule):
    """SGD with L2 decay on w = s v (see ``_kernels/learn/sgd.py``): η_t = η0 / (1 + λ η0 t), t the
    examples seen so far, each example decaying w by (1 - η_t λ); optionally averaged.

    With ``average``, the average restarts (``restart_average``) when epoch ``average_start`` ends.
    A subclass sets ``name``, ``params``, ``normalization`` and ``gain_name`` and implements
    ``_pass(v, u, state, visit_order, rate) -> (gain, counters)``: one numba call over the sentences
    ``visit_order`` with the schedule ``rate`` (a ``_kernels.sgd.Rate``), where
    gain is the summed per-sentence objective term (higher is better: log-likelihood, minus hinge
    loss) at the weights each sentence was visited with. ``_pass`` with eta0 = 0 changes nothing
    and measures the gain at the current weights. The options every SGD rule takes are in
    ``params``; a subclass adds its own.

    With ``l1`` > 0 each step also pays Tsuruoka et al.'s cumulative L1 penalty, lazily on the
    entries the step reads (the elastic net; ``_kernels/learn/sgd.py``), through the epoch kernels of
    ``_kernels/learn/elastic.py`` (crf, memm and hinge). The last iterate is then sparse; an average keeps
    every entry that was nonzero at some averaged step, so use ``average=False`` for a sparse model.
    The initial learning rate is calibrated without the L1 penalty.
    """

    params = {
        "l2": Param(None, "L2 strength per example (lambda); default 0.2 / N, i.e. CRFsuite's c2 = 0.1",
                    check=POSITIVE),
        "eta0": Param(None, "initial learning rate; default: calibrated on a sample (twice that when averaged)",
                      check=POSITIVE),
        "average": Param(True, "averaged SGD: keep the mean of the weights after average_start epochs", bool),
        "average_start": Param(1, "epochs before averaging starts (0: from the first step)", int),
        "calibration_sentences": Param(1000, "sentences of the sample that calibrates eta0", int),
        "l1": Param(0.0, "L1 strength per example: the cumulative L1 penalty (elastic net with l2)",
                    check=NON_NEGATIVE),
    }
    gain_name = "gain"
    orders = (1,)
    supports = frozenset({"checkpoint", "mixing", "l1"})

    def _check(self, problem):
        if problem.model.order not in self.orders:
            orders = " or ".join(map(str, self.orders))
            raise ConfigError(f"the {self.name} trainer needs order {orders}, got order {problem.model.order}")

    def begin(self, problem):
        self._check(problem)
        self.problem = problem
        self.layout = problem.model.layout()
        self.l2_ = float(self.l2) if self.l2 is not None else default_l2(problem.n_sentences)
        self.eta0_ = float(self.eta0) if self.eta0 is not None else self._calibrate()
        self.v = problem.model.weights.copy()
        self.u = np.zeros_like(self.v) if self.average else np.zeros(0)
        self.state = _sgd().new_state()
        self.q = np.zeros_like(self.v) if self.l1 > 0 else np.zeros(0)  # L1 penalty received, per entry
        self._gain, self._visits, self._epochs = 0.0, 0, 0

    def _calibrate(self):
        sample = calibration_sample(self.problem.n_sentences, self.calibration_sentences)
        w0 = self.problem.model.weights
        penalty = 0.5 * self.l2_ * len(sample)
        initial, _ = self._pass(w0.copy(), np.zeros(0), _sgd().new_state(), sample, self._rate(0.0))

        def trial(eta):
            v, state = w0.copy(), _sgd().new_state()
            gain, _ = self._pass(v, np.zeros(0), state, sample, self._rate(eta))
            w = state[_sgd().SCALE] * v
            return gain - penalty * squared_norm(w)

        eta0 = calibrate_eta0(trial, initial - penalty * squared_norm(w0))
        return eta0 * AVERAGED_RATE_FACTOR if self.average else eta0

    def _rate(self, eta0):
        return _sgd().Rate(float(eta0), self.l2_)

    def run(self, visit_order):
        rate = self._rate(self.eta0_)
        if self.l1 > 0:
            penalized = _sgd().Penalized(self.v, self.u, self.q, self.state)
            gain, counters = self._l1_pass(penalized, visit_order, rate, float(self.l1))
        else:
            gain, counters = self._pass(self.v, self.u, self.state, visit_order, rate)
        self._gain += gain
        self._visits += len(visit_order)
        return counters

    def _l1_pass(self, penalized, visit_order, rate, l1):
        """``_pass`` with the lazy cumulative L1 penalty ``l1`` around each step (``_kernels/learn/elastic.py``),
        on ``penalized`` (v, u, q and the state); the subclass's epoch kernel with L1."""
        raise NotImplementedError

    def _epoch_stats(self, gain, penalty):
        return {self.gain_name: gain, "objective": gain - penalty}

    def end_epoch(self):
        if self.l1 > 0:
            _sgd().l1_catch_up_all(self.v, self.u, self.q, self.state)
        w = self.state[_sgd().SCALE] * self.v
        penalty = 0.5 * self.l2_ * self._visits * squared_norm(w) + self.l1 * self._visits * float(np.abs(w).sum())
        stats = self._epoch_stats(self._gain, penalty)
        stats["eta"] = _sgd().learning_rate(self._rate(self.eta0_), self.state[_sgd().EXAMPLES])
        self._gain, self._visits = 0.0, 0
        self._epochs += 1
        if self.average and self._epochs == self.average_start:
            _sgd().restart_average(self.u, self.state)
        return stats

    def weights(self):
        if self.l1 > 0:
            _sgd().l1_catch_up_all(self.v, self.u, self.q, self.state)
        return _sgd().real_weights(self.v, self.u, self.state, self.average)

    def save_state(self):
        return {"v": self.v, "u": self.u, "q": self.q, "sgd_state": self.state, "l2": self.l2_,
                "eta0": self.eta0_, "epochs": self._epochs}

    def load_state(self, problem, state):
        # as ``begin``, with the rate and weights of the saved run instead of a calibration
        self._check(problem)
        self.problem = problem
        self.layout = problem.model.layout()
        self.l2_, self.eta0_ = float(state["l2"]), float(state["eta0"])
        self.v = np.array(state["v"], dtype=np.float64)
        self.u = np.array(state["u"], dtype=np.float64)
        self.state = np.array(state["sgd_state"], dtype=np.float64)
        self.q = np.array(state["q"], dtype=np.float64) if "q" in state else np.zeros(0)
        if self.l1 > 0 and len(self.q) != len(self.v):
            raise ConfigError("the checkpoint was written without the L1 penalty; this run has l1 > 0")
        self._gain, self._visits, self._epochs = 0.0, 0, int(state["epochs"])

    def raw_weights(self):
        """(v, s): the current real weights (not averaged) are s v. v is the rule's own buffer,
        valid until the next ``run`` or ``reset_weights`` (parameter mixing reads it in between)."""
        return self.v, float(self.state[_sgd().SCALE])

    def reset_weights(self, weights):
        """Continue from the real weights ``weights`` (parameter mixing); the average stays exact.

        The jump is one change of v made at the next step k: δv = weights / s - v, so that s v =
        weights. As for every other change of v (``_kernels/learn/sgd.py``), u += S_{k-1} δv with
        S_{k-1} = state[SCALE_SUM] the sum of s over the finished steps; (S_T v_T - u) / T is then
        still the mean of the real weights over the steps, each step after the jump starting from
        ``weights``.
        """
        from structperc._kernels.learn.mixing import jump

        jump(self.v, self.u if self.average else self.u[:0], float(self.state[_sgd().SCALE_SUM]), weights,
             float(self.state[_sgd().SCALE]))
