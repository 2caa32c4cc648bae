"""Boosting for reranking (Collins 2000, "Discriminative reranking for natural language parsing";
Collins 2002, the NER reranker): exponential loss, one feature updated per round.

Features are binary, h_k(x) = [x_k != 0]; the base model's score L(x) keeps its own weight α0, fixed
before boosting. A pair p = (gold row, other row) of a group, where the other candidate's target is
below the gold one's, has the margin M_p = F(x_gold) - F(x_other) with F(x) = α0 L(x) + Σ_k α_k h_k(x),
and the loss is Σ_p exp(-M_p). With d_k(p) = h_k(x_gold) - h_k(x_other) in {-1, 0, +1}:

    W+_k = Σ_{p: d_k(p) = +1} exp(-M_p),   W-_k = Σ_{p: d_k(p) = -1} exp(-M_p),   Z = Σ_p exp(-M_p).

Changing α_k by δ gives the loss Z - W+_k - W-_k + W+_k e^-δ + W-_k e^δ; its minimum over δ is
Z - (√W+_k - √W-_k)², so each round picks the k with the largest |√W+_k - √W-_k| (ties to the lowest
id) and sets δ = ½ log((W+_k + εZ) / (W-_k + εZ)), the smoothed step that keeps δ finite. Then every
pair that k touches changes margin by δ d_k(p), and W± of each feature of those pairs moves by the
change of exp(-M_p): a round costs the non-zeros of the touched pairs plus one scan of the features.

Pair differences are CSR: pair_offsets int64 (P + 1,), pair_features int64 (nnz,), pair_signs
float64 (nnz,) in {-1, +1}; feature_offsets / feature_pairs / feature_signs is the same by feature.
"""
from collections import namedtuple

import numpy as np
from numba import njit

# The pairs' feature differences as CSR rows (pair_differences' output): the entries of pair p are
# [pair_offsets[p], pair_offsets[p + 1]), each a feature id and a sign (+1: the gold row's, -1: the other's).
PairRows = namedtuple("PairRows", "pair_offsets pair_features pair_signs")
# The same entries by feature: those of feature f are [feature_offsets[f], feature_offsets[f + 1]),
# each the pair it belongs to and its sign.
FeaturePairs = namedtuple("FeaturePairs", "feature_offsets feature_pairs feature_signs")


@njit(cache=True)
def pair_differences(pair_gold, pair_other, row_offsets, ids, values, first_feature):
    """Sparse d(p) = h(x_gold) - h(x_other) of every pair, over ids >= first_feature (a merge of the
    two rows' ascending ids). Returns (pair_offsets, pair_features, pair_signs)."""
    n_pairs = pair_gold.shape[0]
    pair_offsets = np.zeros(n_pairs + 1, dtype=np.int64)
    capacity = 0
    for p in range(n_pairs):
        capacity += row_offsets[pair_gold[p] + 1] - row_offsets[pair_gold[p]]
        capacity += row_offsets[pair_other[p] + 1] - row_offsets[pair_other[p]]
    features = np.empty(capacity, dtype=np.int64)
    signs = np.empty(capacity, dtype=np.float64)
    n = 0
    for p in range(n_pairs):
        i, i1 = row_offsets[pair_gold[p]], row_offsets[pair_gold[p] + 1]
        j, j1 = row_offsets[pair_other[p]], row_offsets[pair_other[p] + 1]
        while i < i1 or j < j1:
            fi = ids[i] if i < i1 else -1
            fj = ids[j] if j < j1 else -1
            if i < i1 and values[i] == 0.0:
                i += 1
                continue
            if j < j1 and values[j] == 0.0:
                j += 1
                continue
            if fj < 0 or (fi >= 0 and fi < fj):
                if fi >= first_feature:
                    features[n] = fi
                    signs[n] = 1.0
                    n += 1
                i += 1
            elif fi < 0 or fj < fi:
                if fj >= first_feature:
                    features[n] = fj
                    signs[n] = -1.0
                    n += 1
                j += 1
            else:
                i += 1
                j += 1
        pair_offsets[p + 1] = n
    return pair_offsets, features[:n].copy(), signs[:n].copy()


@njit(cache=True)
def boost_rounds(margins, pairs, by_feature, alpha, rounds, epsilon, picks, steps):
    """Run ``rounds`` rounds of feature-wise boosting; updates margins (P,) and alpha (n_weights,) in
    place and writes the chosen feature and its δ of round r to picks[r], steps[r]. Returns the loss
    Z after the last round. pairs : ``PairRows``; by_feature : ``FeaturePairs``."""
    pair_offsets, pair_features, pair_signs = pairs
    feature_offsets, feature_pairs, feature_signs = by_feature
    n_weights = alpha.shape[0]
    w_plus = np.zeros(n_weights)
    w_minus = np.zeros(n_weights)
    loss = np.exp(-margins)
    z = 0.0
    for p in range(margins.shape[0]):
        z += loss[p]
        for e in range(pair_offsets[p], pair_offsets[p + 1]):
            if pair_signs[e] > 0:
                w_plus[pair_features[e]] += loss[p]
            else:
                w_minus[pair_features[e]] += loss[p]
    for r in range(rounds):
        best = -1
        gain = 0.0
        for k in range(n_weights):
            g = abs(np.sqrt(max(w_plus[k], 0.0)) - np.sqrt(max(w_minus[k], 0.0)))
            if g > gain:
                gain = g
                best = k
        if best < 0:
            return z
        delta = 0.5 * np.log((max(w_plus[best], 0.0) + epsilon * z) / (max(w_minus[best], 0.0) + epsilon * z))
        alpha[best] += delta
        picks[r] = best
        steps[r] = delta
        for e in range(feature_offsets[best], feature_offsets[best + 1]):
            p = feature_pairs[e]
            margins[p] += delta * feature_signs[e]
            new = np.exp(-margins[p])
            change = new - loss[p]
            loss[p] = new
            z += change
            for q in range(pair_offsets[p], pair_offsets[p + 1]):
                if pair_signs[q] > 0:
                    w_plus[pair_features[q]] += change
                else:
                    w_minus[pair_features[q]] += change
    return z
