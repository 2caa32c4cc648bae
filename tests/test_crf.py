"""CRF by SGD against brute-force expectations, finite differences and a naive eager SGD."""
import numpy as np
import pytest

from naive import naive_eager_sgd, naive_expected_phi
from structperc._kernels import crf as kernels
from structperc._kernels.forward_backward import forward_backward
from structperc.errors import ConfigError
from structperc.model import LinearChainModel
from structperc.tagger import Tagger
from structperc.train import TRAINERS, Problem
from structperc.train.crf import CRFRule
from structperc.train.sgd import calibrate_eta0
from builders import WORDS, potentials

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_expected_counts_equal_brute_force_expectation(seed, constrain, small_model):
    model, enc = small_model(seed, constrain)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        _, node, edge = forward_backward(emission, transition, end)
        counts = np.zeros_like(model.weights)
        kernels.add_expected_counts(counts, 1.0, model.layout(), model.data(enc), a, b, node, edge)
        np.testing.assert_allclose(counts, naive_expected_phi(model, enc, s, model.weights), atol=1e-10)


def test_calibration_keeps_the_best_candidate():
    tried = []

    def trial(eta):
        tried.append(eta)
        return -np.log(eta / 0.8) ** 2

    assert calibrate_eta0(trial, initial=-10.0) == pytest.approx(0.8)
    assert 0.1 in tried and 0.05 in tried and max(tried) <= 0.1 * 2 ** 10


def test_calibrated_rate_raises_the_sample_objective(small_model):
    model, enc = small_model(1, n_sentences=20)
    model.weights = np.zeros_like(model.weights)
    rule = CRFRule()
    rule.begin(Problem(model, model.data(enc)))
    assert rule.eta0_ > 0
    assert rule.l2_ == pytest.approx(2 / enc.n_sentences)


def test_options_are_checked(small_model):
    model, enc = small_model(0)
    with pytest.raises(ConfigError, match="batch_size"):
        CRFRule(batch_size=0).begin(Problem(model, model.data(enc)))
    model2 = LinearChainModel(model.encoder, order=2)
    with pytest.raises(ConfigError, match="order 1"):
        CRFRule().begin(Problem(model2, model.data(enc)))
    assert TRAINERS["crf"] is CRFRule


def test_crf_fits_a_separable_problem_and_its_objective_rises():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in sent] for sent in X]
    tagger = Tagger(templates=["w[0]"], trainer="crf", epochs=8).fit(X, y)
    assert tagger.predict(X) == y
    objectives = [r.stats["objective"] for r in tagger.history_]
    assert objectives[-1] > objectives[0]
    assert tagger.model_.normalization == "global"


def test_average_restarts_after_average_start_epochs(small_model):
    model, enc = small_model(4, "bio", scale=0.1)
    visits = np.arange(enc.n_sentences, dtype=np.int64)
    eta0, l2 = 0.5, 0.3
    history = naive_eager_sgd(model, enc, np.concatenate([visits, visits]), eta0, l2, 1)
    rule = CRFRule(l2=l2, eta0=eta0, average=True, average_start=1)
    rule.begin(Problem(model, model.data(enc)))
    rule.run(visits)
    rule.end_epoch()
    rule.run(visits)
    np.testing.assert_allclose(rule.weights(), np.mean(history[len(visits):], axis=0), atol=1e-10)
