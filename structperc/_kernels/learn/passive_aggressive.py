"""One epoch of the passive-aggressive rules (Crammer et al. 2006) on a linear chain, as CRFsuite's
``train_passive_aggressive.c`` structures them.

For a sentence with gold labeling y, let ŷ be the Viterbi labeling under w and m the number of
tokens where they differ. When m > 0:

    δ = Φ(x, y) - Φ(x, ŷ)                         (repeated entries summed, zeros dropped)
    loss = w · Φ(x, ŷ) - w · Φ(x, y) + cost(m)    cost(m) = √m (error sensitive) or 1
    τ = loss / ||δ||²                 PA (type 0, no slack)
        min(C, loss / ||δ||²)         PA-I (type 1)
        loss / (||δ||² + 1 / (2 C))   PA-II (type 2)
    w <- w + τ δ

the smallest change of w that scores y above ŷ by cost(m) (PA), with the step capped by the
aggressiveness C (PA-I) or traded against it (PA-II). A δ of norm 0 (both labelings have the same
features) makes no step.

Averaging is the perceptron's lazy average (``perceptron.py``): with counter = s - 1 at the s-th
example, u += counter τ δ, and the average of w over the example visits is w - u / counter.

A partially labelled sentence takes as y the best labeling consistent with its known labels under
w, and m counts the known tokens only (``difference.find_mistake``).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..borrow import borrowed
from .difference import find_mistake, mistake_features, sparse_difference

# float64 (n_weights,) each: the weights w (what decoding reads), the averaging accumulator u
# (length 0: no averaging), and zero scratch where δ is summed (zero again after every update)
PAVectors = namedtuple("PAVectors", "w u delta")
# variant: 0 (PA), 1 (PA-I), 2 (PA-II); aggressiveness: C; error_sensitive: cost √m, else 1
PASettings = namedtuple("PASettings", "variant aggressiveness error_sensitive")


@njit(cache=True)
def step_size(settings, loss, norm2):
    """τ of the variant ``settings.variant`` for this loss and ||δ||² > 0."""
    if settings.variant == 1:
        return min(settings.aggressiveness, loss / norm2)
    if settings.variant == 2:
        return loss / (norm2 + 0.5 / settings.aggressiveness)
    return loss / norm2


@njit(cache=True)
def pa_update(vectors, counter, settings, loss, phi_gold, values_gold, phi_pred, values_pred):
    """w += τ δ (and u += counter τ δ) for δ = Φ(x, y) - Φ(x, ŷ) given as the indices and values
    of each labeling (``phi_indices``, ``phi_values``; values empty: all 1). Returns τ (0 when
    ||δ|| = 0)."""
    w, u, delta = vectors
    indices, amounts = sparse_difference(delta, phi_gold, values_gold, phi_pred, values_pred)
    norm2 = 0.0
    for j in range(indices.shape[0]):
        norm2 += amounts[j] * amounts[j]
    if norm2 == 0.0:
        return 0.0
    tau = step_size(settings, loss, norm2)
    for j in range(indices.shape[0]):
        w[indices[j]] += tau * amounts[j]
        if u.shape[0] > 0:
            u[indices[j]] += counter * tau * amounts[j]
    return tau


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def pa_epoch(vectors, counter, settings, layout, data, visit_order):
    """Visit the sentences in ``visit_order``; on a mistake, the passive-aggressive step above.

    vectors : ``PAVectors``; counter : examples seen so far in the run; settings : ``PASettings``.
    Returns (counter, sum of the losses of the updates, number of sentences with a mistake, number
    of wrong tokens).
    """
    vectors, settings, layout, data, visit_order = borrowed((vectors, settings, layout, data, visit_order))
    w = vectors.w
    total_loss = 0.0
    sentence_errors = 0
    token_errors = 0
    for s in visit_order:
        a, b = data.sentence_offsets[s], data.sentence_offsets[s + 1]
        target, path, wrong = find_mistake(w, layout, data, a, b)
        if wrong > 0:
            sentence_errors += 1
            token_errors += wrong
            phi_gold, values_gold, phi_pred, values_pred, margin = mistake_features(w, layout, data, a, b, target,
                                                                                    path)
            cost = np.sqrt(wrong) if settings.error_sensitive else 1.0
            loss = margin + cost
            total_loss += loss
            pa_update(vectors, counter, settings, loss, phi_gold, values_gold, phi_pred, values_pred)
        counter += 1.0
    return counter, total_loss, sentence_errors, token_errors
