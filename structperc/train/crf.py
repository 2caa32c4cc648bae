"""Linear-chain CRF trained by SGD with lazy L2 scaling (Bottou's crfsgd, CRFsuite's l2sgd), or by
L-BFGS / OWL-QN over the whole corpus (CRFsuite's lbfgs; ``lbfgs.py``)."""
from structperc.errors import ConfigError
from structperc.train.base import Param
from structperc.train.lbfgs import LBFGSTraining, check_lbfgs_options
from structperc.train.sgd import ScaledSGDRule


class CRFRule(ScaledSGDRule):
    """Maximize sum_i log P(y_i | x_i) - (N λ / 2) ||w||² - N λ1 ||w||_1 by SGD (see ``_kernels/crf.py``)
    or by L-BFGS (``solver="lbfgs"``).

    The units of l2 and l1 are per example. CRFsuite's objective -sum_i log P(y_i | x_i) + c1 ||w||_1
    + c2 ||w||² is the same with c2 = N l2 / 2 and c1 = N l1, i.e. l2 = 2 c2 / N and l1 = c1 / N.

    Parameters
    ----------
    solver : "sgd" (on-line, the options below up to ``calibration_sentences``) or "lbfgs": one
        epoch is one iteration of L-BFGS (scipy's L-BFGS-B) over every sentence, or of OWL-QN when
        l1 > 0 (``lbfgs.py``); the epochs are the iteration budget. The SGD options set with
        "lbfgs", or the lbfgs options set with "sgd", are a ConfigError.
    l2 : λ per example; each example decays w by (1 - η_t λ). None: 0.2 / N (c2 = 0.1; ``sgd.default_l2``).
    eta0 : initial learning rate of η_t = η0 / (1 + λ η0 t), t = examples seen. None: calibrated
        on ``calibration_sentences`` evenly spaced sentences before training (twice that when averaged).
    batch_size : sentences per SGD step (their marginals are taken at the same weights).
    average : averaged SGD: use the mean of the real weights over the steps after the first
        ``average_start`` epochs, kept lazily (exact, no O(#weights) work per step).
    average_start : epochs before averaging starts (the first iterates are far from the optimum
        and would drag the average); 0 averages from the first step.
    calibration_sentences : size of the calibration sample.
    l1 : λ1 per example, the cumulative L1 penalty (elastic net with l2; see ``_kernels/sgd.py``);
        with "lbfgs", the L1 penalty of OWL-QN, which gives exact zeros.
    epsilon, period, delta : "lbfgs" stops when ‖g‖ / max(1, ‖w‖) < epsilon, or when the objective
        improved by less than delta (relatively) over the last period iterations. None: CRFsuite's
        1e-5, 10, 1e-5.
    boundary : "lbfgs" only. None or True: learn the start and end weights; False: hold them at 0
        (CRFsuite's model has neither).
    unseen_transitions : "lbfgs" only. None or True: learn every label transition; False: hold the
        transitions never seen in the training labels at 0 (CRFsuite without all_possible_transitions).

    ``end_epoch`` reports the epoch's log-likelihood summed at the weights each sentence was visited
    with (the on-line estimate CRFsuite prints), the objective (that minus the penalty at the
    current, non-averaged weights) and the learning rate reached; ``run`` counts the sentences
    skipped because their gold labeling is forbidden (by the constraint or the tag dictionary).
    With "lbfgs", ``end_epoch`` reports the objective (``loss``, to minimize), the active (nonzero)
    weights, their norm, and why the solver stopped, once it has.
    """

    name = "crf"
    params = {
        **ScaledSGDRule.params,
        "batch_size": Param(1, "sentences per SGD step (their marginals at the same weights)", int),
        "solver": Param("sgd", "crf's optimizer: sgd (on-line) or lbfgs (batch L-BFGS; OWL-QN with l1)", str,
                        ("sgd", "lbfgs")),
        "epsilon": Param(None, "lbfgs: stop when |g| / max(1, |w|) < epsilon (CRFsuite's default 1e-5)"),
        "period": Param(None, "lbfgs: iterations over which delta is tested (CRFsuite's default 10)", int),
        "delta": Param(None, "lbfgs: stop when the objective improved by less than delta over period"),
        "boundary": Param(None, "lbfgs: learn the start and end weights (default yes)", bool),
        "unseen_transitions": Param(None, "lbfgs: learn the transitions never seen in training (default yes)", bool),
    }
    probabilistic = True
    normalization = "global"
    gain_name = "log_likelihood"
    kernels = ("learn.crf.crf_epoch", "learn.crf_batch.crf_objective")  # sgd's epoch, lbfgs' objective
    l1_kernels = ("learn.elastic.crf_l1_epoch",)

    @property
    def batch(self):
        return self.solver == "lbfgs"

    def _check(self, problem):
        super()._check(problem)
        check_lbfgs_options(self)
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")

    # solver "lbfgs": the run is an ``LBFGSTraining``
    def begin(self, problem):
        if self.solver != "lbfgs":
            return super().begin(problem)
        self._check(problem)
        self.lbfgs_ = LBFGSTraining(self, problem)

    def run(self, visit_order):
        return self.lbfgs_.run() if self.solver == "lbfgs" else super().run(visit_order)

    def end_epoch(self):
        return self.lbfgs_.end_epoch() if self.solver == "lbfgs" else super().end_epoch()

    def converged(self):
        return self.solver == "lbfgs" and self.lbfgs_.stopped is not None

    def weights(self):
        return self.lbfgs_.weights() if self.solver == "lbfgs" else super().weights()

    def final_weights(self):
        return self.lbfgs_.final_weights() if self.solver == "lbfgs" else super().final_weights()

    def release(self):
        if self.solver == "lbfgs" and hasattr(self, "lbfgs_"):
            self.lbfgs_.close()
        super().release()

    def save_state(self):
        if self.solver == "lbfgs":
            raise ConfigError("checkpoints and resumable runs apply to solver 'sgd', not 'lbfgs'")
        return super().save_state()

    def load_state(self, problem, state):
        if self.solver == "lbfgs":
            raise ConfigError("checkpoints and resumable runs apply to solver 'sgd', not 'lbfgs'")
        return super().load_state(problem, state)

    def raw_weights(self):
        if self.solver == "lbfgs":
            raise ConfigError("parameter mixing (workers, scheduler) applies to solver 'sgd', not 'lbfgs'")
        return super().raw_weights()

    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.crf import crf_epoch  # here, not at import: `tag` needs no training kernel
        log_likelihood, skipped = crf_epoch(v, u, state, self.layout, self.problem.data, visit_order, rate,
                                            int(self.batch_size))
        return log_likelihood, {"skipped": skipped}
