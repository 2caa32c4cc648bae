"""Linear-chain CRF trained by SGD with lazy L2 scaling (Bottou's crfsgd, CRFsuite's l2sgd)."""
from structperc.errors import ConfigError
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
    params = {**ScaledSGDRule.params, "batch_size": 1}
    probabilistic = True
    normalization = "global"
    gain_name = "log_likelihood"

    def __init__(self, l2=None, eta0=None, batch_size=1, average=True, average_start=1, calibration_sentences=1000,
                 l1=0.0):
        self.l2 = l2
        self.eta0 = eta0
        self.batch_size = batch_size
        self.average = average
        self.average_start = average_start
        self.calibration_sentences = calibration_sentences
        self.l1 = l1

    def _check(self, problem):
        super()._check(problem)
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size!r}")

    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.crf import crf_epoch  # here, not at import: `tag` needs no training kernel
        log_likelihood, skipped = crf_epoch(v, u, state, self.layout, self.problem.data, visit_order, rate,
                                            int(self.batch_size))
        return log_likelihood, {"skipped": skipped}
