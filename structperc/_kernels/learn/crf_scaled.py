"""The CRF's negative log-likelihood and its gradient over the whole corpus in probability space, as
CRFsuite computes it, for the batch solvers (L-BFGS) in the common case: first order, every label
allowed at every token, no pair features, every label known (``crf_tables.scaled_applies``;
``crf_batch.crf_objective`` takes the others).

At the weights w, with N sentences,

    f(w) = -sum_i log P(y_i | x_i) + c2 ||w||²
    g(w) = sum_i E_{P(y' | x_i)}[Φ(x_i, y')] - Φ(x_i, y_i) + 2 c2 w

A sentence whose gold labeling the transition mask forbids adds nothing
(``crf_tables.usable_sentences``). The gold counts O = sum_i Φ(x_i, y_i) are the same at every w
and are counted once (``crf_tables.observed_counts``), so that f = sum_i log Z_i - w · O and g = E - O.

``scaled_objective`` takes three steps per evaluation:
- ``scaled_sums``: the blocks of sentences (``range_sums``, a serial kernel with nogil, on the
  threads of ``threads.over_items``, which hand the blocks out a few at a time as each thread is
  free: a thread that shares its core with another process takes fewer). Per evaluation the
  transitions are exponentiated once (``boundary_tables``); per sentence the emission scores are
  exponentiated once, shifted by each token's largest, and forward-backward rescales alpha and
  beta at each position (``decode.forward_backward.forward_backward_scaled`` describes the
  recursion). Each token's node marginals are kept (n_tokens x L); each block's transition and
  end sums and log Z are kept in its row of block_sums. The blocks are fixed by the data alone
  (``crf_tables.sentence_blocks``).
- ``log_space_sums``: a sentence whose rescaling under- or overflowed (weights far larger than an
  L2-regularized model has) is done in log space (``forward_backward``) and added to its block's
  row. It is called, and so compiled, only when some sentence needs it.
- ``scaled_gradient``: the emission gradient, by ranges of features on the same threads
  (``range_gradients``), each range reading its own feature occurrences in token order
  (``crf_tables.feature_occurrences``), so that a weight (f, c) sums x P(y_t = c | x) over the occurrences of f
  in token order; then the blocks' transition and end sums are added in block order (``finish``).
f and g are thus the same, bit for bit, whatever the number of threads. The kernels on threads
borrow their arguments (``borrow.py``): the reference counts of the many rows they take would
otherwise slow the forward-backward down.
"""

import numpy as np
from numba import njit

from ..borrow import borrowed
from ..decode.forward_backward import forward_backward
from ..score.emission import gather_features, scatter_occurrences
from ..threads import over_items

TINY = 1e-280  # a rescaling sum below this (or not finite) sends the sentence to log space
# the running product of the scales is logged once outside [PRODUCT_FLOOR, PRODUCT_CEILING]: times a
# scale (above TINY, at most L) it stays a normal number
PRODUCT_FLOOR, PRODUCT_CEILING = 1e-20, 1e20


@njit(cache=True, inline="always")
def _exp_shifted(scores, out):
    """out = exp(scores - max(scores)) over a flat block; the max (-inf when every entry is)."""
    top = -np.inf
    for i in range(scores.shape[0]):
        top = max(top, scores[i])
    if top == -np.inf:
        out[:] = 0.0
        return top
    for i in range(scores.shape[0]):
        out[i] = np.exp(scores[i] - top)
    return top


@njit(cache=True)
def _log_space_sentence(emission, transition, end, node, sums, n_labels):
    """``forward_backward`` of one sentence in log space: its node marginals into node, its
    expected transition counts (start row included) and end counts added to sums; log Z."""
    log_z, marginals, edge = forward_backward(emission, transition, end)
    n = emission.shape[0]
    node[:, :] = marginals
    size = (n_labels + 1) * n_labels
    for t in range(n):
        flat = edge[t].reshape(size)
        for i in range(size):
            sums[i] += flat[i]
    for c in range(n_labels):
        sums[size + c] += marginals[n - 1, c]
    return log_z


@njit(cache=True, inline="always")
def _scaled_sentence(w, layout, data, span, tables, work, node, sums):
    """Forward-backward of tokens span = (a, b) in probability space: node marginals into node
    (n, L), expected transition counts (start row L included) and end counts added to sums; returns
    log Z, or nan when a rescaling sum under- or overflows (nothing is added then). tables: the
    ``crf_tables.ScaledTables`` whose boundary tables ``boundary_tables`` filled; work: (scores, expo, alpha,
    beta) (n, L) each, scale (n,), weighted (L,), pairs (L, L): the block's expected transition counts
    divided by exp_transition (``_block_sums`` multiplies them in once per block)."""
    a, b = span
    exp_trans, exp_end = tables.exp_transition, tables.exp_end
    trans_top, end_top = tables.tops[0], tables.tops[1]
    scores, expo, alpha, beta, scale, weighted, pairs = work
    n_labels = layout.n_labels
    n = b - a
    feature_offsets, feature_ids, values = data.feature_offsets, data.feature_ids, data.feature_values
    shift = n * trans_top + end_top
    # rows are taken as views indexed from 0: an index like [t, c] makes numba check for negative
    # indices at every step, which keeps the label loops from vectorizing
    for t in range(n):
        row, out = scores[t], expo[t]
        row[:] = 0.0
        gather_features(w, layout, feature_ids, values, feature_offsets[a + t], feature_offsets[a + t + 1], row)
        top = row[0]
        for c in range(1, n_labels):
            top = max(top, row[c])
        shift += top
        for c in range(n_labels):
            out[c] = np.exp(row[c] - top)
    start = exp_trans[n_labels]
    log_scale = 0.0
    product = 1.0  # of the scales since log_scale last took them: one log per several tokens
    for t in range(n):
        current, e_t = alpha[t], expo[t]
        if t == 0:
            for c in range(n_labels):
                current[c] = e_t[c] * start[c]
        else:
            current[:] = 0.0
            previous = alpha[t - 1]
            for p in range(n_labels):
                ap = previous[p]
                if ap != 0.0:
                    row = exp_trans[p]
                    for c in range(n_labels):
                        current[c] += ap * row[c]
            for c in range(n_labels):
                current[c] *= e_t[c]
        total = 0.0
        for c in range(n_labels):
            total += current[c]
        if not (total > TINY) or not np.isfinite(total):
            return np.nan
        scale[t] = total
        product *= total  # total <= L (alpha[t - 1] sums to 1, the exps are at most 1)
        if product < PRODUCT_FLOOR or product > PRODUCT_CEILING:
            log_scale += np.log(product)
            product = 1.0
        inverse = 1.0 / total
        for c in range(n_labels):
            current[c] *= inverse
    z = 0.0
    last = alpha[n - 1]
    for c in range(n_labels):
        z += last[c] * exp_end[c]
    if not (z > TINY):
        return np.nan
    log_z = np.log(z * product) + log_scale + shift

    following = beta[n - 1]
    for c in range(n_labels):
        following[c] = exp_end[c]
    for t in range(n - 2, -1, -1):
        e_next, following, current = expo[t + 1], beta[t + 1], beta[t]
        inverse = 1.0 / scale[t + 1]
        for c in range(n_labels):
            weighted[c] = e_next[c] * following[c] * inverse
        for p in range(n_labels):
            row = exp_trans[p]
            total = 0.0
            for c in range(n_labels):
                total += row[c] * weighted[c]
            current[p] = total
    inverse_z = 1.0 / z
    for t in range(n):
        out, a_t, b_t = node[t], alpha[t], beta[t]
        for c in range(n_labels):
            out[c] = a_t[c] * b_t[c] * inverse_z
    size = n_labels * n_labels
    start_sums = sums[size: size + n_labels]
    first = node[0]
    for c in range(n_labels):
        start_sums[c] += first[c]
    for t in range(1, n):
        e_t, b_t, previous = expo[t], beta[t], alpha[t - 1]
        norm = 1.0 / (scale[t] * z)
        for c in range(n_labels):
            weighted[c] = e_t[c] * b_t[c] * norm
        for p in range(n_labels):
            ap = previous[p]
            if ap != 0.0:
                out = pairs[p]
                for c in range(n_labels):
                    out[c] += ap * weighted[c]
    end_sums = sums[size + n_labels: size + 2 * n_labels]
    last = node[n - 1]
    for c in range(n_labels):
        end_sums[c] += last[c]
    return log_z


@njit(cache=True)
def _block_sums(w, layout, data, tables, k):
    """The sentences of block k: their node marginals into tables.node; tables.block_sums[k] = their
    expected transition counts (start row L included), end counts and sum of log Z. A sentence
    whose rescaling fails is marked in tables.log_space and left out (``log_space_sums`` adds it)."""
    n_labels = layout.n_labels
    size_t = (n_labels + 1) * n_labels
    sentence_offsets = data.sentence_offsets
    first, stop = tables.block_offsets[k], tables.block_offsets[k + 1]
    usable, node, sums, log_space = tables.usable, tables.node, tables.block_sums[k], tables.log_space
    sums[:] = 0.0
    longest = 0
    for s in range(first, stop):
        longest = max(longest, sentence_offsets[s + 1] - sentence_offsets[s])
    owned = (np.empty((longest, n_labels)), np.empty((longest, n_labels)), np.empty((longest, n_labels)),
             np.empty((longest, n_labels)), np.empty(longest), np.empty(n_labels), np.zeros((n_labels, n_labels)))
    work = borrowed(owned)  # (scores, expo, alpha, beta, scale, weighted, pairs), their rows taken per token
    loss = 0.0
    for s in range(first, stop):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        log_space[s] = False
        if not usable[s]:
            node[a:b] = 0.0
            continue
        log_z = _scaled_sentence(w, layout, data, (a, b), tables, work, node[a:b], sums)
        if np.isnan(log_z):
            log_space[s] = True
        else:
            loss += log_z
    sums[size_t + n_labels] = loss
    pairs, exp_trans = work[6], tables.exp_transition
    for p in range(n_labels):
        counted, row, out = pairs[p], exp_trans[p], sums[p * n_labels: (p + 1) * n_labels]
        for c in range(n_labels):
            out[c] += counted[c] * row[c]
    return owned  # a use after the loop: the buffers that work borrows live until here


@njit(cache=True)
def log_space_sums(w, layout, data, tables):
    """The sentences marked in tables.log_space, in log space (``forward_backward``): their node
    marginals into tables.node, their expected counts and log Z added to their block's sums, in
    block and sentence order. Compiled only when some sentence needs it."""
    n_labels = layout.n_labels
    size_t = (n_labels + 1) * n_labels
    log_transition, end = tables.transition, tables.end  # as ``scaled_sums`` left them
    sentence_offsets, feature_offsets = data.sentence_offsets, data.feature_offsets
    for k in range(tables.block_offsets.shape[0] - 1):
        sums = tables.block_sums[k]
        for s in range(tables.block_offsets[k], tables.block_offsets[k + 1]):
            if not tables.log_space[s]:
                continue
            a, b = sentence_offsets[s], sentence_offsets[s + 1]
            scores = np.zeros((b - a, n_labels))
            for t in range(b - a):
                gather_features(w, layout, data.feature_ids, data.feature_values, feature_offsets[a + t],
                                feature_offsets[a + t + 1], scores[t])
            sums[size_t + n_labels] += _log_space_sentence(scores, log_transition, end, tables.node[a:b], sums,
                                                           n_labels)


@njit(cache=True)
def _emission_gradient(w, c2, layout, tables, j, gradient):
    """The gradient of the emission weights of the features of range j: g[(f, c)] = 2 c2 w[(f, c)] -
    O[(f, c)] plus x P(y_t = c | x) for each occurrence of f, in token order."""
    f_lo, f_hi = tables.feature_ranges[j], tables.feature_ranges[j + 1]
    n_labels = layout.n_labels
    emission_offsets = layout.emission_offsets
    lo = f_lo * n_labels if emission_offsets.shape[0] == 0 else emission_offsets[f_lo]
    hi = f_hi * n_labels if emission_offsets.shape[0] == 0 else emission_offsets[f_hi]
    twice = 2.0 * c2
    for i in range(lo, hi):
        gradient[i] = twice * w[i] - tables.observed[i]
    scatter_occurrences(gradient, layout, tables.occurrence_features, tables.occurrence_tokens,
                        tables.occurrence_values, tables.occurrence_offsets[j], tables.occurrence_offsets[j + 1],
                        tables.node)


def scaled_objective(w, c2, layout, data, tables, gradient):
    """f = -sum_i log P(y_i | x_i) + c2 ||w||² over the usable sentences of ``data``; its gradient is
    written into ``gradient`` (float64 (size,)). ``crf_tables.scaled_applies`` must hold; tables:
    ``crf_tables.ScaledTables`` (its node, block_sums and log_space are overwritten). Three steps: the
    blocks' forward-backward, the log-space one of the sentences it could not rescale (rare, and
    compiled only then), and the gradient."""
    scaled_sums(w, layout, data, tables)
    if tables.log_space.any():
        log_space_sums(w, layout, data, tables)
    return scaled_gradient(w, c2, layout, tables, gradient)


def scaled_sums(w, layout, data, tables):
    """``_block_sums`` of every block, on the threads of ``threads.over_items``, after the tables the
    sentences share."""
    boundary_tables(w, layout, tables)
    over_items(lambda lo, hi: range_sums(w, layout, data, tables, lo, hi), len(tables.block_offsets) - 1,
               chunks_per_thread=8)


@njit(cache=True, nogil=True)
def range_sums(w, layout, data, tables, first, stop):
    """``_block_sums`` of the blocks [first, stop), on borrowed arrays (``borrow.py``)."""
    w, layout, data, tables = borrowed((w, layout, data, tables))
    for k in range(first, stop):
        _block_sums(w, layout, data, tables, k)


def scaled_gradient(w, c2, layout, tables, gradient):
    """The gradient into ``gradient`` (the emission block by the tables' ranges of features, on the
    threads of ``threads.over_items``, then the rest) and f, from the tables ``scaled_sums`` left."""
    over_items(lambda lo, hi: range_gradients(w, c2, layout, tables, lo, hi, gradient), len(tables.feature_ranges) - 1,
               chunks_per_thread=2)
    return finish(w, c2, layout, tables.observed, tables.block_sums, gradient)


@njit(cache=True, nogil=True)
def range_gradients(w, c2, layout, tables, first, stop, gradient):
    """``_emission_gradient`` of the ranges of features [first, stop), on borrowed arrays."""
    w, layout, tables, gradient = borrowed((w, layout, tables, gradient))
    for j in range(first, stop):
        _emission_gradient(w, c2, layout, tables, j, gradient)


@njit(cache=True)
def boundary_tables(w, layout, tables):
    """The tables every sentence shares, into ``tables``: transition (the start row L included) with
    the mask; its exp shifted by its largest entry, tops[0]; end; its exp shifted likewise, tops[1]."""
    n_labels = layout.n_labels
    transition, exp_transition, mask = tables.transition[0], tables.exp_transition, layout.mask_penalty
    top = -np.inf
    for p in range(n_labels + 1):
        row, masked = transition[p], mask[p]
        for c in range(n_labels):
            row[c] = w[layout.off_trans + p * n_labels + c] + masked[c]
            top = max(top, row[c])
    for p in range(n_labels + 1):
        row, out = transition[p], exp_transition[p]
        for c in range(n_labels):
            out[c] = 0.0 if top == -np.inf else np.exp(row[c] - top)
    end, exp_end = tables.end, tables.exp_end
    for c in range(n_labels):
        end[c] = w[layout.off_end + c]
    tables.tops[0], tables.tops[1] = top, _exp_shifted(end, exp_end)


@njit(cache=True)
def finish(w, c2, layout, observed, block_sums, gradient):
    """The gradient past the emission block (the blocks' transition and end sums, in block order,
    minus O, plus 2 c2 w) and f = sum_i log Z_i - w · O + c2 ||w||²."""
    n_labels = layout.n_labels
    size_t = (n_labels + 1) * n_labels
    off_trans, off_end, size = layout.off_trans, layout.off_end, layout.size
    twice = 2.0 * c2
    for i in range(off_trans, size):
        gradient[i] = twice * w[i] - observed[i]
    loss = 0.0
    for k in range(block_sums.shape[0]):
        sums = block_sums[k]
        for i in range(size_t):
            gradient[off_trans + i] += sums[i]
        for c in range(n_labels):
            gradient[off_end + c] += sums[size_t + c]
        loss += sums[size_t + n_labels]
    gold = 0.0
    norm = 0.0
    for i in range(size):
        gold += w[i] * observed[i]
        norm += w[i] * w[i]
    return loss - gold + c2 * norm
