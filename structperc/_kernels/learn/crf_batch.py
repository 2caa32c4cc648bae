"""The CRF's negative log-likelihood and its gradient over the whole corpus for batch solvers (L-BFGS),
in every case that ``crf_scaled.scaled_objective`` (probability space, the common case) does not
take: a tag dictionary, pair features, partial labels.

At the weights w, with N sentences, ``crf_objective`` computes

    f(w) = -sum_i log P(y_i | x_i)
    g(w) = sum_i C_i

where C_i are the counts of ``crf.add_counts`` weighted by the node and edge marginals minus their
target (the one-hot gold, or with partial labels the marginals constrained to the known labels:
``crf.step_counts``). A sentence whose gold labeling is forbidden (by the constraint or the tag
dictionary) adds nothing and is counted as skipped; one with no known label adds nothing. Each
block of sentences sums its gradient into its own row of ``gradients``, and the rows are then added
in order; the blocks are the caller's (fixed by the data, for the same sums whatever the number of
threads).
"""
import numpy as np
from numba import njit, prange

from .crf import add_counts, step_counts
from .sgd import Update

SLICE = 1 << 16  # weights per task of the parallel sum of the blocks' gradients


@njit(cache=True, parallel=True)
def crf_objective(w, layout, data, block_offsets, gradients):
    """(f, skipped): f = -sum_i log P(y_i | x_i) over the sentences of ``data``; its gradient is left
    in gradients[0].

    w : float64 (n_weights,); block_offsets : int64 (B + 1,), block k is the sentences
    [block_offsets[k], block_offsets[k + 1]); gradients : float64 (B, n_weights), overwritten.
    skipped : the sentences whose gold labeling is forbidden (they add nothing).
    """
    n_blocks = block_offsets.shape[0] - 1
    sentence_offsets = data.sentence_offsets
    losses = np.zeros(n_blocks)
    skipped = np.zeros(n_blocks, dtype=np.int64)
    for k in prange(n_blocks):
        gradient = gradients[k]
        gradient[:] = 0.0
        for s in range(block_offsets[k], block_offsets[k + 1]):
            a, b = sentence_offsets[s], sentence_offsets[s + 1]
            if b == a:
                continue
            log_probability, node, edge = step_counts(w, 1.0, layout, data, a, b)
            if log_probability == -np.inf:
                skipped[k] += 1
                continue
            if node.shape[0] == 0:
                continue
            losses[k] -= log_probability
            add_counts(Update(gradient, gradient[:0], 1.0, 0.0), layout, data, a, b, node, edge)
    size = gradients.shape[1]
    n_slices = (size + SLICE - 1) // SLICE
    for j in prange(n_slices):
        lo, hi = j * SLICE, min((j + 1) * SLICE, size)
        total = gradients[0, lo:hi]
        for k in range(1, n_blocks):
            total += gradients[k, lo:hi]
    loss = 0.0
    for k in range(n_blocks):
        loss += losses[k]
    return loss, skipped.sum()
