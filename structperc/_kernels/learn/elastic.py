"""The SGD rules' epochs with the cumulative L1 penalty (see ``sgd.py``) around every step.

Each kernel runs the rule's own epoch kernel one step (one sentence, or one CRF mini-batch) at a
time: before the step, the entries its sentences read are brought up to the penalty so far;
after it, the step's penalty is added and applied to them. They return what the rule's kernel
returns, summed over the steps. ``vectors`` is a ``sgd.Penalized`` (v, u, q, state).
"""
from numba import njit

from ..borrow import borrowed
from .crf import crf_epoch
from .hinge import hinge_epoch
from .memm import memm_epoch
from .sgd import EXAMPLES, SCALE_SUM, l1_after_step, l1_batch, learning_rate


@njit(cache=True)
def crf_l1_epoch(vectors, layout, data, visit_order, rate, batch_size, l1):
    vectors, layout, data, visit_order = borrowed((vectors, layout, data, visit_order))
    v, u, state = vectors.v, vectors.u, vectors.state
    log_likelihood, skipped = 0.0, 0
    for lo in range(0, visit_order.shape[0], batch_size):
        batch = visit_order[lo: lo + batch_size]
        l1_batch(vectors, layout, data, batch, state[SCALE_SUM])
        eta = learning_rate(rate, state[EXAMPLES])
        step_log_likelihood, step_skipped = crf_epoch(v, u, state, layout, data, batch, rate, batch_size)
        l1_after_step(vectors, layout, data, batch, eta, l1)
        log_likelihood += step_log_likelihood
        skipped += step_skipped
    return log_likelihood, skipped


@njit(cache=True)
def memm_l1_epoch(vectors, layout, data, visit_order, rate, l1):
    vectors, layout, data, visit_order = borrowed((vectors, layout, data, visit_order))
    v, u, state = vectors.v, vectors.u, vectors.state
    log_likelihood, skipped = 0.0, 0
    for j in range(visit_order.shape[0]):
        batch = visit_order[j: j + 1]
        l1_batch(vectors, layout, data, batch, state[SCALE_SUM])
        eta = learning_rate(rate, state[EXAMPLES])
        step_log_likelihood, step_skipped = memm_epoch(v, u, state, layout, data, batch, rate)
        l1_after_step(vectors, layout, data, batch, eta, l1)
        log_likelihood += step_log_likelihood
        skipped += step_skipped
    return log_likelihood, skipped


@njit(cache=True)
def hinge_l1_epoch(vectors, layout, data, visit_order, rate, cost, l1):
    vectors, layout, data, visit_order = borrowed((vectors, layout, data, visit_order))
    v, u, state = vectors.v, vectors.u, vectors.state
    total_loss, violations, token_errors, skipped = 0.0, 0, 0, 0
    for j in range(visit_order.shape[0]):
        batch = visit_order[j: j + 1]
        l1_batch(vectors, layout, data, batch, state[SCALE_SUM])
        eta = learning_rate(rate, state[EXAMPLES])
        loss, step_violations, step_errors, step_skipped = hinge_epoch(v, u, state, layout, data, batch, rate, cost)
        l1_after_step(vectors, layout, data, batch, eta, l1)
        total_loss += loss
        violations += step_violations
        token_errors += step_errors
        skipped += step_skipped
    return total_loss, violations, token_errors, skipped
