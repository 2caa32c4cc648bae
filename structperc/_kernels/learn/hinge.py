"""Structured hinge loss (max-margin Markov networks / structured SVM) by subgradient steps.

For one sentence with gold labeling y and Hamming loss Δ(y, y') = #{t: y'_t != y_t}:

    loss(w) = max_y' [w · Φ(x, y') + cost Δ(y, y')] - w · Φ(x, y)      (>= 0: y' = y gives 0)

The inner max is the shared Viterbi on emission scores plus cost at every non-gold label. With
ŷ the loss-augmented argmax, Φ(x, y) - Φ(x, ŷ) is a subgradient of -loss, so a step on
loss + (λ / 2) ||w||² is  w <- (1 - η_t λ) w + η_t [loss > 0] (Φ(x, y) - Φ(x, ŷ)).
Weights are w = s v, lazily scaled and averaged as in ``sgd.py``.

A partially labelled sentence (gold label id -1 at an unlabelled token) takes as y the best
labeling consistent with its known labels under the current weights (latent structural SVM, the
constrained Viterbi of ``scoring.known_label_penalty``); the cost and the update are then taken
against that y. A sentence with no known label is skipped.
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..decode.cost import hamming_cost
from ..decode.decoders import decode_sentence
from ..score.scoring import has_missing, known_label_penalty, phi_dot, phi_indices, phi_values
from .sgd import EXAMPLES, SCALE, add_phi_scaled, decay, finish_step, learning_rate


@njit(cache=True)
def labeling_allowed(y, a, layout, data):
    """True when the labeling y of tokens [a, a + n) passes the transition mask and the candidates."""
    mask_penalty, cand_offsets, cand_labels = layout.mask_penalty, data.cand_offsets, data.cand_labels
    prev = layout.n_labels
    for t in range(y.shape[0]):
        if mask_penalty[prev, y[t]] == -np.inf:
            return False
        if cand_offsets.shape[0] > 0 and cand_offsets[a + t + 1] > cand_offsets[a + t]:  # empty: every label
            found = False
            for k in range(cand_offsets[a + t], cand_offsets[a + t + 1]):
                if cand_labels[k] == y[t]:
                    found = True
            if not found:
                return False
        prev = y[t]
    return True


@njit(cache=True)
def loss_augmented_decode_against(v, scale, layout, data, a, b, cost, target):
    """argmax_y' of scale * v · Φ(x, y') + cost Δ(target, y') and that maximum; target is the
    (possibly latent) gold labeling of tokens [a, b).

    Decodes v with cost / scale added (argmax is unchanged by the positive factor scale)."""
    extra = hamming_cost(target, layout.n_labels, cost / scale)
    path, score = decode_sentence(v, layout, data, a, b, extra)
    return path, scale * score


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def hinge_epoch(v, u, state, layout, data, visit_order, rate, cost):
    """Subgradient steps on the structured hinge loss over the sentences ``visit_order``, one per
    sentence, η_t = η0 / (1 + λ η0 t). v, u, state, rate as in ``crf.crf_epoch``.

    Returns (sum of the losses at the weights each sentence was visited with, number of sentences
    with a positive loss (updated), Hamming errors of their loss-augmented labelings, sentences
    skipped because their gold labeling is forbidden).
    """
    v, u, state, layout, data, visit_order = borrowed((v, u, state, layout, data, visit_order))
    sentence_offsets, gold = data.sentence_offsets, data.gold
    total_loss = 0.0
    violations = 0
    token_errors = 0
    skipped = 0
    for s in visit_order:
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        loss, wrong = 0.0, 0
        target = gold[a:b]
        known = b > a
        if known and has_missing(target):
            known = False
            for t in range(b - a):
                known = known or target[t] >= 0
            if known:
                target, target_score = decode_sentence(v, layout, data, a, b,
                                                       known_label_penalty(target, layout.n_labels))
                if target_score == -np.inf:
                    skipped += 1
                    known = False
        elif known and not labeling_allowed(target, a, layout, data):
            skipped += 1
            known = False
        if known:
            path, augmented = loss_augmented_decode_against(v, state[SCALE], layout, data, a, b, cost, target)
            phi_gold = phi_indices(layout, data, a, b, target)
            values = phi_values(layout, data, a, b, target)
            loss = augmented - state[SCALE] * phi_dot(v, phi_gold, values)
            for t in range(b - a):
                if path[t] != target[t]:
                    wrong += 1
        eta = learning_rate(rate, state[EXAMPLES])
        decay(v, state, 1.0 - eta * rate.l2)
        # y' = y attains loss 0, so a positive loss needs a labeling other than the gold one
        if wrong > 0 and loss > 0.0:
            total_loss += loss
            violations += 1
            token_errors += wrong
            phi_pred = phi_indices(layout, data, a, b, path)
            add_phi_scaled(v, u, state, eta, phi_gold, values)
            add_phi_scaled(v, u, state, -eta, phi_pred, phi_values(layout, data, a, b, path))
        finish_step(state, 1)
    return total_loss, violations, token_errors, skipped
