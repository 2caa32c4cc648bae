"""A mistake and its difference vector Φ(x, y) - Φ(x, ŷ), for the rules whose step depends on the
loss and the norm of the difference (passive-aggressive, AROW).

``score.scoring.add_phi_difference`` adds the difference to a vector without forming it; these
rules need its entries first: ``sparse_difference`` lists its distinct nonzero entries.
"""
import numpy as np
from numba import njit

from ..decode.decoders import decode_sentence
from ..score.scoring import has_missing, known_label_penalty, phi_dot, phi_indices, phi_values


@njit(cache=True)
def find_mistake(w, layout, data, a, b):
    """(target y, Viterbi labeling ŷ under w, number of wrong known tokens) of tokens [a, b).

    y is the gold labeling, or for a partially labelled sentence (gold label id -1 at an
    unlabelled token) the best labeling under w consistent with its known labels (the latent
    gold of ``scoring.known_label_penalty``). The count is 0 for a sentence with no known label,
    or whose known labels no allowed labeling keeps: such a sentence makes no update.
    """
    no_extra = np.zeros((0, layout.n_labels))
    target = data.gold[a:b]
    if b == a:
        return target, target, 0
    if has_missing(target):
        known = False
        for t in range(b - a):
            known = known or target[t] >= 0
        if not known:
            return target, target, 0
        target, target_score = decode_sentence(w, layout, data, a, b, known_label_penalty(target, layout.n_labels))
        if target_score == -np.inf:
            return target, target, 0
    path, _ = decode_sentence(w, layout, data, a, b, no_extra)
    wrong = 0
    for t in range(b - a):
        if path[t] != target[t] and data.gold[a + t] >= 0:
            wrong += 1
    return target, path, wrong


@njit(cache=True)
def sparse_difference(scratch, phi_gold, values_gold, phi_pred, values_pred):
    """(indices, amounts): δ = Φ(x, y) - Φ(x, ŷ) over its distinct nonzero entries, each once.

    phi_gold, phi_pred : int64 entry indices of each labeling (``phi_indices``; repeats add up);
    values_gold, values_pred : their values (``phi_values``; empty: all 1). scratch : float64
    (n_weights,), zero on entry and zero again on return; δ is summed in it.
    """
    n_gold = phi_gold.shape[0]
    for k in range(n_gold):
        scratch[phi_gold[k]] += values_gold[k] if values_gold.shape[0] > 0 else 1.0
    for k in range(phi_pred.shape[0]):
        scratch[phi_pred[k]] -= values_pred[k] if values_pred.shape[0] > 0 else 1.0
    indices = np.empty(n_gold + phi_pred.shape[0], dtype=np.int64)
    amounts = np.empty(indices.shape[0])
    n = 0
    for k in range(indices.shape[0]):
        i = phi_gold[k] if k < n_gold else phi_pred[k - n_gold]
        if scratch[i] != 0.0:  # the first visit of an entry reads it and clears it
            indices[n] = i
            amounts[n] = scratch[i]
            scratch[i] = 0.0
            n += 1
    return indices[:n], amounts[:n]


@njit(cache=True)
def mistake_features(w, layout, data, a, b, target, path):
    """(features of y, their values, features of ŷ, their values, w · Φ(x, ŷ) - w · Φ(x, y)) of
    tokens [a, b), for the target y and the prediction ŷ of ``find_mistake``."""
    phi_gold = phi_indices(layout, data, a, b, target)
    values_gold = phi_values(layout, data, a, b, target)
    phi_pred = phi_indices(layout, data, a, b, path)
    values_pred = phi_values(layout, data, a, b, path)
    margin = phi_dot(w, phi_pred, values_pred) - phi_dot(w, phi_gold, values_gold)
    return phi_gold, values_gold, phi_pred, values_pred, margin
