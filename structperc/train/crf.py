"""Linear-chain CRF trained by SGD with lazy L2 scaling (Bottou's crfsgd, CRFsuite's l2sgd)."""
from structperc.errors import ConfigError
from structperc.train.base import Param
from structperc.train.sgd import ScaledSGDRule


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
    l1 : λ1 per example, the cumulative L1 penalty (elastic net with l2; see ``_kernels/sgd.py``).

    ``end_epoch`` reports the epoch's log-likelihood summed at the weights each sentence was visited
    with (the on-line estimate CRFsuite prints), the objective (that minus the penalty at the
    current, non-averaged weights) and the learning rate reached; ``run`` counts the sentences
    skipped because their gold labeling is forbidden (by the constraint or the tag dictionary).
    """

    name = "crf"
    params = {**ScaledSGDRule.params,
              "batch_size": Param(1, "sentences per SGD step (their marginals at the same weights)", int)}
    probabilistic = True
    normalization = "global"
    gain_name = "log_likelihood"
    kernels = ("learn.crf.crf_epoch",)
    l1_kernels = ("learn.elastic.crf_l1_epoch",)

    def _check(self, problem):
        super()._check(problem)
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")

    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.crf import crf_epoch  # here, not at import: `tag` needs no training kernel
        log_likelihood, skipped = crf_epoch(v, u, state, self.layout, self.problem.data, visit_order, rate,
                                            int(self.batch_size))
        return log_likelihood, {"skipped": skipped}
