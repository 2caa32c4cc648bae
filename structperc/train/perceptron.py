"""Collins' (2002) structured perceptron, averaged or not."""
import numpy as np

from structperc.train.base import LazyAverage, LearningRule, Param, Plateau


class PerceptronRule(LazyAverage, LearningRule):
    """On a mistake, w += Φ(x, y) - Φ(x, ŷ). With ``average``, the weights used after training are
    the average of w over every example visit, kept lazily (see ``_kernels/learn/perceptron.py``)."""

    name = "perceptron"
    params = {"average": Param(True, "average the weights over every example visit (Collins 2002)", bool)}
    kernels = ("learn.perceptron.perceptron_epoch",)
    mistakes = "sentence_errors"
    supports = frozenset({"checkpoint", "mixing"})
    # without a number of epochs: until the training mistakes stop falling, at most 25 epochs; chosen on
    # development data over several tasks, sizes and tag sets: experiments/results/stopping.md (make stopping)
    epochs = 25
    stopping = Plateau("sentence_errors", higher=False, patience=3, least=5)

    def begin(self, problem):
        self.problem = problem
        self.layout = problem.model.layout()
        self.w = problem.model.weights  # trained in place
        # np.zeros, not zeros_like: the pages are mapped as updates touch them
        self.u = np.zeros(self.w.shape) if self.average else np.zeros(0)
        self.counter = 0.0
        continued = problem.continued or {}
        if "w" in continued:  # continue a saved run: its raw weights and averaging state
            self.w[:] = continued["w"]
            self.counter = float(continued["counter"])
            if self.average and len(continued["u"]) == len(self.u):
                self.u[:] = continued["u"]

    def run(self, visit_order):
        # here, not at import: `tag` needs no training kernel
        from structperc._kernels.learn.perceptron import perceptron_epoch
        self.counter, sentence_errors, token_errors = perceptron_epoch(
            self.w, self.u, self.counter, self.layout, self.problem.data, visit_order)
        return {"sentence_errors": sentence_errors, "token_errors": token_errors}

    def raw_weights(self):
        """(w, 1.0): the current (non-averaged) weights are 1.0 * w. w is the rule's own buffer,
        valid until the next ``run`` or ``reset_weights`` (parameter mixing reads it in between)."""
        return self.w, 1.0

    def reset_weights(self, weights):
        """Continue from ``weights`` (parameter mixing) without breaking the lazy average.

        The jump w -> weights counts as one dense update δ = weights - w made at the next example
        (s = counter + 1), so, as in ``_kernels/learn/perceptron.py``, u += counter * δ; then
        w - u / c stays the mean of every w held after an example, the jump included.
        """
        from structperc._kernels.learn.mixing import jump

        jump(self.w, self.u if self.average else self.u[:0], float(self.counter), weights, 1.0)

    def save_state(self):
        return {"w": self.w, "u": self.u, "counter": self.counter}

    def training_state(self):
        """The raw weights w, the averaging sums u and the example counter (``_kernels/learn/perceptron.py``):
        ``begin`` continues from them (``problem.continued``)."""
        return {"w": self.w.copy(), "u": self.u.copy(), "counter": float(self.counter)}

    def load_state(self, problem, state):
        self.begin(problem)
        self.w[:] = state["w"]
        self.u[:] = state["u"]
        self.counter = float(state["counter"])
