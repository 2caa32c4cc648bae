"""Linear-chain CRF trained by SGD with lazy L2 scaling (Bottou's crfsgd, CRFsuite's l2sgd).

The shared pieces of the SGD rules (crf, memm, hinge) live here too: ``ScaledSGDRule`` (lazily
scaled and averaged weights, the learning-rate schedule), the default L2 strength and the
calibration of the initial learning rate on a sample.
"""
import numpy as np

from .._kernels.crf import EXAMPLES, SCALE, crf_epoch, restart_average, learning_rate, new_state, real_weights
from ..errors import ConfigError
from .base import LearningRule


def default_l2(n_sentences):
    """CRFsuite's convention: c2 = 1 over the training set, i.e. λ = 2 c2 / N per example, so the
    penalty of the whole objective is (N λ / 2) ||w||² = ||w||²."""
    return 2.0 / max(n_sentences, 1)


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
    """SGD with L2 decay on w = s v (see ``_kernels/crf.py``): η_t = η0 / (1 + λ η0 t), t the
    examples seen so far, each example decaying w by (1 - η_t λ); optionally averaged.

    With ``average``, the average restarts (``restart_average``) when epoch ``average_start`` ends.
    A subclass sets ``name``, ``normalization`` and ``gain_name`` and implements ``_pass(v, u,
    state, order, eta0) -> (gain, counters)``: one numba call over the sentences ``order``, where
    gain is the summed per-sentence objective term (higher is better: log-likelihood, minus hinge
    loss) at the weights each sentence was visited with. ``_pass`` with eta0 = 0 changes nothing
    and measures the gain at the current weights.
    """

    gain_name = "gain"
    orders = (1,)  # the label orders the rule trains (the memm rule: 1 and 2)

    def _check(self, problem):
        if problem.model.order not in self.orders:
            orders = " or ".join(map(str, self.orders))
            raise ConfigError(f"the {self.name} trainer needs order {orders}, got order {problem.model.order}")
        if self.l2 is not None and not self.l2 > 0:
            raise ConfigError(f"l2 must be > 0, got {self.l2!r}")
        if self.eta0 is not None and not self.eta0 > 0:
            raise ConfigError(f"eta0 must be > 0, got {self.eta0!r}")

    def begin(self, problem):
        self._check(problem)
        self.problem = problem
        self.l2_ = float(self.l2) if self.l2 is not None else default_l2(problem.encoded.n_sentences)
        self.eta0_ = float(self.eta0) if self.eta0 is not None else self._calibrate()
        self.v = problem.model.weights.copy()
        self.u = np.zeros_like(self.v) if self.average else np.zeros(0)
        self.state = new_state()
        self._gain, self._visits, self._epochs = 0.0, 0, 0

    def _calibrate(self):
        sample = calibration_sample(self.problem.encoded.n_sentences, self.calibration_sentences)
        w0 = self.problem.model.weights
        penalty = 0.5 * self.l2_ * len(sample)
        initial, _ = self._pass(w0.copy(), np.zeros(0), new_state(), sample, 0.0)

        def trial(eta):
            v, state = w0.copy(), new_state()
            gain, _ = self._pass(v, np.zeros(0), state, sample, eta)
            w = state[SCALE] * v
            return gain - penalty * float(w @ w)

        return calibrate_eta0(trial, initial - penalty * float(w0 @ w0))

    def run(self, order):
        gain, counters = self._pass(self.v, self.u, self.state, order, self.eta0_)
        self._gain += gain
        self._visits += len(order)
        return counters

    def _epoch_stats(self, gain, penalty):
        return {self.gain_name: gain, "objective": gain - penalty}

    def end_epoch(self):
        w = self.state[SCALE] * self.v
        stats = self._epoch_stats(self._gain, 0.5 * self.l2_ * self._visits * float(w @ w))
        stats["eta"] = learning_rate(self.eta0_, self.l2_, self.state[EXAMPLES])
        self._gain, self._visits = 0.0, 0
        self._epochs += 1
        if self.average and self._epochs == self.average_start:
            restart_average(self.u, self.state)
        return stats

    def weights(self):
        return real_weights(self.v, self.u, self.state, self.average)


class CRFRule(ScaledSGDRule):
    """Maximize sum_i log P(y_i | x_i) - (N λ / 2) ||w||² by SGD (see ``_kernels/crf.py``).

    Parameters
    ----------
    l2 : λ per example; each example decays w by (1 - η_t λ). None: 2 / N (CRFsuite's c2 = 1).
    eta0 : initial learning rate of η_t = η0 / (1 + λ η0 t), t = examples seen. None: calibrated
        on ``calibration_sentences`` evenly spaced sentences before training.
    batch_size : sentences per SGD step (their marginals are taken at the same weights).
    average : averaged SGD: use the mean of the real weights over the steps after the first
        ``average_start`` epochs, kept lazily (exact, no O(#weights) work per step).
    average_start : epochs before averaging starts (the first iterates are far from the optimum
        and would drag the average); 0 averages from the first step.
    calibration_sentences : size of the calibration sample.

    ``end_epoch`` reports the epoch's log-likelihood summed at the weights each sentence was visited
    with (the on-line estimate CRFsuite prints), the objective (that minus the penalty at the
    current, non-averaged weights) and the learning rate reached; ``run`` counts the sentences
    skipped because their gold labeling is forbidden (by the constraint or the tag dictionary).
    """

    name = "crf"
    params = {"l2": None, "eta0": None, "batch_size": 1, "average": True, "average_start": 1,
              "calibration_sentences": 1000}
    probabilistic = True
    normalization = "global"
    gain_name = "log_likelihood"

    def __init__(self, l2=None, eta0=None, batch_size=1, average=True, average_start=1, calibration_sentences=1000):
        self.l2 = l2
        self.eta0 = eta0
        self.batch_size = batch_size
        self.average = average
        self.average_start = average_start
        self.calibration_sentences = calibration_sentences

    def _check(self, problem):
        super()._check(problem)
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")

    def _pass(self, v, u, state, order, eta0):
        p, m, e = self.problem, self.problem.model, self.problem.encoded
        log_likelihood, skipped = crf_epoch(
            v, u, state, m.dims, e.sentence_offsets, e.feature_offsets, e.feature_ids, e.pair_offsets,
            e.pair_ids, e.labels, order, m.mask_penalty, p.cand_offsets, p.cand_labels, float(eta0),
            self.l2_, int(self.batch_size),
        )
        return log_likelihood, {"skipped": skipped}
