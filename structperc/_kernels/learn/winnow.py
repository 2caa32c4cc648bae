"""One epoch of Balanced Winnow (Littlestone 1988; the SNoW rule) as a structured learning rule."""
from collections import namedtuple

import numpy as np
from numba import njit

from ..decode.decoders import decode_sentence
from ..score.scoring import phi_indices, phi_values

# Balanced Winnow keeps two non-negative vectors w⁺, w⁻, both starting at θ (``initial_weight``);
# a labeling scores (w⁺ - w⁻) · Φ(x, y). On a mistake let d_i = Φ_i(x, y) - Φ_i(x, ŷ), the net
# count of entry i (features both labelings share cancel). Entry i is promoted when d_i > 0 and
# demoted when d_i < 0:
#     d_i > 0:   w⁺_i <- w⁺_i α^d_i,    w⁻_i <- w⁻_i β^d_i            (α > 1 > β > 0)
#     d_i < 0:   w⁺_i <- w⁺_i β^|d_i|,  w⁻_i <- w⁻_i α^|d_i|
# Store log-weights relative to θ: p_i = log(w⁺_i / θ), m_i = log(w⁻_i / θ), zero at the start.
# The update becomes additive and touches only the entries with d_i ≠ 0 (at most |Φ(x, y)| +
# |Φ(x, ŷ)| of them); no entry overflows before it has been promoted ~700 / log α times:
#     d_i > 0:   p_i += d_i log α,   m_i += d_i log β
#     d_i < 0:   p_i += |d_i| log β, m_i += |d_i| log α
# The scores read w = w0 + θ (e^p - e^m) (w0 the starting weights, zero for a fresh model), which is
# kept up to date entry by entry, so decoding is the perceptron's.
#
# Lazy averaging. The multiplicative step changes w_i by the additive amount
# δ_i = θ (e^p'_i - e^m'_i) - θ (e^p_i - e^m_i), and the average of w over the c example visits of
# the run is linear in these changes exactly as for the perceptron (``perceptron.py``): with
# u = sum_updates (s - 1) δ (s the visit at which δ was made), avg = w - u / c. Each update adds
# counter * δ_i to u_i for the same entries, so averaging costs nothing per step beyond them.
# ``counter`` is s - 1.

# The vectors the rule keeps, all float64 (n_weights,): w = w0 + θ (e^p - e^m) (what decoding
# reads), the log-weights p (plus) and m (minus), the averaging accumulator u (length 0: no
# averaging) and net, zero scratch for the net counts of one update.
WinnowVectors = namedtuple("WinnowVectors", "w plus minus u net")
# log α, log β and θ (``initial_weight``)
WinnowRate = namedtuple("WinnowRate", "log_alpha log_beta theta")


@njit(cache=True)
def winnow_update(vectors, counter, rate, phi_gold, values_gold, phi_pred, values_pred):
    """Promote the entries of Φ(x, y) - Φ(x, ŷ) with positive net count, demote those with negative;
    ``values_gold``, ``values_pred`` are the values of the entries (``phi_values``; empty: all 1),
    so a real-valued feature counts its value. vectors : ``WinnowVectors`` (net all zero on entry
    and on return); rate : ``WinnowRate``.
    """
    w, plus, minus, u, net = vectors
    log_alpha, log_beta, theta = rate
    for k in range(phi_gold.shape[0]):
        net[phi_gold[k]] += values_gold[k] if values_gold.shape[0] > 0 else 1.0
    for k in range(phi_pred.shape[0]):
        net[phi_pred[k]] -= values_pred[k] if values_pred.shape[0] > 0 else 1.0
    for k in range(phi_gold.shape[0] + phi_pred.shape[0]):
        i = phi_gold[k] if k < phi_gold.shape[0] else phi_pred[k - phi_gold.shape[0]]
        d = net[i]
        if d == 0.0:
            continue
        net[i] = 0.0
        before = theta * (np.exp(plus[i]) - np.exp(minus[i]))
        if d > 0:
            plus[i] += d * log_alpha
            minus[i] += d * log_beta
        else:
            plus[i] -= d * log_beta
            minus[i] -= d * log_alpha
        change = theta * (np.exp(plus[i]) - np.exp(minus[i])) - before
        w[i] += change
        if u.shape[0] > 0:
            u[i] += counter * change


@njit(cache=True)
def winnow_epoch(vectors, counter, rate, layout, data, visit_order):
    """Visit the sentences in ``visit_order``; on a mistake, the Balanced Winnow update above.

    vectors : ``WinnowVectors``; counter : examples seen so far; rate : ``WinnowRate``. Returns
    (counter, number of sentences with a mistake, number of wrong tokens).
    """
    w = vectors.w
    sentence_offsets, gold = data.sentence_offsets, data.gold
    no_extra = np.zeros((0, layout.n_labels))
    sentence_errors = 0
    token_errors = 0
    for s in visit_order:
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        if b > a:
            path, _ = decode_sentence(w, layout, data, a, b, no_extra)
            wrong = 0
            for t in range(b - a):
                if path[t] != gold[a + t]:
                    wrong += 1
            if wrong > 0:
                sentence_errors += 1
                token_errors += wrong
                phi_gold = phi_indices(layout, data, a, b, gold[a:b])
                phi_pred = phi_indices(layout, data, a, b, path)
                winnow_update(vectors, counter, rate, phi_gold, phi_values(layout, data, a, b, gold[a:b]),
                              phi_pred, phi_values(layout, data, a, b, path))
        counter += 1.0
    return counter, sentence_errors, token_errors
