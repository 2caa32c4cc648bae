"""Linear-chain CRF trained by SGD with lazy L2 scaling (Bottou's crfsgd, CRFsuite's l2sgd); with
``solver="lbfgs"``, by L-BFGS / OWL-QN over the whole corpus (CRFsuite's lbfgs), which runs as
``CRFLBFGSRule``."""
from structperc._kernels.records import with_partial_labels
from structperc.errors import ConfigError
from structperc.train.base import POSITIVE_INTEGER, Param, Plateau
from structperc.train.lbfgs import LBFGS_PARAMS, LBFGSRule
from structperc.train.sgd import ScaledSGDRule


class CRFRule(ScaledSGDRule):
    """Maximize sum_i log P(y_i | x_i) - (N λ / 2) ||w||² - N λ1 ||w||_1 by SGD (see ``_kernels/learn/crf.py``)
    or by L-BFGS (``solver="lbfgs"``: ``CRFLBFGSRule``).

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
    l1 : λ1 per example, the cumulative L1 penalty (elastic net with l2; see ``_kernels/learn/sgd.py``);
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
    """

    name = "crf"
    params = {
        **ScaledSGDRule.params,
        "batch_size": Param(1, "sentences per SGD step (their marginals at the same weights)", int,
                            check=POSITIVE_INTEGER),
        "solver": Param("sgd", "crf's optimizer: sgd (on-line) or lbfgs (batch L-BFGS; OWL-QN with l1)", str,
                        ("sgd", "lbfgs")),
        **LBFGS_PARAMS,
    }
    probabilistic = True
    normalization = "global"
    gain_name = "log_likelihood"
    kernels = ("learn.crf.crf_epoch",)
    l1_kernels = ("learn.elastic.crf_l1_epoch",)
    warmup_options = {"eta0": 0.1}
    # without a number of epochs: until the objective gains less than 1 % over its best for 3 epochs, at
    # most 14 (within the fit-time target against sklearn-crfsuite's on the tutorial's dicts: benchmarks/dicts.md);
    # chosen on development data over several tasks, sizes and tag sets: experiments/results/stopping.md (make stopping)
    epochs = 14
    stopping = Plateau("objective", higher=True, threshold=0.01, patience=3, least=5)

    @classmethod
    def variant(cls, options):
        solver = options.get("solver", "sgd")
        if solver == "lbfgs":
            return CRFLBFGSRule
        if solver != "sgd":
            raise ConfigError(f"unknown solver {solver!r} of the crf trainer: choose one of sgd, lbfgs")
        return cls

    def check_options(self):
        for name in LBFGS_PARAMS:
            if getattr(self, name) is not None:
                raise ConfigError(f"option {name!r} of the crf trainer applies to solver 'lbfgs', not 'sgd'")

    def _pass(self, v, u, state, visit_order, rate):
        from structperc._kernels.learn.crf import crf_epoch  # here, not at import: `tag` needs no training kernel
        data = with_partial_labels(self.problem.data)
        log_likelihood, skipped = crf_epoch(v, u, state, self.layout, data, visit_order, rate, int(self.batch_size))
        return log_likelihood, {"skipped": skipped}

    def _l1_pass(self, penalized, visit_order, rate, l1):
        from structperc._kernels.learn.elastic import crf_l1_epoch

        data = with_partial_labels(self.problem.data)
        log_likelihood, skipped = crf_l1_epoch(penalized, self.layout, data, visit_order, rate, int(self.batch_size),
                                               l1)
        return log_likelihood, {"skipped": skipped}


class CRFLBFGSRule(LBFGSRule):
    """The crf rule with ``solver="lbfgs"`` (``lbfgs.LBFGSRule``). It takes the crf rule's options;
    those of the SGD solver must keep their defaults."""

    name = "crf"
    params = CRFRule.params
    epochs = 10  # the iteration budget when none is given (CRFsuite stops by its own tests)
    # the options of the SGD solver, which keep their defaults here: the crf rule's, less L-BFGS's own and the solver
    SGD_ONLY = {name: param.default for name, param in CRFRule.params.items()
                if name not in LBFGSRule.params and name != "solver"}

    def check_options(self):
        for name, default in self.SGD_ONLY.items():
            if getattr(self, name) != default:
                raise ConfigError(f"option {name!r} of the crf trainer applies to solver 'sgd', not 'lbfgs'")
