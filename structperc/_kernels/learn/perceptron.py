"""One epoch of the (averaged) structured perceptron, Collins (2002).

Partially labelled sentences (gold label id -1 at an unlabelled token) train as the latent
structured perceptron: the gold labeling is the best one consistent with the known labels under
the current weights ("constrained Viterbi", ``scoring.known_label_penalty``),

    y* = argmax over y with y_t = gold_t at every known t of w · Φ(x, y)

and the update is w += Φ(x, y*) - Φ(x, ŷ). A sentence with no known label is skipped.
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..decode.decoders import decode_sentence
from ..score.scoring import add_phi_difference, has_missing, known_label_penalty

# Lazy averaging. Let w_t be the weights after the t-th training example of the whole run
# (t = 1..c). Collins' averaged weights are  avg = (1/c) * sum_t w_t.  An update delta made
# while processing example s (s = 1..c) is part of w_s, w_{s+1}, ..., w_c, i.e. of c - s + 1 of
# the vectors, so
#     c * avg = sum_updates delta * (c - s + 1) = c * w - sum_updates delta * (s - 1).
# Keep u = sum_updates (s - 1) * delta alongside w; then  avg = w - u / c.  Each update touches
# only the |Φ| entries of delta in both w and u, and no step ever costs O(#weights).
# ``counter`` is s - 1: the number of examples seen before the current one.


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def perceptron_epoch(w, u, counter, layout, data, visit_order):
    """Visit the sentences in ``visit_order``; on a mistake, w += Φ(x, y) - Φ(x, ŷ).

    w, u : float64 (n_weights,) weights and the averaging accumulator (u may have length 0: no
    averaging). counter : float, examples seen so far in the run. Returns (counter, number of
    sentences with a mistake, number of wrong tokens).
    """
    w, u, layout, data, visit_order = borrowed((w, u, layout, data, visit_order))
    sentence_offsets, gold = data.sentence_offsets, data.gold
    no_extra = np.zeros((0, layout.n_labels))
    averaging = u.shape[0] > 0
    sentence_errors = 0
    token_errors = 0
    for s in visit_order:
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        target = gold[a:b]
        usable = b > a
        if usable and has_missing(target):
            usable = False
            for t in range(b - a):
                usable = usable or target[t] >= 0
            if usable:
                penalty = known_label_penalty(target, layout.n_labels)
                target, target_score = decode_sentence(w, layout, data, a, b, penalty)
                usable = target_score > -np.inf
        if usable:
            path, _ = decode_sentence(w, layout, data, a, b, no_extra)
            wrong = 0
            for t in range(b - a):
                if path[t] != target[t]:
                    wrong += 1
            if wrong > 0:
                sentence_errors += 1
                token_errors += wrong
                # w += Φ(x, y) - Φ(x, ŷ), over the tokens and transitions where they differ
                add_phi_difference(w, 1.0, layout, data, a, b, target, path)
                if averaging:
                    add_phi_difference(u, counter, layout, data, a, b, target, path)
        counter += 1.0
    return counter, sentence_errors, token_errors
