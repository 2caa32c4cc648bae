"""Cumulative L1 penalty with lazy L2 scaling (elastic net) against an eager naive elastic-net SGD."""
import numpy as np
import pytest

from naive import brute_force_augmented, naive_expected_phi, naive_local_gradient
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.train import Problem
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule
from builders import WORDS


def crf_gradient(model, enc, s, w):
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return model.feature_vector(enc, s, enc.labels[a:b]) - naive_expected_phi(model, enc, s, w)


def hinge_gradient(model, enc, s, w, cost=1.0):
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    guess, value = brute_force_augmented(model, enc, s, w, cost)
    if value - model.score(enc, s, gold, weights=w) > 0 and not np.array_equal(guess, gold):
        return model.feature_vector(enc, s, gold) - model.feature_vector(enc, s, guess)
    return np.zeros_like(w)


def eager_elastic_net(model, enc, visits, eta0, l2, l1, batch_size, gradient):
    """Every step, on every weight: w <- (1 - η λ2 m) w + η g, then Tsuruoka's clipped cumulative
    L1 penalty, with the total U and the received q_i decaying like the weights (real units)."""
    w = model.weights.copy()
    total = 0.0
    received = np.zeros_like(w)
    seen = 0
    for lo in range(0, len(visits), batch_size):
        batch = visits[lo: lo + batch_size]
        grad = sum(gradient(model, enc, s, w) for s in batch)
        eta = eta0 / (1 + l2 * eta0 * seen)
        factor = 1 - eta * l2 * len(batch)
        w = factor * w + eta * grad
        total = factor * total + eta * l1 * len(batch)
        received = factor * received
        for i in range(len(w)):
            z = w[i]
            if z > 0:
                w[i] = max(0.0, z - (total + received[i]))
            elif z < 0:
                w[i] = min(0.0, z + (total - received[i]))
            received[i] += w[i] - z
        seen += len(batch)
    return w


def lazy(rule, model, enc, visits, split=6):
    rule.begin(Problem(model, model.data(enc)))
    rule.run(visits[:split])  # a multiple of the batch size: the steps are the eager ones
    rule.run(visits[split:])
    return rule.weights()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("batch_size", [1, 3])
def test_lazy_l1_crf_equals_eager_elastic_net(seed, batch_size, small_model):
    model, enc = small_model(seed)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2, l1 = 0.3, 0.05, 0.02
    expected = eager_elastic_net(model, enc, visits, eta0, l2, l1, batch_size, crf_gradient)
    got = lazy(CRFRule(l2=l2, eta0=eta0, l1=l1, batch_size=batch_size, average=False), model, enc, visits)
    np.testing.assert_allclose(got, expected, atol=1e-10)
    assert np.sum(got == 0) > 0
    assert np.all((got == 0) == (expected == 0))


@pytest.mark.parametrize("seed", range(3))
def test_lazy_l1_hinge_equals_eager_elastic_net(seed, small_model):
    model, enc = small_model(seed)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2, l1 = 0.5, 0.1, 0.03
    expected = eager_elastic_net(model, enc, visits, eta0, l2, l1, 1, hinge_gradient)
    got = lazy(HingeRule(l2=l2, eta0=eta0, l1=l1, average=False), model, enc, visits)
    np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("seed", range(2))
def test_lazy_l1_memm_equals_eager_elastic_net(seed, small_model):
    model, enc = small_model(seed)
    rng = np.random.default_rng(seed)
    visits = rng.permutation(enc.n_sentences).astype(np.int64)
    eta0, l2, l1 = 0.3, 0.05, 0.02

    def gradient(model, enc, s, w):
        return naive_local_gradient(model, enc, s, w)

    expected = eager_elastic_net(model, enc, visits, eta0, l2, l1, 1, gradient)
    got = lazy(MEMMRule(l2=l2, eta0=eta0, l1=l1, average=False), model, enc, visits)
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_l1_makes_weights_exactly_zero_and_the_saved_model_drops_them(tmp_path):
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(80)]
    y = [[lexicon[w] for w in s] for s in X]
    templates = ["w[0]", "w[-1]", "w[1]", "w[-1]|w[0]"]
    dense = Tagger(templates=templates, trainer="crf", epochs=3, average=False).fit(X, y)
    sparse = Tagger(templates=templates, trainer="crf", epochs=3, average=False, l1=0.05).fit(X, y)
    assert sparse.model_.n_features < dense.model_.n_features
    assert sparse.score(X, y) == 1.0
    emission = sparse.model_.emission_weights()
    assert np.all(np.any(emission != 0, axis=1))  # pruned: every kept feature has a nonzero weight
    sparse.save(tmp_path / "m.npz")
    assert Tagger.load(tmp_path / "m.npz").model_.n_features == sparse.model_.n_features


def test_l1_is_checked_and_only_for_sgd_rules():
    X, y = [["the", "cat"]], [["A", "B"]]
    with pytest.raises(ConfigError, match="l1 must be >= 0"):
        Tagger(templates=["w[0]"], trainer="crf", epochs=1, l1=-1.0).fit(X, y)
    with pytest.raises(ConfigError, match="trainer 'perceptron' does not take option 'l1'"):
        Tagger(templates=["w[0]"], trainer="perceptron", epochs=1, l1=0.1).fit(X, y)
