"""The lazily scaled (and lazily averaged) weight vector of the SGD rules: crf, memm and hinge.

Lazy L2 scaling (CRFsuite's l2sgd, Bottou's crfsgd). An SGD step on one example (or a
mini-batch of m examples) is
    w <- (1 - η λ m) w + η g            g = sum over the batch of the loss gradient, sparse.
The decay touches every weight; the gradient only |Φ(x)| of them. Store w = s · v with a scalar s:
    s <- s (1 - η λ m)                  O(1): the decay
    v[i] <- v[i] + η g[i] / s           O(|Φ(x)|): now s · v[i] gains exactly η g[i]
Scores are computed from v and multiplied by s. When s falls below 1e-9, fold it into v
(v <- s v, s <- 1) before 1 / s overflows; that step is O(#weights) but rare.

Lazy averaging of the scaled weights (averaged SGD). Let s_k, v_k be the state after step k and
w_k = s_k v_k the real weights (k = 1..T). With δ_k the change of v at step k, v_T = v_0 + sum_k δ_k,
and with the running sum S_k = s_1 + ... + s_k,
    sum_{k=1..T} w_k = sum_k s_k v_0 + sum_k δ_k (s_k + ... + s_T)
                     = S_T v_0 + sum_k δ_k (S_T - S_{k-1})  =  S_T v_T - u,   u = sum_k S_{k-1} δ_k.
So keep u beside v: every change v[i] += x made during step k also does u[i] += S_{k-1} x, and
the average is (S_T v_T - u) / T. A rescale by s multiplies v by s and divides all later s_k
(so S too) by s; S_T v_T is unchanged and u needs no change.

``state`` holds the scalars: s, S (the sum of s over the finished steps), the number of
examples seen (t of the learning rate) and the number of steps (T). ``Rate`` holds η0 and λ of
the schedule η_t = η0 / (1 + λ η0 t).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .scoring import add_phi, sentence_scores

SCALE, SCALE_SUM, EXAMPLES, STEPS = range(4)
RESCALE_BELOW = 1e-9
Rate = namedtuple("Rate", "eta0 l2")


def new_state():
    """The scalars of a freshly started lazily scaled vector (s = 1, nothing seen)."""
    return np.array([1.0, 0.0, 0.0, 0.0])


@njit(cache=True)
def rescale(v, state):
    """Fold s into v: v <- s v, S <- S / s, s <- 1 (the real weights do not change)."""
    s = state[SCALE]
    for i in range(v.shape[0]):
        v[i] *= s
    state[SCALE_SUM] /= s
    state[SCALE] = 1.0


@njit(cache=True)
def decay(v, state, factor):
    """w <- factor * w in O(1) (factor > 0)."""
    state[SCALE] *= factor
    if state[SCALE] < RESCALE_BELOW:
        rescale(v, state)


@njit(cache=True)
def finish_step(state, n_examples):
    """Close a step: S += s (the averaging sum), count the step and its examples."""
    state[SCALE_SUM] += state[SCALE]
    state[STEPS] += 1.0
    state[EXAMPLES] += n_examples


@njit(cache=True)
def add_phi_scaled(v, u, state, amount, phi, values):
    """w += amount * Φ for Φ given as (indices phi, values), through v (and u when averaging)."""
    x = amount / state[SCALE]
    add_phi(v, x, phi, values)
    if u.shape[0] > 0:
        add_phi(u, state[SCALE_SUM] * x, phi, values)


def restart_average(u, state):
    """Average only the steps from now on: u <- 0, S <- 0, T <- 0 (the sum then starts at v_now)."""
    u[:] = 0.0
    state[SCALE_SUM] = 0.0
    state[STEPS] = 0.0


@njit(cache=True)
def real_weights(v, u, state, average):
    """s v, or the average (S v - u) / T of the real weights over the steps so far."""
    if average and state[STEPS] > 0:
        return (state[SCALE_SUM] * v - u) / state[STEPS]
    return state[SCALE] * v


@njit(cache=True)
def learning_rate(rate, examples):
    # η_t = η0 / (1 + λ η0 t) = 1 / (λ (t + t0)) with t0 = 1 / (λ η0)
    return rate.eta0 / (1.0 + rate.l2 * rate.eta0 * examples)


@njit(cache=True)
def scaled_scores(v, scale, layout, data, a, b):
    """``scoring.sentence_scores`` of w = scale * v. Masked entries stay -inf (scale > 0)."""
    emission, transition, end = sentence_scores(v, layout, data, a, b)
    if scale != 1.0:
        emission *= scale
        transition *= scale
        end *= scale
    return emission, transition, end
