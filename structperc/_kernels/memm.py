"""Maximum-entropy Markov model: per-token log-linear classifiers trained on gold histories.

With p = y_{t-1} (L, the start state, at t = 0) and the transition scores of the shared layout,

    P(y_t = c | p, x) = q_t(c) = exp(emission[t, c] + transition[t', p, c]) / Z_t(p)

so the same weights (emission features, the transition block, pair features) define the local
classifier; the end block is unused and stays zero. A sentence contributes
sum_t log q_t(y_t) with the gold p, and its gradient for the weights of label c at token t is
[c == y_t] - q_t(c): on the emission features of t, on transition (p, c) and on the pair
features of t with (p, c). Weights are w = s v, lazily scaled and averaged as in ``crf.py``.
Decoding is the shared Viterbi over ``scoring.local_log_probabilities``.
"""
import numpy as np
from numba import njit, prange

from .crf import EXAMPLES, SCALE, SCALE_SUM, decay, finish_step, learning_rate, sentence_potentials
from .scoring import (
    N_LABELS, OFF_PAIR, OFF_TRANS, decode_sentence, emission_scores, local_log_probabilities, transition_scores,
)


@njit(cache=True)
def gold_history_probabilities(emission, transition, gold):
    """q (n, L): q[t, c] = P(y_t = c | gold y_{t-1}, x), and log q[t, gold_t] (n,).

    A token whose gold label is impossible (-inf score given the gold history) gets log q = -inf."""
    n, n_labels = emission.shape
    per_token = transition.shape[0] > 1
    q = np.zeros((n, n_labels))
    gold_log_q = np.empty(n)
    for t in range(n):
        tt = t if per_token else 0
        p = gold[t - 1] if t > 0 else n_labels
        # log Z_t(p) = logsumexp_c (emission[t, c] + transition[t', p, c])
        top = -np.inf
        for c in range(n_labels):
            q[t, c] = emission[t, c] + transition[tt, p, c]
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
def add_local_gradient(target, scale, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, gold, a, b,
                       q, gold_log_q):
    """target += scale * sum_t grad log q_t(y_t) over tokens [a, b) (tokens with log q = -inf skipped)."""
    n_labels = dims[N_LABELS]
    size = (n_labels + 1) * n_labels
    g = np.empty(n_labels)
    for t in range(b - a):
        if gold_log_q[t] == -np.inf:
            continue
        p = gold[a + t - 1] if t > 0 else n_labels
        for c in range(n_labels):
            g[c] = scale * -q[t, c]
        g[gold[a + t]] += scale
        for k in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            base = feature_ids[k] * n_labels
            for c in range(n_labels):
                target[base + c] += g[c]
        base = dims[OFF_TRANS] + p * n_labels
        for c in range(n_labels):
            target[base + c] += g[c]
        for k in range(pair_offsets[a + t], pair_offsets[a + t + 1]):
            base = dims[OFF_PAIR] + pair_ids[k] * size + p * n_labels
            for c in range(n_labels):
                target[base + c] += g[c]


@njit(cache=True)
def memm_sentence(v, scale, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, gold, a, b, mask_penalty,
                  cand_offsets, cand_labels):
    """q and log q[t, gold_t] of tokens [a, b) under w = scale * v (see ``gold_history_probabilities``)."""
    emission, transition, _ = sentence_potentials(v, scale, dims, feature_offsets, feature_ids, pair_offsets,
                                                  pair_ids, a, b, mask_penalty, cand_offsets, cand_labels)
    return gold_history_probabilities(emission, transition, gold[a:b])


@njit(cache=True)
def memm_epoch(v, u, state, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids, gold,
               order, mask_penalty, cand_offsets, cand_labels, eta0, l2):
    """One SGD step per sentence of ``order`` on sum_t log q_t(y_t) - (λ / 2) ||w||²:
        w <- (1 - η_t λ) w + η_t sum_t grad log q_t(y_t),   η_t = η0 / (1 + λ η0 t).
    v, u, state as in ``crf.crf_epoch``. Returns (sum of log q_t(y_t) over the usable tokens at the
    weights each sentence was visited with, number of tokens skipped because their gold label is
    impossible after the gold history)."""
    log_likelihood = 0.0
    skipped = 0
    for s in order:
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        q, gold_log_q = memm_sentence(v, state[SCALE], dims, feature_offsets, feature_ids, pair_offsets, pair_ids,
                                      gold, a, b, mask_penalty, cand_offsets, cand_labels)
        for t in range(b - a):
            if gold_log_q[t] == -np.inf:
                skipped += 1
            else:
                log_likelihood += gold_log_q[t]
        eta = learning_rate(eta0, l2, state[EXAMPLES])
        decay(v, state, 1.0 - eta * l2)
        x = eta / state[SCALE]
        add_local_gradient(v, x, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, gold, a, b, q, gold_log_q)
        if u.shape[0] > 0:
            add_local_gradient(u, state[SCALE_SUM] * x, dims, feature_offsets, feature_ids, pair_offsets, pair_ids,
                               gold, a, b, q, gold_log_q)
        finish_step(state, 1)
    return log_likelihood, skipped


@njit(cache=True, parallel=True)
def memm_marginals(w, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids, mask_penalty,
                   cand_offsets, cand_labels):
    """Node marginals of the MEMM's chain of local distributions (n_tokens, L) and log P(ŷ | x) of
    each sentence's Viterbi labeling ŷ (n_sentences,).

    marginal[0, c] = P(c | start, x);  marginal[t, c] = sum_p marginal[t-1, p] P(c | p, x).
    A history with no allowed continuation (every label masked) loses its mass."""
    n_labels = dims[N_LABELS]
    n_sentences = sentence_offsets.shape[0] - 1
    node_all = np.zeros((sentence_offsets[-1], n_labels))
    best_log_probability = np.zeros(n_sentences)
    no_extra = np.zeros((0, n_labels))
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        if b == a:
            continue
        emission = emission_scores(w, dims, feature_offsets, feature_ids, a, b, cand_offsets, cand_labels)
        transition = transition_scores(w, dims, pair_offsets, pair_ids, a, b, mask_penalty)
        local = np.exp(local_log_probabilities(emission, transition))
        for c in range(n_labels):
            node_all[a, c] = local[0, n_labels, c]
        for t in range(1, b - a):
            for p in range(n_labels):
                for c in range(n_labels):
                    node_all[a + t, c] += node_all[a + t - 1, p] * local[t, p, c]
        # with LOCAL set, the Viterbi score is sum_t log P(y_t | y_{t-1}, x)
        _, best = decode_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                                  mask_penalty, cand_offsets, cand_labels, no_extra)
        best_log_probability[s] = best
    return node_all, best_log_probability
