"""Structured hinge loss: loss-augmented Viterbi against brute force, and subgradient steps against a
naive eager implementation."""
import numpy as np
import pytest

from naive import brute_force_augmented
from structperc._kernels.learn.hinge import loss_augmented_decode_against
from structperc.features.encode import FeatureEncoder
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.train import TRAINERS, Problem
from structperc.train.hinge import HingeRule
from builders import WORDS


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_loss_augmented_viterbi_is_brute_force_argmax(seed, constrain, small_model):
    model, enc = small_model(seed, constrain)
    scale, cost = 0.37, 1.5
    v = model.weights / scale
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        data = model.data(enc)
        path, value = loss_augmented_decode_against(v, scale, model.layout(), data, a, b, cost, data.gold[a:b])
        best, best_value = brute_force_augmented(model, enc, s, model.weights, cost)
        assert value == pytest.approx(best_value)
        np.testing.assert_array_equal(path, best)


def test_zero_loss_example_makes_no_update_but_a_violation_does():
    corpus = as_corpus([["the", "cat", "sat", "on"]], [["A", "B", "A", "C"]])
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
