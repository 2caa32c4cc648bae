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

from .emission import scatter_features
from .forward_backward import forward_backward, forward_backward_scaled
from .scoring import add_phi, has_missing, known_label_penalty, phi_indices, phi_values, sentence_scores
from .sgd import EXAMPLES, SCALE, SCALE_SUM, decay, finish_step, learning_rate, scaled_scores


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


@njit(cache=True)
def add_expected_counts(target, scale, layout, data, a, b, node, edge):
    """target += scale * E[Φ(x, y')] for tokens [a, b), from node (n, L) and edge (n, L + 1, L)
    marginals as returned by ``forward_backward``."""
    n_labels = layout.n_labels
    feature_offsets, feature_ids = data.feature_offsets, data.feature_ids
    pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    size = (n_labels + 1) * n_labels
    n = b - a
    off_trans = layout.off_trans
    has_pairs = pair_offsets.shape[0] > 0
    for t in range(n):
        scatter_features(target, layout, feature_ids, data.feature_values, feature_offsets[a + t],
                         feature_offsets[a + t + 1], scale, node[t])
        # edge[t, p, c] sits at p * L + c of the transition block and of each pair feature's block
        # (both taken as flat views indexed from 0, as in ``emission.py``)
        flat_edge = edge[t].reshape(size)
        block = target[off_trans: off_trans + size]
        for i in range(size):
            block[i] += scale * flat_edge[i]
        pair_lo = pair_offsets[a + t] if has_pairs else 0
        pair_hi = pair_offsets[a + t + 1] if has_pairs else 0
        for k in range(pair_lo, pair_hi):
            base = layout.off_pair + pair_ids[k] * size
            block = target[base: base + size]
            for i in range(size):
                block[i] += scale * flat_edge[i]
    if n > 0:
        for c in range(n_labels):
            target[layout.off_end + c] += scale * node[n - 1, c]


@njit(cache=True)
def crf_sentence(v, scale, layout, data, a, b):
    """log P(gold | x) of tokens [a, b) under w = scale * v, with node and edge marginals.

    log P is -inf (and the marginals are useless) when the gold labeling is forbidden."""
    emission, transition, end = scaled_scores(v, scale, layout, data, a, b)
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
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
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
    emission += known_label_penalty(data.gold[a:b], layout.n_labels)
    log_z_known, known_node, known_edge = forward_backward_scaled(emission, transition, end)
    if log_z_known == -np.inf or log_z == -np.inf:
        return -np.inf, node, edge, known_node, known_edge
    return log_z_known - log_z, node, edge, known_node, known_edge


@njit(cache=True)
def any_known(gold):
    for t in range(gold.shape[0]):
        if gold[t] >= 0:
            return True
    return False


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
    n_labels = layout.n_labels
    sentence_offsets, gold = data.sentence_offsets, data.gold
    l2 = rate.l2
    log_likelihood = 0.0
    skipped = 0
    n_visits = visit_order.shape[0]
    # the batches' buffers, allocated once for the largest batch (an allocation per sentence costs
    # about as much as a sentence's expected counts)
    most = 0
    for lo in range(0, n_visits, batch_size):
        n_tokens = 0
        for j in range(lo, min(lo + batch_size, n_visits)):
            n_tokens += sentence_offsets[visit_order[j] + 1] - sentence_offsets[visit_order[j]]
        most = max(most, n_tokens)
    node_buffer = np.empty((most, n_labels))
    edge_buffer = np.empty((most, n_labels + 1, n_labels))
    usable = np.zeros(batch_size, dtype=np.bool_)
    partial = np.zeros(batch_size, dtype=np.bool_)
    known_node_all = np.empty((0, n_labels))
    known_edge_all = np.empty((0, n_labels + 1, n_labels))
    for lo in range(0, n_visits, batch_size):
        hi = min(lo + batch_size, n_visits)
        n_tokens = 0
        for j in range(lo, hi):
            n_tokens += sentence_offsets[visit_order[j] + 1] - sentence_offsets[visit_order[j]]
        node_all = node_buffer[:n_tokens]
        edge_all = edge_buffer[:n_tokens]
        usable[:] = False
        partial[:] = False
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[visit_order[j]], sentence_offsets[visit_order[j] + 1]
            if b > a and has_missing(gold[a:b]):
                if not any_known(gold[a:b]):
                    start += b - a
                    continue
                if known_node_all.shape[0] == 0:
                    known_node_all = np.empty((most, n_labels))
                    known_edge_all = np.empty((most, n_labels + 1, n_labels))
                ll, node, edge, known_node, known_edge = crf_partial_sentence(v, state[SCALE], layout, data, a, b)
                if ll == -np.inf:
                    skipped += 1
                else:
                    usable[j - lo] = True
                    partial[j - lo] = True
                    log_likelihood += ll
                    node_all[start: start + b - a] = node
                    edge_all[start: start + b - a] = edge
                    known_node_all[start: start + b - a] = known_node
                    known_edge_all[start: start + b - a] = known_edge
            elif b > a:
                ll, node, edge = crf_sentence(v, state[SCALE], layout, data, a, b)
                if ll == -np.inf:
                    skipped += 1
                else:
                    usable[j - lo] = True
                    log_likelihood += ll
                    node_all[start: start + b - a] = node
                    edge_all[start: start + b - a] = edge
            start += b - a
        eta = learning_rate(rate, state[EXAMPLES])
        decay(v, state, 1.0 - eta * l2 * (hi - lo))
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[visit_order[j]], sentence_offsets[visit_order[j] + 1]
            if usable[j - lo] and partial[j - lo]:
                node = node_all[start: start + b - a]
                edge = edge_all[start: start + b - a]
                known_node = known_node_all[start: start + b - a]
                known_edge = known_edge_all[start: start + b - a]
                x = eta / state[SCALE]
                add_expected_counts(v, x, layout, data, a, b, known_node, known_edge)
                add_expected_counts(v, -x, layout, data, a, b, node, edge)
                if u.shape[0] > 0:
                    y = state[SCALE_SUM] * x
                    add_expected_counts(u, y, layout, data, a, b, known_node, known_edge)
                    add_expected_counts(u, -y, layout, data, a, b, node, edge)
            elif usable[j - lo]:
                phi = phi_indices(layout, data, a, b, gold[a:b])
                values = phi_values(layout, data, a, b, gold[a:b])
                node = node_all[start: start + b - a]
                edge = edge_all[start: start + b - a]
                x = eta / state[SCALE]
                add_phi(v, x, phi, values)
                add_expected_counts(v, -x, layout, data, a, b, node, edge)
                if u.shape[0] > 0:
                    y = state[SCALE_SUM] * x
                    add_phi(u, y, phi, values)
                    add_expected_counts(u, -y, layout, data, a, b, node, edge)
            start += b - a
        finish_step(state, hi - lo)
    return log_likelihood, skipped


@njit(cache=True)
def crf_sentence_marginals(w, layout, data, a, b):
    """Node marginals P(y_t = c | x) (n, L) of tokens [a, b) and log Z(x)."""
    emission, transition, end = sentence_scores(w, layout, data, a, b)
    log_z, node, _ = forward_backward(emission, transition, end)
    return node, log_z
