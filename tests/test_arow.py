"""AROW: the kernel against a dense naive AROW with brute-force decoding, its state for checkpoints
and mixing, and its options."""
import numpy as np
import pytest

from builders import TEMPLATES, WORDS
from naive import brute_force_best
from structperc._kernels.learn.arow import ArowVectors, arow_update
from structperc._kernels.score import scoring
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.train import Problem, make_rule
from structperc.train.arow import ArowRule


def naive_arow_step(mean, variance, gold_vector, guess_vector, wrong, gamma):
    """One AROW step on dense vectors (Crammer, Kulesza & Dredze 2009, as CRFsuite structures it):
    the loss of the guess, then the mean and the diagonal covariance updated. New arrays."""
    d = gold_vector - guess_vector
    loss = mean @ guess_vector - mean @ gold_vector + wrong
    alpha = loss / (gamma + np.sum(d * d * variance))
    return mean + alpha * variance * d, 1.0 / (1.0 / variance + d * d / gamma), loss


def naive_arow(model, enc, visits, variance, gamma):
    """Dense AROW from model.weights with brute-force decoding; (mean, variance, summed loss)."""
    mean, sigma, total = model.weights.copy(), np.full_like(model.weights, variance), 0.0
    layout, data = model.layout(), model.data(enc)
    for s in visits:
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission = scoring.emission_scores(mean, layout, data, a, b)
        transition = scoring.transition_scores(mean, layout, data, a, b)
        guess, _ = brute_force_best(emission, transition, scoring.end_scores(mean, layout))
        gold = enc.labels[a:b]
        wrong = int(np.sum(np.asarray(guess) != gold))
        if wrong:
            mean, sigma, loss = naive_arow_step(mean, sigma, model.feature_vector(enc, s, gold),
                                                model.feature_vector(enc, s, guess), wrong, gamma)
            total += loss
    return mean, sigma, total


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("variance, gamma", [(1.0, 1.0), (0.3, 2.5), (2.0, 0.1)])
def test_arow_epochs_match_dense_naive_arow(seed, variance, gamma, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    expected_mean, expected_variance, expected_loss = naive_arow(model, enc, visits, variance, gamma)
    rule = ArowRule(variance=variance, gamma=gamma)
    rule.begin(Problem(model, model.data(enc)))
    first, second = rule.run(visits[:7]), rule.run(visits[7:])
    assert first["sentence_errors"] + second["sentence_errors"] > 0
    np.testing.assert_allclose(rule.final_weights(), expected_mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rule.variances, expected_variance, rtol=1e-9, atol=1e-12)
    assert first["loss"] + second["loss"] == pytest.approx(expected_loss, rel=1e-9)
    assert np.all(rule.delta == 0)


@pytest.mark.parametrize("seed", range(5))
def test_one_update_with_repeated_entries_and_real_values_matches_the_formula(seed):
    rng = np.random.default_rng(seed)
    n = 12
    mean, variance = rng.normal(size=n), rng.uniform(0.2, 2.0, size=n)
    # entries repeat within and across the two labelings; some cancel exactly
    phi_gold = rng.integers(0, n, 9).astype(np.int64)
    phi_pred = np.concatenate([phi_gold[:3], rng.integers(0, n, 6)]).astype(np.int64)
    values_gold = rng.choice([1.0, 0.5, 2.0], size=9)
    values_pred = np.concatenate([values_gold[:3], rng.choice([1.0, 0.25], size=6)])
    gamma, loss = float(rng.uniform(0.1, 3.0)), float(rng.uniform(0.5, 4.0))
    gold_vector = np.bincount(phi_gold, weights=values_gold, minlength=n)
    guess_vector = np.bincount(phi_pred, weights=values_pred, minlength=n)
    d = gold_vector - guess_vector
    alpha = loss / (gamma + np.sum(d * d * variance))
    expected_mean, expected_variance = mean + alpha * variance * d, 1.0 / (1.0 / variance + d * d / gamma)
    vectors = ArowVectors(mean.copy(), variance.copy(), np.zeros(n))
    changed = arow_update(vectors, gamma, loss, phi_gold, values_gold, phi_pred, values_pred)
    assert changed == np.count_nonzero(d)
    np.testing.assert_allclose(vectors.w, expected_mean, rtol=1e-12)
    np.testing.assert_allclose(vectors.variance, expected_variance, rtol=1e-12)
    assert np.all(vectors.delta == 0)
    # binary features: empty value arrays mean 1 everywhere
    vectors = ArowVectors(mean.copy(), variance.copy(), np.zeros(n))
    arow_update(vectors, gamma, loss, phi_gold, np.zeros(0), phi_pred, np.zeros(0))
    d = np.bincount(phi_gold, minlength=n) - np.bincount(phi_pred, minlength=n)
    alpha = loss / (gamma + np.sum(d * d * variance))
    np.testing.assert_allclose(vectors.w, mean + alpha * variance * d, rtol=1e-12)


def test_a_saved_state_continues_as_the_uninterrupted_run(fitted_model):
    rng = np.random.default_rng(7)
    model, enc = fitted_model(rng, TEMPLATES)
    start = model.weights.copy()
    visits = [rng.permutation(enc.n_sentences).astype(np.int64) for _ in range(3)]
    whole = ArowRule(gamma=0.5)
    whole.begin(Problem(model, model.data(enc)))
    for order in visits:
        whole.run(order)
    expected = whole.weights()
    model.weights = start.copy()
    first = ArowRule(gamma=0.5)
    first.begin(Problem(model, model.data(enc)))
    first.run(visits[0])
    state = {k: np.array(v) for k, v in first.save_state().items()}
    model.weights = start.copy()
    second = ArowRule(gamma=0.5)
    second.load_state(Problem(model, model.data(enc)), state)
    for order in visits[1:]:
        second.run(order)
    np.testing.assert_array_equal(second.weights(), expected)
    mean, scale = second.raw_weights()
    assert scale == 1.0 and mean is second.w
    second.reset_weights(np.zeros_like(mean))
    assert not second.w.any() and np.all(second.variances <= 1.0)


def test_arow_learns_a_separable_problem():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in s] for s in X]
    tagger = Tagger(templates=["w[0]"], trainer="arow", epochs=10, gamma=0.5).fit(X, y)
    assert tagger.score(X, y) == 1.0
    assert tagger.history_[-1].stats["sentence_errors"] == 0
    assert tagger.history_[0].stats["loss"] > 0 == tagger.history_[-1].stats["loss"]


def test_arow_options_are_strict_and_checked():
    with pytest.raises(ConfigError, match="trainer 'perceptron' does not take option 'gamma'"):
        make_rule("perceptron", gamma=1.0)
    with pytest.raises(ConfigError, match="trainer 'arow' does not take option 'average'"):
        make_rule("arow", average=True)
    X, y = [["the", "cat"]], [["A", "B"]]
    with pytest.raises(ConfigError, match="gamma must be > 0"):
        Tagger(templates=["w[0]"], trainer="arow", epochs=1, gamma=0.0).fit(X, y)
    with pytest.raises(ConfigError, match="variance must be > 0"):
        Tagger(templates=["w[0]"], trainer="arow", epochs=1, variance=-1.0).fit(X, y)
