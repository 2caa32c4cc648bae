"""Balanced Winnow: the lazy log-weight kernel against an eager naive Winnow; strict options."""
import numpy as np
import pytest

from naive import brute_force_best, explicit_average
from structperc._kernels.score import scoring
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.train import Problem, make_rule
from structperc.train.winnow import WinnowRule
from builders import TEMPLATES, WORDS


def naive_winnow(model, enc, visits, alpha, beta, theta):
    """Eager Balanced Winnow: dense w⁺, w⁻ multiplied per net count; brute-force decoding.
    Returns the history of w⁺ - w⁻ after each visit."""
    plus = np.full_like(model.weights, theta)
    minus = np.full_like(model.weights, theta)
    history = []
    for s in visits:
        w = plus - minus
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission = scoring.emission_scores(w, model.layout(), model.data(enc), a, b)
        transition = scoring.transition_scores(w, model.layout(), model.data(enc), a, b)
        end = scoring.end_scores(w, model.layout())
        guess, _ = brute_force_best(emission, transition, end)
        gold = enc.labels[a:b]
        if not np.array_equal(guess, gold):
            d = model.feature_vector(enc, s, gold) - model.feature_vector(enc, s, guess)
            for i in np.nonzero(d)[0]:
                if d[i] > 0:
                    plus[i] *= alpha ** d[i]
                    minus[i] *= beta ** d[i]
                else:
                    plus[i] *= beta ** -d[i]
                    minus[i] *= alpha ** -d[i]
        history.append(plus - minus)
    return history


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha,beta,theta", [(1.1, 0.9, 1.0), (1.7, 0.6, 0.3), (1.45, 0.8, 2.0)])
def test_lazy_winnow_matches_eager_naive_winnow_and_explicit_average(seed, alpha, beta, theta, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES)
    model.weights = np.zeros_like(model.weights)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    history = naive_winnow(model, enc, visits, alpha, beta, theta)
    assert any(np.any(h != 0) for h in history)
    rule = WinnowRule(promotion=alpha, demotion=beta, initial_weight=theta)
    rule.begin(Problem(model, model.data(enc)))
    rule.run(visits[:5])
    rule.run(visits[5:])
    np.testing.assert_allclose(rule.w, history[-1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rule.weights(), explicit_average(history), rtol=1e-9, atol=1e-9)
    assert np.all(rule.net == 0)
    model.weights = np.zeros_like(model.weights)
    plain = WinnowRule(promotion=alpha, demotion=beta, initial_weight=theta, average=False)
    plain.begin(Problem(model, model.data(enc)))
    plain.run(visits)
    np.testing.assert_allclose(plain.final_weights(), history[-1], rtol=1e-9, atol=1e-9)


def test_winnow_learns_a_separable_problem():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in s] for s in X]
    tagger = Tagger(templates=["w[0]"], trainer="winnow", epochs=10).fit(X, y)
    assert tagger.score(X, y) == 1.0
    assert tagger.history_[-1].stats["sentence_errors"] == 0


def test_winnow_options_are_strict_and_checked():
    with pytest.raises(ConfigError, match="trainer 'perceptron' does not take option 'promotion'"):
        make_rule("perceptron", promotion=1.5)
    with pytest.raises(ConfigError, match="trainer 'winnow' does not take option 'l2'"):
        make_rule("winnow", l2=0.1)
    X, y = [["the", "cat"]], [["A", "B"]]
    with pytest.raises(ConfigError, match="demotion must be in"):
        Tagger(templates=["w[0]"], trainer="winnow", epochs=1, demotion=1.5).fit(X, y)
