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

Cumulative L1 penalty (Tsuruoka, Tsujii & Ananiadou 2009), with the L2 decay: the elastic net.
An eager step k on a batch of m examples is
    w <- (1 - η λ2 m) w + η g,   then for every i: w_i <- sign(w_i) max(0, |w_i| - (debt of i))
where Tsuruoka's debt is the total penalty u_k = λ1 sum_{j<=k} η_j m_j that w_i could have
received, minus what it actually received (q_i, signed, clipped at zero each time). A weight that
sits at zero accrues debt and pays it as soon as a gradient moves it away.
With w = s v the decay is free in v-units, and a penalty of η λ1 m in real units is η λ1 m / s in
v-units; so run the rule on v with
    U_k = sum_{j<=k} η_j λ1 m_j / s_j          (s_j after the decay of step j)
    v_i > 0:  v_i <- max(0, v_i - (U_k + q_i))    v_i < 0:  v_i <- min(0, v_i + (U_k - q_i))
    q_i += (the change of v_i)
In real units U and q are s U_k and s q_i: they decay with the weights, so the debt an entry owes
shrinks exactly as the penalties paid step by step would have. Applying the clipped rule at every
step to an entry that no gradient touches equals applying it once, later (each application moves
v_i monotonically toward 0 and stops there), so the lazy schedule is exact: bring every entry a
sentence reads up to U_{k-1} before scoring it, and to U_k right after the gradient of step k.
``l1_catch_up_all`` brings every entry up to date before the weights are read or saved.
U and q are kept in the units of v before any rescale ("base" units): a rescale by s multiplies v
by s, and the factor F (the product of those s) converts, x_v = F x_base.
Averaging: a lazy penalty paid when an entry is next read is credited to that step (u_i +=
S_{k-1} Δv_i) rather than spread over the steps it was owed in; with l1 = 0 nothing changes.

``state`` holds the scalars: s, S (the sum of s over the finished steps), the number of
examples seen (t of the learning rate), the number of steps (T), F and U. ``Rate`` holds η0 and
λ of the schedule η_t = η0 / (1 + λ η0 t).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..score.scoring import add_phi, sentence_scores

SCALE, SCALE_SUM, EXAMPLES, STEPS, FOLD, L1_TOTAL = range(6)
RESCALE_BELOW = 1e-9
Rate = namedtuple("Rate", "eta0 l2")
# A sparse change of the scaled vector: v += x · C and, when u is not empty, u += y · C, for counts C
# that the kernel taking it computes (the step on v and the averaging accumulator's share of it).
Update = namedtuple("Update", "v u x y")
# The vectors of the elastic net: the scaled weights v, the averaging accumulator u (length 0: no
# averaging), the L1 penalty q each entry has received (base units) and the scalars ``state``.
Penalized = namedtuple("Penalized", "v u q state")


def new_state():
    """The scalars of a freshly started lazily scaled vector (s = 1, nothing seen, F = 1, U = 0)."""
    return np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])


@njit(cache=True)
def rescale(v, state):
    """Fold s into v: v <- s v, S <- S / s, s <- 1 (the real weights do not change)."""
    s = state[SCALE]
    for i in range(v.shape[0]):
        v[i] *= s
    state[SCALE_SUM] /= s
    state[SCALE] = 1.0
    state[FOLD] *= s


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


@njit(cache=True, inline="always")
def add_block(v, u, base, x, y, row):
    """v[base + i] += x * row[i] for every i of row, and u[base + i] += y * row[i] when u is not
    empty (a dense block's change of v, and the averaging accumulator's, in one call)."""
    n = row.shape[0]
    block = v[base: base + n]
    for i in range(n):
        block[i] += x * row[i]
    if u.shape[0] > 0:
        block = u[base: base + n]
        for i in range(n):
            block[i] += y * row[i]


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


# ------------------------------------------------------------------------- cumulative L1 penalty
@njit(cache=True)
def l1_add_step(state, eta, l1, n_examples):
    """U += η λ1 m / s (in base units) after the decay of a step on ``n_examples`` examples."""
    state[L1_TOTAL] += eta * l1 * n_examples / (state[SCALE] * state[FOLD])


@njit(cache=True)
def l1_apply(v, u, q, state, i, credit):
    """Bring entry i up to the cumulative penalty U; u_i gains ``credit`` times the change."""
    z = v[i]
    if z == 0.0:
        return
    fold = state[FOLD]
    if z > 0.0:
        v[i] = max(0.0, z - fold * (state[L1_TOTAL] + q[i]))
    else:
        v[i] = min(0.0, z + fold * (state[L1_TOTAL] - q[i]))
    change = v[i] - z
    q[i] += change / fold
    if u.shape[0] > 0:
        u[i] += credit * change


@njit(cache=True)
def l1_sentence(vectors, layout, data, a, b, credit):
    """``l1_apply`` to every entry the scores of tokens [a, b) read: each firing feature's
    emission row, the transition and end blocks, the pair features' blocks (and the second-order
    block at order 2). vectors : ``Penalized``."""
    v, u, q, state = vectors
    n_labels = layout.n_labels
    emission_offsets = layout.emission_offsets
    feature_ids, pair_offsets, pair_ids = data.feature_ids, data.pair_offsets, data.pair_ids
    for k in range(data.feature_offsets[a], data.feature_offsets[b]):
        f = feature_ids[k]
        if emission_offsets.shape[0] == 0:  # the weights of (f, c) for every label (``emission.py``)
            lo, hi = f * n_labels, f * n_labels + n_labels
        else:
            lo, hi = emission_offsets[f], emission_offsets[f + 1]
        for i in range(lo, hi):
            l1_apply(v, u, q, state, i, credit)
    size = (n_labels + 1) * n_labels
    pair_lo = pair_offsets[a] if pair_offsets.shape[0] > 0 else 0
    pair_hi = pair_offsets[b] if pair_offsets.shape[0] > 0 else 0
    for k in range(pair_lo, pair_hi):
        base = layout.off_pair + pair_ids[k] * size
        for j in range(size):
            l1_apply(v, u, q, state, base + j, credit)
    for i in range(layout.off_trans, layout.off_pair):  # transitions and end
        l1_apply(v, u, q, state, i, credit)
    for i in range(layout.off_trans2, v.shape[0]):
        l1_apply(v, u, q, state, i, credit)


@njit(cache=True)
def l1_batch(vectors, layout, data, sentences, credit):
    """``l1_sentence`` for every sentence of ``sentences`` (int64)."""
    offsets = data.sentence_offsets
    for s in sentences:
        l1_sentence(vectors, layout, data, offsets[s], offsets[s + 1], credit)


@njit(cache=True)
def l1_catch_up_all(v, u, q, state):
    """Bring every entry up to U (O(#weights)); credited to the step under way."""
    credit = state[SCALE_SUM]
    for i in range(v.shape[0]):
        l1_apply(v, u, q, state, i, credit)


@njit(cache=True)
def l1_after_step(vectors, layout, data, sentences, eta, l1):
    """After the SGD step on ``sentences`` (which ``finish_step`` has closed): add its penalty to U
    and apply it to what the step read, credited to that step (S_{k-1} = S - s)."""
    state = vectors.state
    l1_add_step(state, eta, l1, sentences.shape[0])
    l1_batch(vectors, layout, data, sentences, state[SCALE_SUM] - state[SCALE])
