"""Maximum-entropy Markov model (McCallum et al. 2000; the "ME" rows of Collins 2002, Ratnaparkhi's
tagger at order 2): per-token log-linear classifiers on gold histories, trained by SGD, decoded by
the shared (first- or second-order) Viterbi over their local log-probabilities."""
from structperc.train.sgd import ScaledSGDRule


class MEMMRule(ScaledSGDRule):
    """Maximize sum_i sum_t log P(y_t | y_{t-1}, x_i) - (N λ / 2) ||w||² with gold y_{t-1}
    (see ``_kernels/learn/memm.py``); one SGD step per sentence. At order 2 the history is the gold
    (y_{t-2}, y_{t-1}).

    Parameters
    ----------
    l2 : λ per sentence. None: 0.2 / N (c2 = 0.1), as for the CRF.
    eta0 : initial rate of η_t = η0 / (1 + λ η0 t). None: calibrated on a sample.
    average : average the real weights over the steps after the first ``average_start`` epochs
        (lazily, exact).
    average_start : epochs before averaging starts (0: from the first step).
    calibration_sentences : size of the calibration sample.
    l1 : λ1 per example, the cumulative L1 penalty (elastic net with l2; see ``_kernels/learn/sgd.py``).

    ``run`` counts the tokens skipped because their gold label is impossible after the gold
    history (constraint or tag dictionary); ``end_epoch`` reports the local log-likelihood
    summed at visit time and the objective (that minus the penalty at the current weights).
    """

    name = "memm"
    params = dict(ScaledSGDRule.params)
    probabilistic = True
    normalization = "local"
    gain_name = "log_likelihood"
    orders = (1, 2)
    kernels = ("learn.memm.memm_epoch",)
    l1_kernels = ("learn.elastic.memm_l1_epoch",)

    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.memm import memm_epoch  # here, not at import: `tag` needs no training kernel
        log_likelihood, skipped = memm_epoch(v, u, state, self.layout, self.problem.data, visit_order, rate)
        return log_likelihood, {"skipped_tokens": skipped}

    def _l1_pass(self, penalized, visit_order, rate, l1):
        from structperc._kernels.learn.elastic import memm_l1_epoch

        log_likelihood, skipped = memm_l1_epoch(penalized, self.layout, self.problem.data, visit_order, rate, l1)
        return log_likelihood, {"skipped_tokens": skipped}
