"""Naive reference implementations: enumerate every labeling, sum explicitly.

They follow the score conventions documented in ``structperc._kernels`` and exist only to check the
kernels on small random cases.
"""
import itertools

import numpy as np

from structperc._kernels.decode.cost import hamming_cost
from structperc._kernels.learn.memm import gold_history_probabilities2
from builders import potentials


def all_labelings(n, n_labels):
    return [np.array(y, dtype=np.int64) for y in itertools.product(range(n_labels), repeat=n)]


def sequence_score(emission, transition, end, y):
    n_labels = emission.shape[1]
    per_token = transition.shape[0] > 1
    total = 0.0
    prev = n_labels
    for t, c in enumerate(y):
        total += emission[t, c] + transition[t if per_token else 0, prev, c]
        prev = c
    return total + end[y[-1]]


def ranked_labelings(emission, transition, end):
    """All labelings with finite score, best first; ties ordered by the reversed sequence."""
    n, n_labels = emission.shape
    scored = []
    for y in all_labelings(n, n_labels):
        s = sequence_score(emission, transition, end, y)
        if np.isfinite(s):
            scored.append((-s, tuple(y[::-1]), y))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(y, -neg) for neg, _, y in scored]


def brute_force_best(emission, transition, end):
    return ranked_labelings(emission, transition, end)[0]


def brute_force_log_z(emission, transition, end):
    n, n_labels = emission.shape
    scores = [sequence_score(emission, transition, end, y) for y in all_labelings(n, n_labels)]
    return float(np.logaddexp.reduce(scores))


def brute_force_marginals(emission, transition, end):
    """node (n, L) and edge (n, L+1, L) marginals; edge[t, L, c] is P(y_0 = c) at t = 0."""
    n, n_labels = emission.shape
    log_z = brute_force_log_z(emission, transition, end)
    node = np.zeros((n, n_labels))
    edge = np.zeros((n, n_labels + 1, n_labels))
    for y in all_labelings(n, n_labels):
        p = np.exp(sequence_score(emission, transition, end, y) - log_z)
        prev = n_labels
        for t, c in enumerate(y):
            node[t, c] += p
            edge[t, prev, c] += p
            prev = c
    return node, edge


def explicit_average(weight_history):
    """Mean of the weight vectors after each training example (Collins 2002, the averaged parameters)."""
    return np.mean(np.stack(weight_history), axis=0)


def hamming_augmented_best(emission, transition, end, gold, cost):
    """argmax_y score(y) + cost * #{t: y_t != gold_t}, ties by the reversed sequence; (y, value)."""
    n, n_labels = emission.shape
    scored = []
    for y in all_labelings(n, n_labels):
        s = sequence_score(emission, transition, end, y) + cost * np.sum(y != gold)
        if np.isfinite(s):
            scored.append((-s, tuple(y[::-1]), y))
    scored.sort(key=lambda item: (item[0], item[1]))
    return scored[0][2], -scored[0][0]


def all_candidates(n, n_labels):
    """Candidate CSR (cand_offsets (n + 1,), cand_labels (n * L,)) allowing every label at every token."""
    return (np.arange(n + 1, dtype=np.int64) * n_labels,
            np.tile(np.arange(n_labels, dtype=np.int64), n))


def add_hamming_cost(emission, gold, cost):
    """A new array: emission plus ``cost`` at every label except the gold one of each token (the
    kernels' ``hamming_cost``); decoding it maximizes score(y) + cost * #{t: y_t != gold_t}."""
    return emission + hamming_cost(gold, emission.shape[1], cost)


def gold_history_probabilities(emission, transition, gold):
    """First-order q[t, c] = P(y_t = c | gold y_{t-1}, x) and log q[t, gold_t], by the kernel
    with an empty second-order block."""
    return gold_history_probabilities2(emission, transition, np.zeros(0), 1.0, gold)


def candidate_sets(cand_offsets, cand_labels):
    """Per-token candidate lists from the CSR pair (cand_offsets, cand_labels)."""
    return [list(cand_labels[cand_offsets[t]:cand_offsets[t + 1]]) for t in range(len(cand_offsets) - 1)]


def sequence_score2(emission, transition2, end, y):
    """Second-order score: sum_t emission[t, y_t] + transition2[t', y_{t-2}, y_{t-1}, y_t] + end[y_{n-1}],
    with the start symbol L standing for y_{-1} and y_{-2}."""
    n_labels = emission.shape[1]
    per_token = transition2.shape[0] > 1
    total = 0.0
    prev2, prev = n_labels, n_labels
    for t, c in enumerate(y):
        total += emission[t, c] + transition2[t if per_token else 0, prev2, prev, c]
        prev2, prev = prev, c
    return total + end[y[-1]]


def ranked_labelings2(emission, transition2, end, cand_offsets=None, cand_labels=None):
    """All labelings inside the candidate sets (every label when None) with finite second-order
    score, best first; ties ordered by the reversed sequence."""
    n, n_labels = emission.shape
    if cand_offsets is None:
        sets = [range(n_labels)] * n
    else:
        sets = candidate_sets(cand_offsets, cand_labels)
    scored = []
    for labels in itertools.product(*sets):
        y = np.array(labels, dtype=np.int64)
        s = sequence_score2(emission, transition2, end, y)
        if np.isfinite(s):
            scored.append((-s, tuple(y[::-1]), y))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(y, -neg) for neg, _, y in scored]


def template_keys(templates, values, radix, rare, sentence_offsets, left=1, right=2):
    """Keys of every template at every token, straight from the formula in ``structperc.features.encode``:
    key = j + n_templates * (v_1 + R_1 * (v_2 + ...)), -1 where a rare-only template meets a
    frequent word. ``values`` maps field -> value ids per token, ``radix`` field -> R."""
    n_templates = len(templates)
    out = []
    for s in range(len(sentence_offsets) - 1):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        for i in range(a, b):
            row = []
            for j, t in enumerate(templates):
                if t.rare_only and not rare[i]:
                    row.append(-1)
                    continue
                inner, scale = 0, 1
                for field, offset in t.parts:
                    at = i + offset
                    v = left if at < a else right if at >= b else int(values[field][at])
                    inner += scale * v
                    scale *= radix[field]
                row.append(j + n_templates * inner)
            out.append(row)
    return out


def central_difference(f, w, i, h=1e-5):
    """(f(w + h e_i) - f(w - h e_i)) / 2h: the derivative of f along weight i."""
    plus, minus = w.copy(), w.copy()
    plus[i] += h
    minus[i] -= h
    return (f(plus) - f(minus)) / (2 * h)


def eager_sgd(w, visits, eta0, l2, gradient):
    """Weights after each step w <- (1 - η_t λ) w + η_t gradient(s, w), η_t = η0 / (1 + λ η0 t),
    taken eagerly in the order of ``visits``."""
    history = []
    for t, s in enumerate(visits):
        eta = eta0 / (1 + l2 * eta0 * t)
        w = (1 - eta * l2) * w + eta * gradient(s, w)
        history.append(w)
    return history


# ---------------------------------------------------------------- references over a LinearChainModel


def naive_log_likelihood(model, enc, s, w):
    emission, transition, end = potentials(model, enc, s, w)
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return sequence_score(emission, transition, end, enc.labels[a:b]) - brute_force_log_z(emission, transition, end)


def naive_expected_phi(model, enc, s, w):
    """sum_y P(y | x) Φ(x, y) by enumerating every labeling."""
    emission, transition, end = potentials(model, enc, s, w)
    log_z = brute_force_log_z(emission, transition, end)
    expected = np.zeros_like(w)
    for y in all_labelings(emission.shape[0], model.n_labels):
        score = sequence_score(emission, transition, end, y)
        if np.isfinite(score):
            expected += np.exp(score - log_z) * model.feature_vector(enc, s, y)
    return expected


def naive_eager_sgd(model, enc, visits, eta0, l2, batch_size):
    """w <- (1 - η λ m) w + η sum_batch (Φ - E[Φ]) with brute-force expectations and an O(#weights)
    decay every step; returns the weight vector after each step."""
    w = model.weights.copy()
    history = []
    seen = 0
    for lo in range(0, len(visits), batch_size):
        batch = visits[lo: lo + batch_size]
        grad = np.zeros_like(w)
        for s in batch:
            a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
            grad += model.feature_vector(enc, s, enc.labels[a:b]) - naive_expected_phi(model, enc, s, w)
        eta = eta0 / (1 + l2 * eta0 * seen)
        w = (1 - eta * l2 * len(batch)) * w + eta * grad
        seen += len(batch)
        history.append(w.copy())
    return history


def naive_local_log_likelihood(model, enc, s, w):
    """sum_t log softmax_c(emission[t, c] + transition[t', y_{t-1}, c])[y_t] with numpy."""
    emission, transition, _ = potentials(model, enc, s, w)
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    total = 0.0
    for t in range(b - a):
        p = gold[t - 1] if t > 0 else model.n_labels
        row = emission[t] + transition[t if transition.shape[0] > 1 else 0, p]
        total += row[gold[t]] - np.logaddexp.reduce(row)
    return total


def local_feature_vector(model, enc, token, p, c):
    """Indicator vector of the features of label c after p at a token: emission, transition, pair."""
    L, layout = model.n_labels, model.layout()
    vec = np.zeros_like(model.weights)
    for f in enc.feature_ids[enc.feature_offsets[token]: enc.feature_offsets[token + 1]]:
        vec[f * L + c] += 1
    vec[layout.off_trans + p * L + c] += 1
    for g in enc.pair_ids[enc.pair_offsets[token]: enc.pair_offsets[token + 1]]:
        vec[layout.off_pair + (g * (L + 1) + p) * L + c] += 1
    return vec


def naive_local_gradient(model, enc, s, w):
    """sum_t sum_c ([c == y_t] - q_t(c)) * features(t, y_{t-1}, c)."""
    emission, transition, _ = potentials(model, enc, s, w)
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    grad = np.zeros_like(w)
    for t in range(b - a):
        p = gold[t - 1] if t > 0 else model.n_labels
        row = emission[t] + transition[t if transition.shape[0] > 1 else 0, p]
        q = np.exp(row - np.logaddexp.reduce(row))
        for c in range(model.n_labels):
            grad += ((c == gold[t]) - q[c]) * local_feature_vector(model, enc, a + t, p, c)
    return grad


def brute_force_augmented(model, enc, s, w, cost):
    """argmax_y score(y) + cost * Hamming(gold, y) over every labeling (ties: reversed sequence)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    emission, transition, end = potentials(model, enc, s, w)
    augmented = emission + cost * (np.arange(model.n_labels)[None, :] != gold[:, None])
    return ranked_labelings(augmented, transition, end)[0]


def naive_hinge_sgd(model, enc, visits, eta0, l2, cost):
    """Eager subgradient steps with brute-force loss-augmented decoding; weights after each step."""
    w = model.weights.copy()
    history = []
    for t, s in enumerate(visits):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        gold = enc.labels[a:b]
        guess, value = brute_force_augmented(model, enc, s, w, cost)
        loss = value - model.score(enc, s, gold, weights=w)
        eta = eta0 / (1 + l2 * eta0 * t)
        w = (1 - eta * l2) * w
        if loss > 0 and not np.array_equal(guess, gold):
            w = w + eta * (model.feature_vector(enc, s, gold) - model.feature_vector(enc, s, guess))
        history.append(w.copy())
    return history


def brute_force_phi_best(model, enc, s, w):
    """argmax over every labeling y of sentence s of w · Φ(x, y) plus the transition mask of
    ``model`` (-inf on a forbidden (y_{t-1}, y_t), the start included), straight from the model's
    Φ at any label order; ties ordered by the reversed sequence. Returns (y, score)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    start = model.n_labels
    scored = []
    for y in all_labelings(b - a, model.n_labels):
        score = float(w[model.phi(enc, s, y)].sum())
        for prev, c in zip([start, *y[:-1]], y):
            score += model.mask_penalty[prev, c]
        if np.isfinite(score):
            scored.append((-score, tuple(y[::-1]), y))
    scored.sort(key=lambda item: (item[0], item[1]))
    return scored[0][2], -scored[0][0]


def naive_memm_log_probability(model, enc, s, w, y):
    """sum_t log P(y_t | y_{t-1}, x) of a first-order MEMM, each P a softmax over the labels c of
    w · f(x, t, y_{t-1}, c) (emission, transition and pair features) plus the transition mask."""
    a = enc.sentence_offsets[s]
    prev, total = model.n_labels, 0.0
    for t, label in enumerate(y):
        scores = np.array([w @ local_feature_vector(model, enc, a + t, prev, c) + model.mask_penalty[prev, c]
                           for c in range(model.n_labels)])
        total += scores[label] - np.logaddexp.reduce(scores)
        prev = label
    return total


def labelings_in(sets):
    """Every labeling whose token t takes a label of sets[t] (lists of label ids)."""
    return [np.array(y, dtype=np.int64) for y in itertools.product(*sets)]


def ranked_labelings_in(emission, transition, end, sets):
    """``ranked_labelings`` over the labelings inside the candidate sets only."""
    scored = []
    for y in labelings_in(sets):
        s = sequence_score(emission, transition, end, y)
        if np.isfinite(s):
            scored.append((-s, tuple(y[::-1]), y))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [(y, -neg) for neg, _, y in scored]


def marginals_in(emission, transition, end, sets):
    """(log Z, node (n, L), edge (n, L+1, L)) summed over the labelings inside the candidate sets."""
    n, n_labels = emission.shape
    labelings = labelings_in(sets)
    scores = np.array([sequence_score(emission, transition, end, y) for y in labelings])
    log_z = float(np.logaddexp.reduce(scores))
    node = np.zeros((n, n_labels))
    edge = np.zeros((n, n_labels + 1, n_labels))
    for y, s in zip(labelings, scores):
        p = np.exp(s - log_z) if np.isfinite(s) else 0.0
        prev = n_labels
        for t, c in enumerate(y):
            node[t, c] += p
            edge[t, prev, c] += p
            prev = c
    return log_z, node, edge
