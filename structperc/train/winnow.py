"""Balanced Winnow (Littlestone 1988; the SNoW architecture) as a structured learning rule."""
import math

import numpy as np

from structperc.train.base import ABOVE_ONE, BETWEEN_0_AND_1, POSITIVE, LazyAverage, LearningRule, Param


class WinnowRule(LazyAverage, LearningRule):
    """Two non-negative weight vectors w⁺, w⁻ (both starting at ``initial_weight``); labelings
    score (w⁺ - w⁻) · Φ(x, y). On a mistake, the entries of Φ(x, y) - Φ(x, ŷ) with positive net
    count are promoted (w⁺ × α, w⁻ × β per count) and those with negative net count demoted
    (w⁺ × β, w⁻ × α), lazily on log-weights (see ``_kernels/learn/winnow.py``).

    Parameters
    ----------
    promotion : α > 1
    demotion : β, 0 < β < 1
    initial_weight : θ > 0, the starting value of every entry of w⁺ and w⁻
    average : use the average of w⁺ - w⁻ over every example visit (kept lazily)
    """

    name = "winnow"
    params = {
        "promotion": Param(1.1, "winnow's promotion factor alpha > 1", check=ABOVE_ONE),
        "demotion": Param(0.9, "winnow's demotion factor beta, 0 < beta < 1", check=BETWEEN_0_AND_1),
        "initial_weight": Param(1.0, "winnow's starting value of every weight, > 0", check=POSITIVE),
        "average": Param(True, "average the weights over every example visit", bool),
    }
    kernels = ("learn.winnow.winnow_epoch",)
    # no "mixing": the weights live as two lazily scaled log-weight vectors, and a mixed w has no
    # unique (w⁺, w⁻) to continue from
    supports = frozenset({"checkpoint"})

    def begin(self, problem):
        self.problem = problem
        self.layout = problem.model.layout()
        self.w = problem.model.weights  # trained in place: w0 + θ (e^p - e^m)
        self.plus = np.zeros_like(self.w)
        self.minus = np.zeros_like(self.w)
        self.net = np.zeros(len(self.w))
        self.u = np.zeros_like(self.w) if self.average else np.zeros(0)
        self.counter = 0.0

    def run(self, visit_order):
        # here, not at import: `tag` needs no training kernel
        from structperc._kernels.learn.winnow import WinnowRate, WinnowVectors, winnow_epoch

        vectors = WinnowVectors(self.w, self.plus, self.minus, self.u, self.net)
        rate = WinnowRate(math.log(self.promotion), math.log(self.demotion), float(self.initial_weight))
        self.counter, sentence_errors, token_errors = winnow_epoch(vectors, self.counter, rate, self.layout,
                                                                   self.problem.data, visit_order)
        return {"sentence_errors": sentence_errors, "token_errors": token_errors}

    def save_state(self):
        return {"w": self.w, "plus": self.plus, "minus": self.minus, "net": self.net, "u": self.u,
                "counter": self.counter}

    def load_state(self, problem, state):
        self.begin(problem)
        for name in ("w", "plus", "minus", "net", "u"):
            getattr(self, name)[:] = state[name]
        self.counter = float(state["counter"])
