"""Structured hinge loss with Hamming cost, by Pegasos-style subgradient steps on the same decoder."""
from structperc.train.base import POSITIVE, Param
from structperc.train.sgd import ScaledSGDRule


class HingeRule(ScaledSGDRule):
    """Minimize sum_i max_y' [w · Φ(x_i, y') + cost Δ(y_i, y')] - w · Φ(x_i, y_i) + (N λ / 2) ||w||²
    with Δ the Hamming loss (see ``_kernels/learn/hinge.py``).

    Parameters
    ----------
    l2 : λ per example. None: 0.2 / N (c2 = 0.1), as for the CRF.
    eta0 : the rate is η_t = η0 / (1 + λ η0 t) = 1 / (λ (t + t0)) with t0 = 1 / (λ η0), Pegasos'
        1 / (λ t) shifted so that the first steps stay small. None: calibrated on a sample.
    cost : Hamming cost of one wrong token.
    average : average the real weights over the steps after the first ``average_start`` epochs
        (lazily, exact).
    average_start : epochs before averaging starts (0: from the first step).
    calibration_sentences : size of the calibration sample.
    l1 : λ1 per example, the cumulative L1 penalty (elastic net with l2; see ``_kernels/learn/sgd.py``).

    ``run`` counts the sentences with a positive loss (the only ones that move w beyond the L2
    decay), their Hamming errors, and the sentences skipped because their gold labeling is
    forbidden; ``end_epoch`` reports the summed hinge loss at visit time and the objective
    (that plus the penalty at the current weights; lower is better).
    """

    name = "hinge"
    params = {**ScaledSGDRule.params, "cost": Param(1.0, "hinge's Hamming cost of one wrong token", check=POSITIVE)}
    normalization = "global"
    kernels = ("learn.hinge.hinge_epoch",)
    l1_kernels = ("learn.elastic.hinge_l1_epoch",)
    mistakes = "violations"


    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.hinge import hinge_epoch  # here, not at import: `tag` needs no training kernel
        loss, violations, token_errors, skipped = hinge_epoch(
            v, u, state, self.layout, self.problem.data, visit_order, rate, float(self.cost))
        counters = {"violations": violations, "token_errors": token_errors, "skipped": skipped}
        return -loss, counters

    def _epoch_stats(self, gain, penalty):
        return {"hinge_loss": -gain, "objective": -gain + penalty}

    def _l1_pass(self, penalized, visit_order, rate, l1):
        from structperc._kernels.learn.elastic import hinge_l1_epoch

        loss, violations, token_errors, skipped = hinge_l1_epoch(penalized, self.layout, self.problem.data,
                                                                 visit_order, rate, float(self.cost), l1)
        return -loss, {"violations": violations, "token_errors": token_errors, "skipped": skipped}
