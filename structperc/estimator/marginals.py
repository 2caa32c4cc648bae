"""Probabilities of a probabilistic model: per-token label marginals and the probability of the
Viterbi labeling.

The trainers that define P(y | x) are those whose rule has ``probabilistic = True`` in
``structperc.train.TRAINERS``. A CRF (trainer "crf") is globally normalized: the marginals come
from forward-backward. An MEMM (trainer "memm", normalization "local") is a chain of local
distributions P(y_t | y_{t-1}, x), or P(y_t | y_{t-2}, y_{t-1}, x) at order 2: its marginals come
from the forward recursion over them (over the label pairs at order 2). Perceptron and hinge-loss
weights define no distribution, so they are refused.
"""
import numpy as np

from structperc._kernels.decode.marginals import corpus_marginals
from structperc.errors import ConfigError
from structperc.train import TRAINERS


class NotProbabilisticError(ConfigError):
    """The model was not trained as a probability model (perceptron, hinge)."""


def check_probabilistic(model):
    """Raise NotProbabilisticError unless the model defines P(y | x): its trainer is a probabilistic
    rule, with that rule's normalization and one of its orders."""
    trainer = model.metadata.get("training", {}).get("trainer")
    rule = TRAINERS.get(trainer)
    if rule is None or not rule.probabilistic:
        names = " or ".join(name for name, cls in TRAINERS.items() if cls.probabilistic)
        by = f"trained by {trainer}" if trainer else "without a training record"
        raise NotProbabilisticError(f"marginals need a {names} model; this model was {by}")
    if model.normalization != rule.normalization:
        raise NotProbabilisticError(
            f"a {trainer} model must have {rule.normalization} normalization, this one has {model.normalization!r}")
    if model.order not in rule.orders:
        orders = " or ".join(map(str, rule.orders))
        raise NotProbabilisticError(f"marginals need an order {orders} model, this one has order {model.order}")


def marginals(model, encoded, weights=None, forced=None, check=True):
    """Label marginals of every token and the log-probability of each sentence's best labeling.

    Parameters
    ----------
    model : LinearChainModel trained by the "crf" or "memm" rule
    encoded : EncodedCorpus from ``model.encoder.transform``
    weights : ndarray of shape (n_weights,), or None for ``model.weights``
    forced : None, or int64 (n_tokens,) label ids kept fixed, -1 where free (``model.data``); the
        marginals and probabilities are then conditioned on the forced labels
    check : refuse a model that is not probabilistic; False: the distribution its weights define
        (the CRF estimator's ``predict_marginals`` of any algorithm, as CRFsuite)

    Returns
    -------
    node_marginals : ndarray of shape (n_tokens, n_labels)
        P(y_t = c | x), flat over the tokens of all sentences; each row sums to 1.
    best_log_probability : ndarray of shape (n_sentences,)
        log P(ŷ | x) of the labeling ``model.decode`` returns.

    Raises
    ------
    NotProbabilisticError
        For a model trained by any other rule (perceptron, hinge), unless ``check`` is False.
    """
    if check:
        check_probabilistic(model)
    w = model.weights if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != model.weights.shape:
        raise ValueError(f"weights of shape {w.shape}, the model has {model.weights.shape}")
    return corpus_marginals(w, model.layout(), model.data(encoded, forced))
