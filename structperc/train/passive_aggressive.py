"""The passive-aggressive rules (Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006), structured."""
import numpy as np

from structperc.train.base import POSITIVE, Check, Param
from structperc.train.perceptron import PerceptronRule

VARIANTS = (0, 1, 2)


class PassiveAggressiveRule(PerceptronRule):
    """On a mistake, the smallest change of w that scores the gold labeling above the guess by a
    margin of √(wrong tokens) (or 1), its step capped (PA-I) or damped (PA-II) by the
    aggressiveness C (``_kernels/learn/passive_aggressive.py``). The options and their defaults
    are CRFsuite's (``crfsuite learn -a pa -H``).

    Parameters
    ----------
    pa_type : 0 (PA, no slack), 1 (PA-I) or 2 (PA-II)
    aggressiveness : C > 0 (CRFsuite's ``c``; PA-I and PA-II)
    error_sensitive : the margin is √(wrong tokens), not 1
    average : average the weights over every example visit, kept lazily as the perceptron's

    The raw weights, the lazy average and their saved state are the perceptron's.
    """

    name = "pa"
    params = {
        "pa_type": Param(1, "pa's variant: 0 (no slack), 1 (PA-I, step capped at C), 2 (PA-II)", int,
                         check=Check(lambda v: v in VARIANTS, f"one of {', '.join(map(str, VARIANTS))}")),
        "aggressiveness": Param(1.0, "pa's aggressiveness C > 0 (PA-I, PA-II)", check=POSITIVE),
        "error_sensitive": Param(True, "pa's margin grows as the square root of the wrong tokens", bool),
        "average": Param(True, "average the weights over every example visit", bool),
    }
    kernels = ("learn.passive_aggressive.pa_epoch",)
    mistakes = "sentence_errors"
    supports = frozenset({"checkpoint", "mixing"})
    epochs = 100  # CRFsuite's max_iterations for pa
    stopping = None

    def begin(self, problem):
        super().begin(problem)
        self.delta = np.zeros(self.w.shape)

    def run(self, visit_order):
        # here, not at import: `tag` needs no training kernel
        from structperc._kernels.learn.passive_aggressive import PASettings, PAVectors, pa_epoch

        settings = PASettings(int(self.pa_type), float(self.aggressiveness), bool(self.error_sensitive))
        self.counter, loss, sentence_errors, token_errors = pa_epoch(
            PAVectors(self.w, self.u, self.delta), self.counter, settings, self.layout, self.problem.data,
            visit_order)
        return {"loss": loss, "sentence_errors": sentence_errors, "token_errors": token_errors}
