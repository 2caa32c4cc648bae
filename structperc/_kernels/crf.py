"""Linear-chain CRF by stochastic gradient ascent, and the lazily scaled weight vector that the
CRF, MEMM and hinge-loss kernels share.

A sentence contributes log P(y | x) = w · Φ(x, y) - log Z(x) to the objective

    sum_i log P(y_i | x_i) - (N λ / 2) ||w||²        (λ per example, N examples)

and its gradient is Φ(x, y) - E_{P(y' | x)}[Φ(x, y')] - λ w. The expectation needs only the
forward-backward marginals: an emission feature f at token t contributes P(y_t = c | x) to
w[f * L + c]; a transition (p, c) and a pair feature at t contribute P(y_{t-1} = p, y_t = c | x);
the end block contributes P(y_{n-1} = c | x).
"""
import numpy as np
from numba import njit, prange

from .forward_backward import forward_backward, forward_backward_scaled
from .scoring import (
    N_LABELS, OFF_END, OFF_PAIR, OFF_TRANS, add_phi, decode_sentence, emission_scores, end_scores,
    phi_indices, transition_scores,
)

# Lazy L2 scaling (CRFsuite's l2sgd, Bottou's crfsgd). An SGD step on one example (or a
# mini-batch of m examples) is
#     w <- (1 - η λ m) w + η g            g = sum over the batch of the loss gradient, sparse.
# The decay touches every weight; the gradient only |Φ(x)| of them. Store w = s · v with a scalar s:
#     s <- s (1 - η λ m)                  O(1): the decay
#     v[i] <- v[i] + η g[i] / s           O(|Φ(x)|): now s · v[i] gains exactly η g[i]
# Scores are computed from v and multiplied by s. When s falls below 1e-9, fold it into v
# (v <- s v, s <- 1) before 1 / s overflows; that step is O(#weights) but rare.
#
# Lazy averaging of the scaled weights (averaged SGD). Let s_k, v_k be the state after step k and
# w_k = s_k v_k the real weights (k = 1..T). With δ_k the change of v at step k, v_T = v_0 + sum_k δ_k,
# and with the running sum S_k = s_1 + ... + s_k,
#     sum_{k=1..T} w_k = sum_k s_k v_0 + sum_k δ_k (s_k + ... + s_T)
#                      = S_T v_0 + sum_k δ_k (S_T - S_{k-1})  =  S_T v_T - u,   u = sum_k S_{k-1} δ_k.
# So keep u beside v: every change v[i] += x made during step k also does u[i] += S_{k-1} x, and
# the average is (S_T v_T - u) / T. A rescale by s multiplies v by s and divides all later s_k
# (so S too) by s; S_T v_T is unchanged and u needs no change.
#
# ``state`` holds the scalars: s, S (the sum of s over the finished steps), the number of
# examples seen (t of the learning rate) and the number of steps (T).
SCALE, SCALE_SUM, EXAMPLES, STEPS = range(4)
RESCALE_BELOW = 1e-9


def new_state():
    """The scalars of a freshly started lazily scaled vector (s = 1, nothing seen)."""
    return np.array([1.0, 0.0, 0.0, 0.0])


@njit(cache=True)
def rescale(v, state):
    """Fold s into v: v <- s v, S <- S / s, s <- 1 (the real weights do not change)."""
    s = state[SCALE]
    for i in range(v.shape[0]):
        v[i] *= s
    state[SCALE_SUM] /= s
    state[SCALE] = 1.0


@njit(cache=True)
def decay(v, state, factor):
    """w <- factor * w in O(1) (factor > 0)."""
    state[SCALE] *= factor
    if state[SCALE] < RESCALE_BELOW:
        rescale(v, state)


@njit(cache=True)
def finish_step(state, n_examples):
    """Close a step: S += s (the averaging sum), count the step and its examples."""
    state[SCALE_SUM] += state[SCALE]
    state[STEPS] += 1.0
    state[EXAMPLES] += n_examples


@njit(cache=True)
def add_phi_scaled(v, u, state, amount, phi):
    """w += amount * Φ for the indices phi, through v (and u when averaging)."""
    x = amount / state[SCALE]
    add_phi(v, x, phi)
    if u.shape[0] > 0:
        add_phi(u, state[SCALE_SUM] * x, phi)


def restart_average(u, state):
    """Average only the steps from now on: u <- 0, S <- 0, T <- 0 (the sum then starts at v_now)."""
    u[:] = 0.0
    state[SCALE_SUM] = 0.0
    state[STEPS] = 0.0


@njit(cache=True)
def real_weights(v, u, state, average):
    """s v, or the average (S v - u) / T of the real weights over the steps so far."""
    if average and state[STEPS] > 0:
        return (state[SCALE_SUM] * v - u) / state[STEPS]
    return state[SCALE] * v


@njit(cache=True)
def learning_rate(eta0, l2, examples):
    # η_t = η0 / (1 + λ η0 t) = 1 / (λ (t + t0)) with t0 = 1 / (λ η0)
    return eta0 / (1.0 + l2 * eta0 * examples)


# ---------------------------------------------------------------------------------- the CRF


@njit(cache=True)
def sentence_potentials(v, scale, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                        mask_penalty, cand_offsets, cand_labels):
    """emission (n, L), transition (m, L + 1, L) and end (L,) scores of w = scale * v.

    Masked entries stay -inf (scale > 0)."""
    emission = emission_scores(v, dims, feature_offsets, feature_ids, a, b, cand_offsets, cand_labels)
    transition = transition_scores(v, dims, pair_offsets, pair_ids, a, b, mask_penalty)
    end = end_scores(v, dims)
    if scale != 1.0:
        emission *= scale
        transition *= scale
        end *= scale
    return emission, transition, end


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
def add_expected_counts(target, scale, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                        node, edge):
    """target += scale * E[Φ(x, y')] for tokens [a, b), from node (n, L) and edge (n, L + 1, L)
    marginals as returned by ``forward_backward``."""
    n_labels = dims[N_LABELS]
    size = (n_labels + 1) * n_labels
    n = b - a
    off_trans = dims[OFF_TRANS]
    for t in range(n):
        for k in range(feature_offsets[a + t], feature_offsets[a + t + 1]):
            base = feature_ids[k] * n_labels
            for c in range(n_labels):
                target[base + c] += scale * node[t, c]
        # edge[t, p, c] sits at p * L + c of the transition block and of each pair feature's block
        for p in range(n_labels + 1):
            for c in range(n_labels):
                target[off_trans + p * n_labels + c] += scale * edge[t, p, c]
        for k in range(pair_offsets[a + t], pair_offsets[a + t + 1]):
            base = dims[OFF_PAIR] + pair_ids[k] * size
            for p in range(n_labels + 1):
                for c in range(n_labels):
                    target[base + p * n_labels + c] += scale * edge[t, p, c]
    if n > 0:
        for c in range(n_labels):
            target[dims[OFF_END] + c] += scale * node[n - 1, c]


@njit(cache=True)
def crf_sentence(v, scale, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, gold, a, b,
                 mask_penalty, cand_offsets, cand_labels):
    """log P(gold | x) of tokens [a, b) under w = scale * v, with node and edge marginals.

    log P is -inf (and the marginals are useless) when the gold labeling is forbidden."""
    emission, transition, end = sentence_potentials(v, scale, dims, feature_offsets, feature_ids, pair_offsets,
                                                    pair_ids, a, b, mask_penalty, cand_offsets, cand_labels)
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
    gold_score = labeling_score(emission, transition, end, gold[a:b])
    if gold_score == -np.inf or log_z == -np.inf:
        return -np.inf, node, edge
    return gold_score - log_z, node, edge


@njit(cache=True)
def crf_epoch(v, u, state, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids,
              gold, order, mask_penalty, cand_offsets, cand_labels, eta0, l2, batch_size):
    """SGD on sum_i log P(y_i | x_i) - (N λ / 2) ||w||² over the sentences ``order``.

    v, u : float64 (n_weights,) the scaled weights and averaging accumulator (u of length 0: no
    averaging); state : float64 (4,), see ``SCALE``..``STEPS``. Each mini-batch of ``batch_size``
    sentences takes its marginals at the same weights, then makes one step
        w <- (1 - η_t λ m) w + η_t sum_batch (Φ(x, y) - E[Φ(x, y')]),   η_t = η0 / (1 + λ η0 t)
    with t the examples seen before the step. Returns (sum of log P(y | x) at the weights each
    sentence was visited with, number of sentences skipped because their gold labeling is forbidden).
    """
    n_labels = dims[N_LABELS]
    log_likelihood = 0.0
    skipped = 0
    n_visits = order.shape[0]
    for lo in range(0, n_visits, batch_size):
        hi = min(lo + batch_size, n_visits)
        n_tokens = 0
        for j in range(lo, hi):
            n_tokens += sentence_offsets[order[j] + 1] - sentence_offsets[order[j]]
        node_all = np.empty((n_tokens, n_labels))
        edge_all = np.empty((n_tokens, n_labels + 1, n_labels))
        usable = np.zeros(hi - lo, dtype=np.bool_)
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[order[j]], sentence_offsets[order[j] + 1]
            if b > a:
                ll, node, edge = crf_sentence(v, state[SCALE], dims, feature_offsets, feature_ids, pair_offsets,
                                              pair_ids, gold, a, b, mask_penalty, cand_offsets, cand_labels)
                if ll == -np.inf:
                    skipped += 1
                else:
                    usable[j - lo] = True
                    log_likelihood += ll
                    node_all[start: start + b - a] = node
                    edge_all[start: start + b - a] = edge
            start += b - a
        eta = learning_rate(eta0, l2, state[EXAMPLES])
        decay(v, state, 1.0 - eta * l2 * (hi - lo))
        start = 0
        for j in range(lo, hi):
            a, b = sentence_offsets[order[j]], sentence_offsets[order[j] + 1]
            if usable[j - lo]:
                phi = phi_indices(dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b, gold[a:b])
                node = node_all[start: start + b - a]
                edge = edge_all[start: start + b - a]
                x = eta / state[SCALE]
                add_phi(v, x, phi)
                add_expected_counts(v, -x, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                                    node, edge)
                if u.shape[0] > 0:
                    y = state[SCALE_SUM] * x
                    add_phi(u, y, phi)
                    add_expected_counts(u, -y, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                                        node, edge)
            start += b - a
        finish_step(state, hi - lo)
    return log_likelihood, skipped


@njit(cache=True, parallel=True)
def crf_marginals(w, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids,
                  mask_penalty, cand_offsets, cand_labels):
    """Node marginals P(y_t = c | x) of every token (n_tokens, L) and log P(ŷ | x) of each sentence's
    Viterbi labeling ŷ (n_sentences,)."""
    n_labels = dims[N_LABELS]
    n_sentences = sentence_offsets.shape[0] - 1
    node_all = np.zeros((sentence_offsets[-1], n_labels))
    best_log_probability = np.zeros(n_sentences)
    no_extra = np.zeros((0, n_labels))
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        if b == a:
            continue
        emission, transition, end = sentence_potentials(w, 1.0, dims, feature_offsets, feature_ids, pair_offsets,
                                                        pair_ids, a, b, mask_penalty, cand_offsets, cand_labels)
        log_z, node, _ = forward_backward(emission, transition, end)
        node_all[a:b] = node
        _, best = decode_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                                  mask_penalty, cand_offsets, cand_labels, no_extra)
        best_log_probability[s] = best - log_z if log_z > -np.inf else -np.inf
    return node_all, best_log_probability
