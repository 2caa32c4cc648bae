"""AROW (Crammer, Kulesza & Dredze 2009): adaptive regularization of weight vectors, structured."""
import numpy as np

from structperc.train.base import POSITIVE, LearningRule, Param


class ArowRule(LearningRule):
    """A Gaussian over the weights, N(μ, Σ) with diagonal Σ; decoding reads μ. On a mistake, μ moves
    toward Φ(x, y) - Φ(x, ŷ) by the loss μ·Φ(x, ŷ) - μ·Φ(x, y) + (wrong tokens), each entry scaled
    by its variance, and the variances of the entries involved shrink (``_kernels/learn/arow.py``).
    The options and their defaults are CRFsuite's (``crfsuite learn -a arow -H``).

    Parameters
    ----------
    variance : the initial variance of every weight, > 0
    gamma : γ > 0, the trade-off between the loss and the change of the distribution (smaller:
        larger steps)
    """

    name = "arow"
    params = {
        "variance": Param(1.0, "arow's initial variance of every weight, > 0", check=POSITIVE),
        "gamma": Param(1.0, "arow's trade-off gamma > 0 between the loss and the change of the weights",
                       check=POSITIVE),
    }
    kernels = ("learn.arow.arow_epoch",)
    mistakes = "sentence_errors"
    supports = frozenset({"checkpoint", "mixing"})
    epochs = 100  # CRFsuite's max_iterations for arow

    def begin(self, problem):
        self.problem = problem
        self.layout = problem.model.layout()
        self.w = problem.model.weights  # the mean μ, trained in place
        self.variances = np.full(self.w.shape, float(self.variance))
        self.delta = np.zeros(self.w.shape)
        continued = problem.continued or {}
        if "w" in continued:  # continue a saved run: its mean and variances
            self.w[:] = continued["w"]
            self.variances[:] = continued["variance"]

    def run(self, visit_order):
        # here, not at import: `tag` needs no training kernel
        from structperc._kernels.learn.arow import ArowVectors, arow_epoch

        loss, sentence_errors, token_errors = arow_epoch(ArowVectors(self.w, self.variances, self.delta),
                                                         float(self.gamma), self.layout, self.problem.data,
                                                         visit_order)
        return {"loss": loss, "sentence_errors": sentence_errors, "token_errors": token_errors}

    def weights(self):
        return self.w.copy()

    def final_weights(self):
        return self.w

    def raw_weights(self):
        """(μ, 1.0); μ is the rule's own buffer, valid until the next ``run`` or ``reset_weights``."""
        return self.w, 1.0

    def reset_weights(self, weights):
        """Continue from the mean ``weights`` (parameter mixing); the variances stay this shard's."""
        self.w[:] = weights

    def save_state(self):
        return {"w": self.w, "variance": self.variances}

    def training_state(self):
        """The mean and the variances: ``begin`` continues from them (``problem.continued``)."""
        return {"w": self.w.copy(), "variance": self.variances.copy()}

    def load_state(self, problem, state):
        self.begin(problem)
        self.w[:] = state["w"]
        self.variances[:] = state["variance"]
