"""The passive-aggressive rules (Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006), structured."""
import numpy as np

from structperc.errors import ConfigError
from structperc.train.base import LearningRule, Param

VARIANTS = (0, 1, 2)


class PassiveAggressiveRule(LearningRule):
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
    """

    name = "pa"
    params = {
        "pa_type": Param(1, "pa's variant: 0 (no slack), 1 (PA-I, step capped at C), 2 (PA-II)", int),
        "aggressiveness": Param(1.0, "pa's aggressiveness C > 0 (PA-I, PA-II)"),
        "error_sensitive": Param(True, "pa's margin grows as the square root of the wrong tokens", bool),
        "average": Param(True, "average the weights over every example visit", bool),
    }
    kernels = ("learn.passive_aggressive.pa_epoch",)
    mistakes = "sentence_errors"
    supports = frozenset({"checkpoint", "mixing"})
    epochs = 100  # CRFsuite's max_iterations for pa

    def begin(self, problem):
        if self.pa_type not in VARIANTS:
            raise ConfigError(f"pa_type must be one of {', '.join(map(str, VARIANTS))}, got {self.pa_type!r}")
        if not self.aggressiveness > 0:
            raise ConfigError(f"aggressiveness must be > 0, got {self.aggressiveness!r}")
        self.problem = problem
        self.layout = problem.model.layout()
        self.w = problem.model.weights  # trained in place
        self.u = np.zeros(self.w.shape) if self.average else np.zeros(0)
        self.delta = np.zeros(self.w.shape)
        self.counter = 0.0
        resume = problem.resume or {}
        if "w" in resume:  # continue a saved run: its raw weights and averaging state
            self.w[:] = resume["w"]
            self.counter = float(resume["counter"])
            if self.average and len(resume["u"]) == len(self.u):
                self.u[:] = resume["u"]

    def run(self, visit_order):
        # here, not at import: `tag` needs no training kernel
        from structperc._kernels.learn.passive_aggressive import PASettings, PAVectors, pa_epoch

        settings = PASettings(int(self.pa_type), float(self.aggressiveness), bool(self.error_sensitive))
        self.counter, loss, sentence_errors, token_errors = pa_epoch(
            PAVectors(self.w, self.u, self.delta), self.counter, settings, self.layout, self.problem.data,
            visit_order)
        return {"loss": loss, "sentence_errors": sentence_errors, "token_errors": token_errors}

    def weights(self):
        if self.average and self.counter > 0:
            return self.w - self.u / self.counter
        return self.w.copy()

    def final_weights(self):
        if self.average and self.counter > 0:
            self.u /= -self.counter
            self.u += self.w
            return self.u
        return self.w

    def raw_weights(self):
        """(w, 1.0); w is the rule's own buffer, valid until the next ``run`` or ``reset_weights``."""
        return self.w, 1.0

    def reset_weights(self, weights):
        """Continue from ``weights`` (parameter mixing), the jump counted in the lazy average as the
        perceptron counts it (``PerceptronRule.reset_weights``)."""
        from structperc._kernels.learn.mixing import jump

        jump(self.w, self.u if self.average else self.u[:0], float(self.counter), weights, 1.0)

    def save_state(self):
        return {"w": self.w, "u": self.u, "counter": self.counter}

    def training_state(self):
        """The raw weights, the averaging sums and the example counter: ``begin`` continues from them."""
        return {"w": self.w.copy(), "u": self.u.copy(), "counter": float(self.counter)}

    def load_state(self, problem, state):
        self.begin(problem)
        self.w[:] = state["w"]
        self.u[:] = state["u"]
        self.counter = float(state["counter"])
