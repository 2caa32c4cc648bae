"""Real feature values in the kernels against naive references that build Φ(x, y) with values in
plain Python: score, decoding, k-best, marginals, the perceptron, the CRF and MEMM gradients, the
hinge and CRF steps; a binary corpus gives the same results with or without explicit values of 1."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from builders import add_expected_counts, small_model
from structperc._kernels.learn import crf as crf_kernels
from structperc._kernels.learn import memm as memm_kernels
from structperc._kernels.decode.nbest import kbest_corpus
from structperc.features.dicts import EncodedAttributes
from structperc.estimator.marginals import marginals
from structperc.estimator.tagger import Tagger
from structperc.train import Problem
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule
from structperc.train.perceptron import PerceptronRule

SEEDS = st.integers(0, 2**20)


def valued(seed, constrain=None, scale=0.5, values=None):
    """small_model's model and corpus with a random real value (in [-2, 2]) per feature occurrence."""
    model, enc = small_model(seed % 1000, constrain, scale=scale)
    rng = np.random.default_rng(seed)
    if values is None:
        values = rng.uniform(-2, 2, size=len(enc.feature_ids)).astype(np.float32)
    return model, EncodedAttributes(**dataclasses.asdict(enc), feature_values=values)


def naive_phi(model, enc, s, y):
    """Φ(x, y) as a dense vector, from the CSR arrays and the layout formula of ``records.py``."""
    L, layout = model.n_labels, model.layout()
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    vec = np.zeros(len(model.weights))
    prev = L
    for t in range(b - a):
        c = y[t]
        for k in range(enc.feature_offsets[a + t], enc.feature_offsets[a + t + 1]):
            vec[enc.feature_ids[k] * L + c] += float(enc.feature_values[k])
        vec[layout.off_trans + prev * L + c] += 1
        for k in range(enc.pair_offsets[a + t], enc.pair_offsets[a + t + 1]):
            vec[layout.off_pair + (enc.pair_ids[k] * (L + 1) + prev) * L + c] += 1
        prev = c
    vec[layout.off_end + prev] += 1
    return vec


def naive_score(model, enc, s, y, w):
    """w · Φ(x, y), -inf for a labeling the transition mask forbids."""
    prev, penalty = model.n_labels, 0.0
    for c in y:
        penalty += model.mask_penalty[prev, c]
        prev = c
    return float(w @ naive_phi(model, enc, s, y)) + penalty


def labelings(model, enc, s):
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return naive.all_labelings(b - a, model.n_labels)


def naive_log_likelihood(model, enc, s, w):
    scores = [naive_score(model, enc, s, y, w) for y in labelings(model, enc, s)]
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return naive_score(model, enc, s, enc.labels[a:b], w) - float(np.logaddexp.reduce(scores))


def naive_local_log_likelihood(model, enc, s, w):
    """sum_t log softmax_c(w · features(t, y_{t-1}, c))[y_t]: the MEMM's objective."""
    L, layout = model.n_labels, model.layout()
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    total = 0.0
    for t in range(b - a):
        p = gold[t - 1] if t > 0 else L
        row = np.zeros(L)
        for c in range(L):
            for k in range(enc.feature_offsets[a + t], enc.feature_offsets[a + t + 1]):
                row[c] += float(enc.feature_values[k]) * w[enc.feature_ids[k] * L + c]
            row[c] += w[layout.off_trans + p * L + c] + model.mask_penalty[p, c]
            for k in range(enc.pair_offsets[a + t], enc.pair_offsets[a + t + 1]):
                row[c] += w[layout.off_pair + (enc.pair_ids[k] * (L + 1) + p) * L + c]
        total += row[gold[t]] - np.logaddexp.reduce(row)
    return total


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS)
def test_phi_and_score_match_the_naive_feature_vector(seed):
    model, enc = valued(seed)
    rng = np.random.default_rng(seed)
    for s in range(enc.n_sentences):
        y = rng.integers(0, model.n_labels, enc.sentence_offsets[s + 1] - enc.sentence_offsets[s])
        np.testing.assert_allclose(model.feature_vector(enc, s, y), naive_phi(model, enc, s, y), atol=1e-6)
        assert model.score(enc, s, y) == pytest.approx(naive_score(model, enc, s, y, model.weights))


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, constrain=st.sampled_from([None, "bio"]))
def test_decode_and_kbest_match_brute_force(seed, constrain):
    model, enc = valued(seed, constrain)
    predicted, scores = model.decode(enc)
    candidate_offsets, path_offsets, paths, kscores = kbest_corpus(model.weights, model.layout(), model.data(enc), 3)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        ranked = sorted((-naive_score(model, enc, s, y, model.weights), tuple(y)) for y in labelings(model, enc, s))
        ranked = [(-neg, y) for neg, y in ranked if np.isfinite(neg)]
        assert tuple(predicted[a:b]) == ranked[0][1]
        assert scores[s] == pytest.approx(ranked[0][0])
        found = kscores[candidate_offsets[s]: candidate_offsets[s + 1]]
        np.testing.assert_allclose(found, [score for score, _ in ranked[:3]], atol=1e-9)
        first = path_offsets[candidate_offsets[s]]
        assert tuple(paths[first: first + b - a]) == ranked[0][1]


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_crf_marginals_match_brute_force(seed):
    model, enc = valued(seed, "bio")
    model.metadata["training"] = {"trainer": "crf"}
    node, best_log_probability = marginals(model, enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        ys = labelings(model, enc, s)
        scores = np.array([naive_score(model, enc, s, y, model.weights) for y in ys])
        p = np.exp(scores - np.logaddexp.reduce(scores))
        expected = np.zeros((b - a, model.n_labels))
        for y, py in zip(ys, p):
            expected[np.arange(b - a), y] += py
        np.testing.assert_allclose(node[a:b], expected, atol=1e-9)
        assert best_log_probability[s] == pytest.approx(np.log(p.max()))


def naive_perceptron(model, enc, visits):
    w = np.zeros_like(model.weights)
    history = []
    for s in visits:
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        gold = enc.labels[a:b]
        guess = max(labelings(model, enc, s), key=lambda y: (naive_score(model, enc, s, y, w), tuple(-y[::-1])))
        if not np.array_equal(guess, gold):
            w = w + naive_phi(model, enc, s, gold) - naive_phi(model, enc, s, guess)
        history.append(w.copy())
    return history


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_perceptron_matches_naive_perceptron_with_values(seed):
    # values on a grid of 1/4 keep every score exact, so ties break as in the kernel
    rng = np.random.default_rng(seed)
    model, enc = small_model(seed % 1000)
    values = (rng.integers(1, 9, size=len(enc.feature_ids)) / 4).astype(np.float32)
    model, enc = valued(seed, values=values)
    model.weights = np.zeros_like(model.weights)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    history = naive_perceptron(model, enc, visits)
    rule = PerceptronRule(average=True)
    rule.begin(Problem(model, model.data(enc)))
    rule.run(visits)
    np.testing.assert_allclose(rule.w, history[-1], atol=1e-9)
    np.testing.assert_allclose(rule.weights(), naive.explicit_average(history), atol=1e-9)


@pytest.mark.parametrize("rule", ["crf", "memm"])
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS)
def test_gradients_match_finite_differences(rule, seed):
    model, enc = valued(seed, "bio")
    w = model.weights
    layout, data = model.layout(), model.data(enc)
    for s in range(2):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        grad = np.zeros_like(w)
        if rule == "crf":
            value, node, edge = crf_kernels.crf_sentence(w, 1.0, layout, data, a, b)
            grad += model.feature_vector(enc, s, enc.labels[a:b])
            add_expected_counts(grad, -1.0, layout, data, a, b, node, edge)
            objective = naive_log_likelihood
        else:
            q, gold_log_q = memm_kernels.memm_sentence(w, 1.0, layout, data, a, b)
            memm_kernels.add_local_gradient(grad, 1.0, layout, data, a, b, q, gold_log_q)
            value = gold_log_q.sum()
            objective = naive_local_log_likelihood
        assert value == pytest.approx(objective(model, enc, s, w))
        emission_rows = np.unique(enc.feature_ids[enc.feature_offsets[a]: enc.feature_offsets[b]])
        checked = [f * model.n_labels + c for f in emission_rows[:4] for c in range(model.n_labels)]
        for i in checked + [model.layout().off_trans + 1]:
            numeric = naive.central_difference(lambda v: objective(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-5), i


@pytest.mark.parametrize("name", ["crf", "hinge"])
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS)
def test_lazy_sgd_steps_equal_eager_steps_with_values(name, seed):
    """(The eager references take Φ from ``model.feature_vector``, checked above against naive_phi.)"""
    model, enc = valued(seed, "bio", scale=0.1)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    if name == "crf":
        history = naive.naive_eager_sgd(model, enc, visits, 0.5, 0.3, 1)
        learner = CRFRule(l2=0.3, eta0=0.5, batch_size=1, average=False, average_start=0)
    else:
        history = naive.naive_hinge_sgd(model, enc, visits, 0.8, 0.2, 1.0)
        learner = HingeRule(l2=0.2, eta0=0.8, cost=1.0, average=False)
    learner.begin(Problem(model, model.data(enc)))
    learner.run(visits)
    np.testing.assert_allclose(learner.weights(), history[-1], atol=1e-8)


@pytest.mark.parametrize("trainer", ["perceptron", "crf", "memm", "hinge"])
def test_explicit_unit_values_give_the_binary_results(trainer):
    model, enc = small_model(3, "bio")
    ones = EncodedAttributes(**dataclasses.asdict(enc), feature_values=np.ones(len(enc.feature_ids), np.float32))
    rule_class = {"perceptron": PerceptronRule, "crf": CRFRule, "memm": MEMMRule, "hinge": HingeRule}[trainer]
    results = []
    for encoded in (enc, ones):
        model.weights = np.zeros_like(model.weights)
        learner = rule_class() if trainer == "perceptron" else rule_class(eta0=0.3, l2=0.1)
        learner.begin(Problem(model, model.data(encoded)))
        learner.run(np.arange(enc.n_sentences, dtype=np.int64))
        results.append(learner.weights())
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)
    assert len(model.data(enc).feature_values) == 0


@pytest.mark.parametrize("trainer", ["perceptron", "crf"])
def test_a_single_real_feature_learns_a_threshold(trainer):
    """x in [0, 1], label x > 0.5, no other feature: accuracy >= 98 % after 10 epochs."""
    rng = np.random.default_rng(0)

    def sample(n):
        X = [[{"x": float(v)} for v in rng.uniform(0, 1, int(rng.integers(1, 6)))] for _ in range(n)]
        return X, [["hi" if tok["x"] > 0.5 else "lo" for tok in sent] for sent in X]

    X, y = sample(400)
    X_test, y_test = sample(200)
    tagger = Tagger(trainer=trainer, epochs=10).fit(X, y)
    assert tagger.score(X_test, y_test) >= 0.98
