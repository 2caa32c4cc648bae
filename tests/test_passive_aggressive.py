"""The passive-aggressive rules: the kernel against a dense naive PA with brute-force decoding (the
three variants, both costs, the explicit average), the tiny training set CRFsuite's PA fits,
the options, and (with AROW, the other margin rule) a checkpointed run resumed to the same model."""
import numpy as np
import pytest

from builders import TEMPLATES
from naive import brute_force_best, explicit_average
from structperc import CRF
from structperc._kernels.learn.passive_aggressive import PASettings, PAVectors, pa_update
from structperc._kernels.score import scoring
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.train import Problem
from structperc.train.passive_aggressive import PassiveAggressiveRule


def naive_step_size(variant, c, loss, norm2):
    """τ of PA, PA-I and PA-II (Crammer et al. 2006, section 3)."""
    return {0: loss / norm2, 1: min(c, loss / norm2), 2: loss / (norm2 + 1 / (2 * c))}[variant]


def naive_pa(model, enc, visits, variant, c, error_sensitive):
    """Dense PA from model.weights with brute-force decoding: the weights after every visit and the
    summed loss."""
    w, history, total = model.weights.copy(), [], 0.0
    layout, data = model.layout(), model.data(enc)
    for s in visits:
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission = scoring.emission_scores(w, layout, data, a, b)
        transition = scoring.transition_scores(w, layout, data, a, b)
        guess, _ = brute_force_best(emission, transition, scoring.end_scores(w, layout))
        gold = enc.labels[a:b]
        wrong = int(np.sum(np.asarray(guess) != gold))
        if wrong:
            gold_vector, guess_vector = model.feature_vector(enc, s, gold), model.feature_vector(enc, s, guess)
            d = gold_vector - guess_vector
            loss = w @ guess_vector - w @ gold_vector + (np.sqrt(wrong) if error_sensitive else 1.0)
            w = w + naive_step_size(variant, c, loss, d @ d) * d
            total += loss
        history.append(w.copy())
    return history, total


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant, c, error_sensitive", [(0, 1.0, True), (1, 1.0, True), (1, 0.05, False),
                                                         (2, 0.3, True), (2, 4.0, False)])
def test_pa_epochs_match_dense_naive_pa_and_its_explicit_average(seed, variant, c, error_sensitive, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    history, expected_loss = naive_pa(model, enc, visits, variant, c, error_sensitive)
    rule = PassiveAggressiveRule(pa_type=variant, aggressiveness=c, error_sensitive=error_sensitive)
    rule.begin(Problem(model, model.data(enc)))
    first, second = rule.run(visits[:5]), rule.run(visits[5:])
    assert first["sentence_errors"] + second["sentence_errors"] > 0
    assert first["loss"] + second["loss"] == pytest.approx(expected_loss, rel=1e-9)
    np.testing.assert_allclose(rule.w, history[-1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rule.weights(), explicit_average(history), rtol=1e-9, atol=1e-9)
    assert np.all(rule.delta == 0)


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_one_update_with_repeats_and_values_is_the_pa_step(variant):
    rng = np.random.default_rng(variant)
    n = 10
    w = rng.normal(size=n)
    phi_gold, phi_pred = rng.integers(0, n, 8).astype(np.int64), rng.integers(0, n, 7).astype(np.int64)
    values_gold, values_pred = rng.choice([1.0, 0.5, 3.0], size=8), rng.choice([1.0, 2.0], size=7)
    d = np.bincount(phi_gold, values_gold, n) - np.bincount(phi_pred, values_pred, n)
    loss, c, counter = 2.5, 0.4, 6.0
    tau = naive_step_size(variant, c, loss, d @ d)
    vectors = PAVectors(w.copy(), np.zeros(n), np.zeros(n))
    assert pa_update(vectors, counter, PASettings(variant, c, True), loss, phi_gold, values_gold,
                     phi_pred, values_pred) == pytest.approx(tau)
    np.testing.assert_allclose(vectors.w, w + tau * d, rtol=1e-12)
    np.testing.assert_allclose(vectors.u, counter * tau * d, rtol=1e-12)
    assert not vectors.delta.any()


# ten tokens, two labels; the word w0 is X or Y by its neighbours' labels only
TINY_WORDS = [["w3", "w1", "w3"], ["w0", "w4", "w0"], ["w1", "w3", "w0", "w2"]]
TINY_LABELS = [["X", "Y", "X"], ["Y", "X", "Y"], ["X", "X", "X", "Y"]]


def test_pa_fits_the_tiny_training_set_exactly_with_crfsuites_defaults():
    X = [[{"w": word, "bias": 1.0} for word in sentence] for sentence in TINY_WORDS]
    crf = CRF(algorithm="pa").fit(X, TINY_LABELS)
    assert crf.score(X, TINY_LABELS) == 1.0
    assert crf.training_log_.last_iteration["loss"] == 0.0
    rule = crf.tagger_.model_.metadata["training"]
    assert rule["trainer"] == "pa" and rule["epochs"] == 100


def test_crfsuite_fits_the_tiny_set_as_well(tmp_path):
    pycrfsuite = pytest.importorskip("pycrfsuite")
    trainer = pycrfsuite.Trainer("pa", verbose=False)
    for words, labels in zip(TINY_WORDS, TINY_LABELS):
        trainer.append([{"w": word, "bias": 1.0} for word in words], labels)
    trainer.train(str(tmp_path / "pa.crfsuite"))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "pa.crfsuite"))
    assert [tagger.tag([{"w": word, "bias": 1.0} for word in words]) for words in TINY_WORDS] == TINY_LABELS


def test_pa_options_are_checked():
    X, y = [["the", "cat"]], [["A", "B"]]
    with pytest.raises(ConfigError, match="pa_type must be one of 0, 1, 2"):
        Tagger(templates=["w[0]"], trainer="pa", epochs=1, pa_type=5).fit(X, y)
    with pytest.raises(ConfigError, match="aggressiveness must be > 0"):
        Tagger(templates=["w[0]"], trainer="pa", epochs=1, aggressiveness=0.0).fit(X, y)
    with pytest.raises(ConfigError, match="trainer 'perceptron' does not take option 'aggressiveness'"):
        Tagger(templates=["w[0]"], epochs=1, aggressiveness=1.0).fit(X, y)


@pytest.mark.parametrize("config", [dict(trainer="pa"), dict(trainer="pa", pa_type=2, average=False),
                                    dict(trainer="arow", gamma=0.5)], ids=["pa", "pa2-noavg", "arow"])
def test_a_resumed_run_gives_the_uninterrupted_model(config, tmp_path):
    rng = np.random.default_rng(3)
    X = [[str(w) for w in rng.choice(["a", "b", "c", "d", "e"], size=int(rng.integers(1, 6)))] for _ in range(30)]
    y = [[{"a": "X", "b": "Y"}.get(w, str(rng.choice(["X", "Y"]))) for w in s] for s in X]
    options = dict(templates=["w[0]", "w[-1]"], seed=4, **config)
    Tagger(epochs=4, **options).fit(X, y).save(tmp_path / "whole.npz")
    checkpoint = tmp_path / "run.checkpoint.npz"
    Tagger(epochs=2, **options).fit(X, y, checkpoint=checkpoint)
    Tagger(epochs=4, **options).fit(X, y, resume=checkpoint).save(tmp_path / "resumed.npz")
    assert (tmp_path / "resumed.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
