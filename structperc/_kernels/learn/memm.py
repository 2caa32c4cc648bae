"""Maximum-entropy Markov model: per-token log-linear classifiers trained on gold histories.

With p = y_{t-1} (L, the start state, at t = 0) and the transition scores of the shared layout,

    P(y_t = c | p, x) = q_t(c) = exp(emission[t, c] + transition[t', p, c]) / Z_t(p)

so the same weights (emission features, the transition block, pair features) define the local
classifier; the end block is unused and stays zero. A sentence contributes
sum_t log q_t(y_t) with the gold p, and its gradient for the weights of label c at token t is
[c == y_t] - q_t(c): on the emission features of t, on transition (p, c) and on the pair
features of t with (p, c). Weights are w = s v, lazily scaled and averaged as in ``sgd.py``.
Decoding is the shared Viterbi over ``scoring.local_log_probabilities``.

Second order (Ratnaparkhi's tagger) adds the block of the second-order perceptron, with
pp = y_{t-2} (L before the sentence):

    P(y_t = c | pp, p, x) = q_t(c) = exp(emission[t, c] + transition[t', p, c] + transition2[pp, p, c]) / Z_t(pp, p)

and the gradient [c == y_t] - q_t(c) also goes to transition2 (pp, p, c). Decoding is the
second-order Viterbi with each history's -log Z_t(pp, p) (``scoring.local_context_scores2``).

Partial labels: a local classifier is trained on the tokens whose label and whole history
(y_{t-1}, and y_{t-2} at order 2) are known; a token with an unlabelled position among them
(gold label id -1) contributes nothing. Unlike the global rules there is no latent completion: the
MEMM's objective is a sum of per-token terms, and only the fully observed ones are kept.
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..score.emission import scatter_features
from ..score.scoring import local_context_scores2, local_log_probabilities, second_order_scores, sentence_scores
from ..decode.second_order import history_block
from .sgd import EXAMPLES, SCALE, SCALE_SUM, Update, add_block, decay, finish_step, learning_rate, scaled_scores


@njit(cache=True)
def history_known(gold, t, order):
    """True when gold[t] and the ``order`` labels before it (inside the sentence) are known (>= 0)."""
    for k in range(order + 1):
        if t - k >= 0 and gold[t - k] < 0:
            return False
    return True


@njit(cache=True)
def gold_history_probabilities2(emission, transition, second, scale, gold):
    """q (n, L): q[t, c] = P(y_t = c | gold history, x), and log q[t, gold_t] (n,).

    The score of c is emission[t, c] + transition[t', p, c] (p = y_{t-1}, L at t = 0), plus
    scale * second[(pp (L + 1) + p) L + c] (pp = y_{t-2}, L at t < 2) when ``second``, the flat
    second-order block, is not empty. A token whose gold label is impossible (-inf score given
    the gold history) gets log q = -inf."""
    n, n_labels = emission.shape
    per_token = transition.shape[0] > 1
    second_order = second.shape[0] > 0
    q = np.zeros((n, n_labels))
    gold_log_q = np.empty(n)
    for t in range(n):
        tt = t if per_token else 0
        p = gold[t - 1] if t > 0 else n_labels
        if not history_known(gold, t, 2 if second_order else 1):
            gold_log_q[t] = -np.inf
            continue
        # log Z_t = logsumexp_c of the scores of c
        top = -np.inf
        for c in range(n_labels):
            q[t, c] = emission[t, c] + transition[tt, p, c]
        if second_order:
            pp = gold[t - 2] if t > 1 else n_labels
            base = (pp * (n_labels + 1) + p) * n_labels
            for c in range(n_labels):
                q[t, c] += scale * second[base + c]
        for c in range(n_labels):
            if q[t, c] > top:
                top = q[t, c]
        gold_score = q[t, gold[t]]
        if top == -np.inf or gold_score == -np.inf:
            q[t] = 0.0
            gold_log_q[t] = -np.inf
            continue
        total = 0.0
        for c in range(n_labels):
            q[t, c] = np.exp(q[t, c] - top)
            total += q[t, c]
        for c in range(n_labels):
            q[t, c] /= total
        gold_log_q[t] = gold_score - top - np.log(total)
    return q, gold_log_q


@njit(cache=True)
def add_local_gradient(target, scale, layout, data, a, b, q, gold_log_q):
    """target += scale * sum_t grad log q_t(y_t) over tokens [a, b) (tokens with log q = -inf skipped);
    order 1 or 2 after ``layout``."""
    add_local_gradients(Update(target, target[:0], scale, 0.0), layout, data, a, b, q, gold_log_q)


@njit(cache=True)
def add_local_gradients(update, layout, data, a, b, q, gold_log_q):
    """``add_local_gradient`` of v with scale x and, when u is not empty, of u with scale y
    (``sgd.Update``), in one pass."""
    v, u, x, y = update
    n_labels = layout.n_labels
    pair_offsets, pair_ids, gold = data.pair_offsets, data.pair_ids, data.gold
    size = (n_labels + 1) * n_labels
    g = np.empty(n_labels)
    has_pairs = pair_offsets.shape[0] > 0
    for t in range(b - a):
        if gold_log_q[t] == -np.inf:
            continue
        p = gold[a + t - 1] if t > 0 else n_labels
        for c in range(n_labels):
            g[c] = -q[t, c]
        g[gold[a + t]] += 1.0
        scatter_features(v, layout, data, a + t, x, g, u, y)
        add_block(v, u, layout.off_trans + p * n_labels, x, y, g)
        pair_lo = pair_offsets[a + t] if has_pairs else 0
        pair_hi = pair_offsets[a + t + 1] if has_pairs else 0
        for k in range(pair_lo, pair_hi):
            add_block(v, u, layout.off_pair + pair_ids[k] * size + p * n_labels, x, y, g)
        if layout.order == 2:
            pp = gold[a + t - 2] if t > 1 else n_labels
            add_block(v, u, layout.off_trans2 + (pp * (n_labels + 1) + p) * n_labels, x, y, g)


@njit(cache=True)
def memm_sentence(v, scale, layout, data, a, b):
    """q and log q[t, gold_t] of tokens [a, b) under w = scale * v (see ``gold_history_probabilities2``;
    the second-order block is empty at order 1)."""
    emission, transition, _ = scaled_scores(v, scale, layout, data, a, b)
    return gold_history_probabilities2(emission, transition, v[layout.off_trans2: layout.size], scale,
                                       data.gold[a:b])


@njit(cache=True, nogil=True)  # releases the GIL: shards train in parallel threads
def memm_epoch(v, u, state, layout, data, visit_order, rate):
    """One SGD step per sentence of ``visit_order`` on sum_t log q_t(y_t) - (λ / 2) ||w||²:
        w <- (1 - η_t λ) w + η_t sum_t grad log q_t(y_t),   η_t = η0 / (1 + λ η0 t).
    v, u, state, rate as in ``crf.crf_epoch``. Returns (sum of log q_t(y_t) over the usable tokens at the
    weights each sentence was visited with, number of tokens skipped because their gold label is
    impossible after the gold history)."""
    v, u, state, layout, data, visit_order = borrowed((v, u, state, layout, data, visit_order))
    sentence_offsets = data.sentence_offsets
    log_likelihood = 0.0
    skipped = 0
    for s in visit_order:
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        q, gold_log_q = memm_sentence(v, state[SCALE], layout, data, a, b)
        for t in range(b - a):
            if gold_log_q[t] == -np.inf:
                if history_known(data.gold[a:b], t, layout.order):
                    skipped += 1
            else:
                log_likelihood += gold_log_q[t]
        eta = learning_rate(rate, state[EXAMPLES])
        decay(v, state, 1.0 - eta * rate.l2)
        x = eta / state[SCALE]
        add_local_gradients(Update(v, u, x, state[SCALE_SUM] * x), layout, data, a, b, q, gold_log_q)
        finish_step(state, 1)
    return log_likelihood, skipped


@njit(cache=True, no_cpython_wrapper=True)
def chain_marginals2(emission, transition2, context, cand_offsets, cand_labels):
    """Node marginals (n, L) of the second-order chain of local distributions, over the candidates:

        alpha[t, p, c] = P(y_{t-1} = p, y_t = c | x) = sum_pp alpha[t-1, pp, p] P(c | pp, p, x)

    with p = pp = L (start) at t = 0, pp = L at t = 1 and log P(c | pp, p, x) = emission[t, c]
    + transition2[t', pp, p, c] + context[t, pp, p] (``scoring.local_context_scores2``);
    marginal[t, c] = sum_p alpha[t, p, c]. A history with no allowed continuation loses its mass."""
    n, n_labels = emission.shape
    start = n_labels
    per_token = transition2.shape[0] > 1
    alpha = np.zeros((n, n_labels + 1, n_labels))
    node = np.zeros((n, n_labels))
    for t in range(n):
        tt = t if per_token else 0
        base_h, n_h, base_i, n_i, base_j, n_j = history_block(cand_offsets, t)
        for h in range(n_h):
            pp = cand_labels[base_h + h] if t >= 2 else start
            for i in range(n_i):
                p = cand_labels[base_i + i] if t >= 1 else start
                mass = alpha[t - 1, pp, p] if t >= 1 else 1.0
                shift = context[t, pp, p]
                if mass == 0.0 or shift == -np.inf:
                    continue
                row = transition2[tt, pp, p]
                for j in range(n_j):
                    c = cand_labels[base_j + j]
                    m = mass * np.exp(emission[t, c] + row[c] + shift)
                    alpha[t, p, c] += m
                    node[t, c] += m
    return node


@njit(cache=True, no_cpython_wrapper=True)
def memm_sentence_marginals(w, layout, data, a, b):
    """Node marginals (n, L) of the MEMM's chain of local distributions over tokens [a, b):

        marginal[0, c] = P(c | start, x);  marginal[t, c] = sum_p marginal[t-1, p] P(c | p, x)

    at order 1; the forward recursion over the pairs (y_{t-1}, y_t) of ``chain_marginals2`` at
    order 2. A history with no allowed continuation (every label masked) loses its mass."""
    n_labels = layout.n_labels
    emission, transition, _ = sentence_scores(w, layout, data, a, b)
    if layout.order == 2:
        transition2, offsets, labels = second_order_scores(w, layout, data, a, b, transition)
        context = local_context_scores2(emission, transition2, offsets, labels)
        return chain_marginals2(emission, transition2, context, offsets, labels)
    node = np.zeros((b - a, n_labels))
    local = np.exp(local_log_probabilities(emission, transition))
    for c in range(n_labels):
        node[0, c] = local[0, n_labels, c]
    for t in range(1, b - a):
        for p in range(n_labels):
            for c in range(n_labels):
                node[t, c] += node[t - 1, p] * local[t, p, c]
    return node
