"""MEMM: normalized local distributions, gradients against finite differences, lazy steps against
eager steps, and training through the Tagger."""
import numpy as np
import pytest

from naive import central_difference, eager_sgd, gold_history_probabilities
from structperc._kernels import memm as kernels
from structperc._kernels import scoring
from structperc.tagger import Tagger
from structperc.train import TRAINERS, Problem
from structperc.train.memm import MEMMRule
from test_crf import EMPTY, potentials, small_model
from test_engine import WORDS


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


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_local_distributions_are_normalized_and_match_the_decoder(seed, constrain):
    model, enc = small_model(seed, constrain, scale=2.0)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, _ = potentials(model, enc, s, model.weights)
        local = scoring.local_log_probabilities(emission, transition)
        L = model.n_labels
        np.testing.assert_allclose(np.exp(local[0, L]).sum(), 1.0)
        for t in range(1, b - a):
            for p in range(L):
                if np.isfinite(local[t, p]).any():
                    np.testing.assert_allclose(np.exp(local[t, p]).sum(), 1.0)
        q, gold_log_q = gold_history_probabilities(emission, transition, enc.labels[a:b])
        np.testing.assert_allclose(q.sum(axis=1), 1.0)
        for t in range(b - a):
            p = enc.labels[a + t - 1] if t > 0 else L
            np.testing.assert_allclose(q[t], np.exp(local[t, p]), atol=1e-12)
            assert gold_log_q[t] == pytest.approx(local[t, p, enc.labels[a + t]])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_local_gradient_matches_central_finite_differences(seed, constrain):
    model, enc = small_model(seed, constrain)
    rng = np.random.default_rng(200 + seed)
    w = model.weights
    for s in range(3):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        q, gold_log_q = kernels.memm_sentence(w, 1.0, model.layout(), model.data(enc), a, b)
        assert gold_log_q.sum() == pytest.approx(naive_local_log_likelihood(model, enc, s, w))
        grad = np.zeros_like(w)
        kernels.add_local_gradient(grad, 1.0, model.layout(), model.data(enc), a, b, q, gold_log_q)
        np.testing.assert_allclose(grad, naive_local_gradient(model, enc, s, w), atol=1e-12)
        touched = np.flatnonzero(grad)
        checked = np.concatenate([rng.choice(touched, size=min(12, len(touched)), replace=False),
                                  rng.integers(0, len(w), 3)])
        for i in checked:
            numeric = central_difference(lambda v: naive_local_log_likelihood(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), i


@pytest.mark.parametrize("seed", range(3))
def test_lazy_memm_steps_equal_eager_steps_and_their_average(seed):
    model, enc = small_model(seed, "bio", scale=0.1)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2 = 0.5, 0.3
    end = model.layout().off_end
    model.weights[end: end + model.n_labels] = 0.0
    history = eager_sgd(model.weights.copy(), visits, eta0, l2, lambda s, w: naive_local_gradient(model, enc, s, w))
    for average in (False, True):
        rule = MEMMRule(l2=l2, eta0=eta0, average=average)
        rule.begin(Problem(model, model.data(enc)))
        rule.run(visits[:4])
        rule.run(visits[4:])
        expected = np.mean(history, axis=0) if average else history[-1]
        np.testing.assert_allclose(rule.weights(), expected, atol=1e-10)
        assert not rule.weights()[end: end + model.n_labels].any()  # the end block stays zero


def test_memm_fits_a_separable_problem_with_local_decoding():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in sent] for sent in X]
    tagger = Tagger(templates=["w[0]"], trainer="memm", epochs=8).fit(X, y)
    assert tagger.model_.normalization == "local"
    assert tagger.predict(X) == y
    assert TRAINERS["memm"] is MEMMRule
