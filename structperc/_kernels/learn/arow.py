"""One epoch of AROW (Crammer, Kulesza & Dredze 2009, adaptive regularization of weight vectors)
as a structured learning rule, as CRFsuite's ``train_arow.c`` applies it to a linear chain.

The weights are a Gaussian N(μ, Σ) with diagonal Σ (``variance``, every entry starting at the
``variance`` option); decoding reads the mean μ. For a sentence with gold labeling y, let ŷ be
the Viterbi labeling under μ and m the number of tokens where they differ. When m > 0:

    δ = Φ(x, y) - Φ(x, ŷ)                                 (repeated entries summed, zeros dropped)
    loss = μ · Φ(x, ŷ) - μ · Φ(x, y) + m                  (> 0: ŷ scores at least as high as y)
    confidence = γ + Σ_i δ_i² Σ_i
    α = loss / confidence
    μ_i <- μ_i + α Σ_i δ_i
    Σ_i <- 1 / (1 / Σ_i + δ_i² / γ)

Only the entries with δ_i ≠ 0 change, at most |Φ(x, y)| + |Φ(x, ŷ)| of them. Σ_i only shrinks: a
weight that has been corrected often moves less. There is no averaging (CRFsuite's AROW has none).

A partially labelled sentence takes as y the best labeling consistent with its known labels
under μ, as the perceptron does; m counts the known tokens only (``difference.find_mistake``).
"""
from collections import namedtuple

from numba import njit

from ..borrow import borrowed
from .difference import find_mistake, mistake_features, sparse_difference

# float64 (n_weights,) each: the mean μ (what decoding reads), the diagonal of Σ, and zero
# scratch where δ is summed (zero again on return of every update)
ArowVectors = namedtuple("ArowVectors", "w variance delta")


@njit(cache=True)
def arow_update(vectors, gamma, loss, phi_gold, values_gold, phi_pred, values_pred):
    """The AROW step above for δ = Φ(x, y) - Φ(x, ŷ), given as the indices and values of each
    labeling (``phi_indices``, ``phi_values``; values empty: all 1). Returns the number of entries
    changed."""
    w, variance, delta = vectors
    touched, amounts = sparse_difference(delta, phi_gold, values_gold, phi_pred, values_pred)
    n = touched.shape[0]
    confidence = gamma
    for j in range(n):
        confidence += amounts[j] * amounts[j] * variance[touched[j]]
    alpha = loss / confidence
    for j in range(n):
        i, d = touched[j], amounts[j]
        w[i] += alpha * variance[i] * d
        variance[i] = 1.0 / (1.0 / variance[i] + d * d / gamma)
    return n


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def arow_epoch(vectors, gamma, layout, data, visit_order):
    """Visit the sentences in ``visit_order``; on a mistake, the AROW step above.

    vectors : ``ArowVectors``; gamma : γ > 0. Returns (sum of the losses of the updates, number of
    sentences with a mistake, number of wrong tokens).
    """
    vectors, layout, data, visit_order = borrowed((vectors, layout, data, visit_order))
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
            loss = margin + wrong
            total_loss += loss
            arow_update(vectors, gamma, loss, phi_gold, values_gold, phi_pred, values_pred)
    return total_loss, sentence_errors, token_errors
