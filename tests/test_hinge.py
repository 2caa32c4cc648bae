"""Structured hinge loss: loss-augmented Viterbi against brute force, and subgradient steps against a
naive eager implementation."""
import numpy as np
import pytest

from naive import ranked_labelings
from structperc._kernels.hinge import loss_augmented_decode
from structperc._kernels import scoring
from structperc.encode import FeatureEncoder
from structperc.model import LinearChainModel
from structperc.tagger import Tagger, _as_corpus
from structperc.train import TRAINERS, Problem
from structperc.train.hinge import HingeRule
from test_crf import EMPTY, potentials, small_model
from test_engine import WORDS


def brute_force_augmented(model, enc, s, w, cost):
    """argmax_y score(y) + cost * Hamming(gold, y) over every labeling (ties: reversed sequence)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    emission, transition, end = potentials(model, enc, s, w)
    augmented = emission + cost * (np.arange(model.n_labels)[None, :] != gold[:, None])
    return ranked_labelings(augmented, transition, end)[0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_loss_augmented_viterbi_is_brute_force_argmax(seed, constrain):
    model, enc = small_model(seed, constrain)
    scale, cost = 0.37, 1.5
    v = model.weights / scale
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        path, value = loss_augmented_decode(v, scale, model.layout(), model.data(enc), a, b, cost)
        best, best_value = brute_force_augmented(model, enc, s, model.weights, cost)
        assert value == pytest.approx(best_value)
        np.testing.assert_array_equal(path, best)


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


@pytest.mark.parametrize("seed", range(3))
def test_lazy_hinge_steps_equal_eager_steps_and_their_average(seed):
    model, enc = small_model(seed, "bio", scale=0.05)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    eta0, l2, cost = 0.8, 0.2, 1.0
    history = naive_hinge_sgd(model, enc, visits, eta0, l2, cost)
    for average in (False, True):
        rule = HingeRule(l2=l2, eta0=eta0, cost=cost, average=average)
        rule.begin(Problem(model, model.data(enc)))
        rule.run(visits[:5])
        counters = rule.run(visits[5:])
        expected = np.mean(history, axis=0) if average else history[-1]
        np.testing.assert_allclose(rule.weights(), expected, atol=1e-10)
    assert counters["violations"] > 0


def test_zero_loss_example_makes_no_update_but_a_violation_does():
    corpus = _as_corpus([["the", "cat", "sat", "on"]], [["A", "B", "A", "C"]])
    encoder = FeatureEncoder(["w[0]"])
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder)
    n = enc.n_tokens
    # each token has its own word feature: its gold label scores 10, so every wrong token costs
    # 10 > cost and the gold labeling wins by a margin above its Hamming loss
    separating = np.zeros_like(model.weights)
    separating[model.phi(enc, 0, enc.labels)[:-1]] = 10.0
    separating[model.layout().off_trans:] = 0.0
    eta0, l2 = 0.5, 0.1
    for weights, violated in ((separating, False), (np.zeros_like(separating), True)):
        model.weights = weights.copy()
        rule = HingeRule(l2=l2, eta0=eta0, average=False)
        rule.begin(Problem(model, model.data(enc)))
        counters = rule.run(np.array([0], dtype=np.int64))
        decayed = (1 - eta0 * l2) * weights
        assert (counters["violations"] == 1) == violated
        if violated:
            assert rule.end_epoch()["hinge_loss"] == pytest.approx(n)  # w = 0: every token wrong
            assert not np.allclose(rule.weights(), decayed)
        else:
            assert rule.end_epoch()["hinge_loss"] == 0.0
            np.testing.assert_allclose(rule.weights(), decayed)


def test_hinge_fits_a_separable_problem():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in sent] for sent in X]
    tagger = Tagger(templates=["w[0]"], trainer="hinge", epochs=8).fit(X, y)
    assert tagger.predict(X) == y
    assert tagger.history_[-1].stats["violations"] < tagger.history_[0].stats["violations"]
    assert TRAINERS["hinge"] is HingeRule
