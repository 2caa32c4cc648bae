"""CRF by SGD against brute-force expectations, finite differences and a naive eager SGD."""
import numpy as np
import pytest

from naive import naive_eager_sgd, naive_expected_phi, naive_log_likelihood
from structperc._kernels.learn import sgd
from structperc._kernels.decode.forward_backward import forward_backward
from structperc.features.encode import FeatureEncoder
from structperc.errors import ConfigError
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.train import TRAINERS, Problem
from structperc.train.crf import CRFRule
from structperc.train.sgd import calibrate_eta0
from builders import WORDS, add_expected_counts, potentials

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_expected_counts_equal_brute_force_expectation(seed, constrain, small_model):
    model, enc = small_model(seed, constrain)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        _, node, edge = forward_backward(emission, transition, end)
        counts = np.zeros_like(model.weights)
        add_expected_counts(counts, 1.0, model.layout(), model.data(enc), a, b, node, edge)
        np.testing.assert_allclose(counts, naive_expected_phi(model, enc, s, model.weights), atol=1e-10)


def test_calibration_keeps_the_best_candidate():
    tried = []

    def trial(eta):
        tried.append(eta)
        return -np.log(eta / 0.8) ** 2

    assert calibrate_eta0(trial, initial=-10.0) == pytest.approx(0.8)
    assert 0.1 in tried and 0.05 in tried and max(tried) <= 0.1 * 2 ** 10


def test_calibrated_rate_raises_the_sample_objective():
    # a learnable sample (each word has one label): on random labels no rate raises the on-line
    # objective, and the calibration rightly falls back to its smallest candidate
    rng = np.random.default_rng(1)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 5))] for _ in range(20)]
    corpus = as_corpus(X, [[lexicon[w] for w in s] for s in X])
    encoder = FeatureEncoder(["w[0]", "w[-1]"])
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder)
    rule = CRFRule(average=False)  # the calibrated rate itself (averaging doubles it)
    rule.begin(Problem(model, model.data(enc)))
    assert rule.l2_ == pytest.approx(0.2 / enc.n_sentences)  # c2 = 0.1 in CRFsuite's units
    sample = np.arange(enc.n_sentences, dtype=np.int64)  # 20 < calibration_sentences: the whole corpus
    penalty = 0.5 * rule.l2_ * enc.n_sentences

    def one_pass(eta0):
        """The weights after one pass from w = 0, and the calibration's measure of the pass: the
        log-likelihood summed at visit time minus the penalty at the end."""
        v, state = np.zeros_like(model.weights), sgd.new_state()
        gain, _ = rule._pass(v, np.zeros(0), state, sample, sgd.Rate(eta0, rule.l2_))
        w = state[sgd.SCALE] * v
        return w, gain - penalty * float(w @ w)

    def objective(w):  # sum_i log P(y_i | x_i) - (n λ / 2) ||w||², by brute force
        return sum(naive_log_likelihood(model, enc, s, w) for s in range(enc.n_sentences)) - penalty * float(w @ w)

    w0 = np.zeros_like(model.weights)
    before = objective(w0)
    w, measured = one_pass(rule.eta0_)
    assert objective(w) > before + 5.0
    assert measured > before + 0.5
    # the calibration tries rates a factor 2 apart and keeps the best by its measure
    assert measured >= one_pass(rule.eta0_ * 2)[1] and measured >= one_pass(rule.eta0_ / 2)[1]


def test_averaged_sgd_starts_at_twice_the_calibrated_rate():
    rng = np.random.default_rng(2)
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 5))] for _ in range(30)]
    corpus = as_corpus(X, [[WORDS.index(w) % 2 and "A" or "B" for w in s] for s in X])
    encoder = FeatureEncoder(["w[0]"])
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    rates = {}
    for average in (False, True):
        model = LinearChainModel(encoder)
        rule = CRFRule(average=average)
        rule.begin(Problem(model, model.data(enc)))
        rates[average] = rule.eta0_
    assert rates[True] == pytest.approx(2 * rates[False])
    assert rates[False] > 0


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
