"""Linear-chain CRF by stochastic gradient ascent on the lazily scaled weights of ``sgd.py``.

A sentence contributes log P(y | x) = w · Φ(x, y) - log Z(x) to the objective

    sum_i log P(y_i | x_i) - (N λ / 2) ||w||²        (λ per example, N examples)

and its gradient is Φ(x, y) - E_{P(y' | x)}[Φ(x, y')] - λ w. The expectation needs only the
forward-backward marginals: an emission feature f of value x_f at token t (x_f = 1 for a binary
corpus) contributes x_f P(y_t = c | x) to the weight of (f, c) (``emission.py``); a transition (p, c)
and a pair feature at t contribute P(y_{t-1} = p, y_t = c | x); the end block contributes
P(y_{n-1} = c | x).

Partial labels (Tsuboi et al. 2008). When some tokens are unlabelled (gold label id -1), a
sentence contributes the log-likelihood of its known labels, marginalizing over the rest:

    log P(y_K | x) = log Z_K(x) - log Z(x),   Z_K(x) = sum over y consistent with y_K of exp(w · Φ(x, y))

Z_K is the forward-backward of the same tables with -inf at every label other than a known one
(``scoring.known_label_penalty``). Its gradient is E_{P(y' | y_K, x)}[Φ(x, y')] - E_{P(y' | x)}[Φ(x, y')]:
the constrained marginals take the place of Φ(x, y). With every label known, Z_K = exp(w · Φ(x, y))
and the two agree. A sentence with no known label contributes nothing (log P = 0, zero gradient).
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..score.emission import scatter_features
from ..decode.forward_backward import forward_backward_candidates, forward_backward_scaled
from ..score.scoring import has_missing, known_label_penalty, sentence_candidates, sentence_scores
from .sgd import EXAMPLES, SCALE, SCALE_SUM, Update, add_block, decay, finish_step, learning_rate, scaled_scores


@njit(cache=True)
def labeling_score(emission, transition, end, y):
    """score(y) = sum_t emission[t, y_t] + transition[t', y_{t-1}, y_t] + end[y_{n-1}]."""
    n, n_labels = emission.shape
    per_token = transition.shape[0] > 1
    total = 0.0
    prev = n_labels
    for t in range(n):
        total += emission[t, y[t]] + transition[t if per_token else 0, prev, y[t]]
        prev = y[t]
    return total + end[prev]


@njit(cache=True, inline="always")
def chain_marginals(layout, data, a, b, emission, transition, end):
    """(log Z, node, edge) of tokens [a, b): forward-backward over the candidates of each token when
    the data has a tag dictionary (|C_t| |C_{t-1}| per token), the rescaled one over every label
    pair otherwise."""
    return _chain_marginals(data.dictionary, layout, data, a, b, emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def _chain_marginals(dictionary, layout, data, a, b, emission, transition, end):
    """``chain_marginals`` on the type of the data's flag: without a tag dictionary (None), numba
    compiles no candidate code."""
    if dictionary is not None:
        if data.cand_offsets.shape[0] > 0:
            offsets, labels = sentence_candidates(layout, data, a, b)
            return forward_backward_candidates(emission, transition, end, offsets, labels)
    return forward_backward_scaled(emission, transition, end)


@njit(cache=True)
def add_edge_block(v, u, base, x, y, edge):
    """``sgd.add_block`` of the (L + 1, L) block ``edge``, entry (p, c) at base + p * L + c
    (indexed, not through a flat view: numba's reshape compiles its error messages' string code)."""
    rows, n_labels = edge.shape
    for p in range(rows):
        for c in range(n_labels):
            v[base + p * n_labels + c] += x * edge[p, c]
    if u.shape[0] > 0:
        for p in range(rows):
            for c in range(n_labels):
                u[base + p * n_labels + c] += y * edge[p, c]


@njit(cache=True)
def add_counts(update, layout, data, a, b, node, edge):
    """v += x * C and, when u is not empty, u += y * C (``sgd.Update``), in one pass, where C are the counts of
    tokens [a, b) weighted by node (n, L) and edge (n, L + 1, L): an emission feature f at token t
    counts node[t, c] for (f, c), as in E[Φ(x, y')] = C(marginals) and Φ(x, y) = C(one-hot gold). On
    borrowed arrays (``borrow.py``): a row of node and edge is taken per token."""
    update, layout, data, node, edge = borrowed((update, layout, data, node, edge))
    v, u, x, y = update
    n_labels = layout.n_labels
    pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    size = (n_labels + 1) * n_labels
    n = b - a
    has_pairs = pair_offsets.shape[0] > 0
    for t in range(n):
        scatter_features(v, layout, data, a + t, x, node[t], u, y)
        # edge[t, p, c] sits at p * L + c of the transition block and of each pair feature's block
        add_edge_block(v, u, layout.off_trans, x, y, edge[t])
        pair_lo = pair_offsets[a + t] if has_pairs else 0
        pair_hi = pair_offsets[a + t + 1] if has_pairs else 0
        for k in range(pair_lo, pair_hi):
            add_edge_block(v, u, layout.off_pair + pair_ids[k] * size, x, y, edge[t])
    if n > 0:
        add_block(v, u, layout.off_end, x, y, node[n - 1])


@njit(cache=True)
def subtract_gold(node, edge, gold):
    """node[t, y_t] -= 1, edge[t, y_{t-1}, y_t] -= 1 (y_{-1} the start row L): marginals minus the
    one-hot gold labeling, whose counts are E[Φ(x, y')] - Φ(x, y)."""
    prev = node.shape[1]
    for t in range(gold.shape[0]):
        node[t, gold[t]] -= 1.0
        edge[t, prev, gold[t]] -= 1.0
        prev = gold[t]


@njit(cache=True, inline="always")
def crf_sentence(v, scale, layout, data, a, b):
    """log P(gold | x) of tokens [a, b) under w = scale * v, with node and edge marginals.

    log P is -inf (and the marginals are useless) when the gold labeling is forbidden."""
    emission, transition, end = scaled_scores(v, scale, layout, data, a, b)
    log_z, node, edge = chain_marginals(layout, data, a, b, emission, transition, end)
    gold_score = labeling_score(emission, transition, end, data.gold[a:b])
    if gold_score == -np.inf or log_z == -np.inf:
        return -np.inf, node, edge
    return gold_score - log_z, node, edge


@njit(cache=True)
def crf_partial_sentence(v, scale, layout, data, a, b):
    """log P(known labels | x) = log Z_K - log Z of tokens [a, b) under w = scale * v, with the free
    node and edge marginals and the constrained ones (conditioned on the known labels).

    log P is -inf when no labeling is consistent with the known labels."""
    emission, transition, end = scaled_scores(v, scale, layout, data, a, b)
    log_z, node, edge = chain_marginals(layout, data, a, b, emission, transition, end)
    emission += known_label_penalty(data.gold[a:b], layout.n_labels)
    log_z_known, known_node, known_edge = chain_marginals(layout, data, a, b, emission, transition, end)
    if log_z_known == -np.inf or log_z == -np.inf:
        return -np.inf, node, edge, known_node, known_edge
    return log_z_known - log_z, node, edge, known_node, known_edge


@njit(cache=True)
def any_known(gold):
    for t in range(gold.shape[0]):
        if gold[t] >= 0:
            return True
    return False


@njit(cache=True, inline="always")
def step_counts(v, scale, layout, data, a, b):
    """(log P, node, edge) of tokens [a, b) under w = scale * v for an SGD step: node and edge are
    the marginals minus their target, the one-hot gold or, with partial labels, the marginals
    constrained to the known labels. The step x (Φ(x, y) - E[Φ(x, y')]) is then -x C(node, edge)
    (``add_counts``). log P is -inf when the gold labeling (the known labels) is forbidden, and 0
    with empty node and edge when no label is known (nothing to learn). The data's ``partial`` flag
    is set by ``records.with_partial_labels``."""
    return _step_counts(data.partial, v, scale, layout, data, a, b)


@njit(cache=True)
def _step_counts(partial, v, scale, layout, data, a, b):
    """``step_counts`` on the type of the data's flag: without unlabelled tokens (None), numba
    compiles no partial-label code."""
    gold = data.gold[a:b]
    if partial is not None:
        if has_missing(gold):
            if not any_known(gold):
                return 0.0, np.empty((0, layout.n_labels)), np.empty((0, layout.n_labels + 1, layout.n_labels))
            ll, node, edge, known_node, known_edge = crf_partial_sentence(v, scale, layout, data, a, b)
            if ll != -np.inf:
                node -= known_node
                edge -= known_edge
            return ll, node, edge
    ll, node, edge = crf_sentence(v, scale, layout, data, a, b)
    if ll != -np.inf:
        subtract_gold(node, edge, gold)
    return ll, node, edge


@njit(cache=True)
def keep_counts(node_buffer, edge_buffer, start, node, edge):
    """Copy a sentence's node (n, L) and edge (n, L + 1, L) counts into the batch's buffers from
    row ``start`` (indexed: a slice assignment compiles its shape error's string code, a few
    seconds of the CRF's first run)."""
    for t in range(node.shape[0]):
        for c in range(node.shape[1]):
            node_buffer[start + t, c] = node[t, c]
        for p in range(edge.shape[1]):
            for c in range(edge.shape[2]):
                edge_buffer[start + t, p, c] = edge[t, p, c]


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def crf_epoch(v, u, state, layout, data, visit_order, rate, batch_size):
    """SGD on sum_i log P(y_i | x_i) - (N λ / 2) ||w||² over the sentences ``visit_order``.

    v, u : float64 (n_weights,) the scaled weights and averaging accumulator (u of length 0: no
    averaging); state : float64 (4,), see ``sgd.SCALE``..``sgd.STEPS``; rate : ``sgd.Rate``.
    Each mini-batch of ``batch_size`` sentences takes its marginals at the same weights, then
    makes one step
        w <- (1 - η_t λ m) w + η_t sum_batch (Φ(x, y) - E[Φ(x, y')]),   η_t = η0 / (1 + λ η0 t)
    with t the examples seen before the step. Returns (sum of log P(y | x) at the weights each
    sentence was visited with, number of sentences skipped because their gold labeling is forbidden).
    """
    v, u, state, layout, data, visit_order = borrowed((v, u, state, layout, data, visit_order))
    n_labels = layout.n_labels
    sentence_offsets = data.sentence_offsets
    log_likelihood = 0.0
    skipped = 0
    n_visits = visit_order.shape[0]
    # a batch of several sentences keeps their step counts until its step, in buffers allocated
    # once for the largest batch (an allocation per sentence costs about as much as its counts);
    # a batch of one steps at once
    most = 0
    if batch_size > 1:
        for lo in range(0, n_visits, batch_size):
            n_tokens = 0
            for j in range(lo, min(lo + batch_size, n_visits)):
                n_tokens += sentence_offsets[visit_order[j] + 1] - sentence_offsets[visit_order[j]]
            most = max(most, n_tokens)
    node_buffer = np.empty((most, n_labels))
    edge_buffer = np.empty((most, n_labels + 1, n_labels))
    usable = np.zeros(batch_size, dtype=np.bool_)
    for lo in range(0, n_visits, batch_size):
        hi = min(lo + batch_size, n_visits)
        if hi - lo == 1:
            a, b = sentence_offsets[visit_order[lo]], sentence_offsets[visit_order[lo] + 1]
            ll, node, edge = step_counts(v, state[SCALE], layout, data, a, b) if b > a else (
                0.0, node_buffer[:0], edge_buffer[:0])
            if ll == -np.inf:
                skipped += 1
            else:
                log_likelihood += ll
            eta = learning_rate(rate, state[EXAMPLES])
            decay(v, state, 1.0 - eta * rate.l2)
            if ll != -np.inf and node.shape[0] > 0:
                x = eta / state[SCALE]
                add_counts(Update(v, u, -x, -state[SCALE_SUM] * x), layout, data, a, b, node, edge)
            finish_step(state, 1)
            continue
        usable[:] = False
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[visit_order[j]], sentence_offsets[visit_order[j] + 1]
            if b > a:
                ll, node, edge = step_counts(v, state[SCALE], layout, data, a, b)
                if ll == -np.inf:
                    skipped += 1
                elif node.shape[0] > 0:
                    usable[j - lo] = True
                    log_likelihood += ll
                    keep_counts(node_buffer, edge_buffer, start, node, edge)
            start += b - a
        eta = learning_rate(rate, state[EXAMPLES])
        decay(v, state, 1.0 - eta * rate.l2 * (hi - lo))
        x = eta / state[SCALE]
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[visit_order[j]], sentence_offsets[visit_order[j] + 1]
            if usable[j - lo]:
                add_counts(Update(v, u, -x, -state[SCALE_SUM] * x), layout, data, a, b,
                           node_buffer[start: start + b - a], edge_buffer[start: start + b - a])
            start += b - a
        finish_step(state, hi - lo)
    return log_likelihood, skipped


@njit(cache=True, no_cpython_wrapper=True)
def crf_sentence_marginals(w, layout, data, a, b):
    """Node marginals P(y_t = c | x) (n, L) of tokens [a, b) and log Z(x)."""
    emission, transition, end = sentence_scores(w, layout, data, a, b)
    return _sentence_marginals(data.dictionary, layout, data, a, b, emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def _sentence_marginals(dictionary, layout, data, a, b, emission, transition, end):
    """``crf_sentence_marginals`` on the type of the data's flag (no candidate code without a tag
    dictionary)."""
    if dictionary is not None:
        if data.cand_offsets.shape[0] > 0:
            offsets, labels = sentence_candidates(layout, data, a, b)
            log_z, node, _ = forward_backward_candidates(emission, transition, end, offsets, labels)
            return node, log_z
    log_z, node, _ = forward_backward_scaled(emission, transition, end)
    return node, log_z
