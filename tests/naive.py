"""Naive reference implementations: enumerate every labeling, sum explicitly.

They follow the score conventions documented in ``structperc._kernels`` and exist only to check the
kernels on small random cases.
"""
import itertools

import numpy as np


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
