"""CRF by SGD against brute-force expectations, finite differences and a naive eager SGD."""
import numpy as np
import pytest

from naive import all_labelings, brute_force_log_z, central_difference, sequence_score
from structperc._kernels import crf as kernels
from structperc._kernels import sgd
from structperc._kernels.forward_backward import forward_backward
from structperc._kernels.sgd import scaled_scores
from structperc.errors import ConfigError
from structperc.model import LinearChainModel
from structperc.tagger import Tagger, _as_corpus
from structperc.encode import FeatureEncoder
from structperc.train import TRAINERS, Problem
from structperc.train.crf import CRFRule
from structperc.train.sgd import calibrate_eta0
from test_engine import TEMPLATES, WORDS, random_sentences

EMPTY = np.zeros(0, dtype=np.int64)


def small_model(seed, constrain=None, n_sentences=6, max_len=4, scale=0.5):
    """A model over random sentences (emission and pair features), random weights."""
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, n_sentences, 3, max_len=max_len, tags=("B-NP", "I-NP", "O"))
    if constrain == "bio":  # gold must be allowed: no I-NP after O or at the start
        y = [[("B-NP" if l == "I-NP" and (i == 0 or s[i - 1] == "O") else l) for i, l in enumerate(s)] for s in y]
    corpus = _as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, constrain=constrain)
    model.weights = scale * rng.normal(size=model.weights.shape)
    return model, enc


def potentials(model, enc, s, w):
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return scaled_scores(w, 1.0, model.layout(), model.data(enc), a, b)


def naive_log_likelihood(model, enc, s, w):
    emission, transition, end = potentials(model, enc, s, w)
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return sequence_score(emission, transition, end, enc.labels[a:b]) - brute_force_log_z(emission, transition, end)


def naive_expected_phi(model, enc, s, w):
    """sum_y P(y | x) Φ(x, y) by enumerating every labeling."""
    emission, transition, end = potentials(model, enc, s, w)
    log_z = brute_force_log_z(emission, transition, end)
    expected = np.zeros_like(w)
    for y in all_labelings(emission.shape[0], model.n_labels):
        score = sequence_score(emission, transition, end, y)
        if np.isfinite(score):
            expected += np.exp(score - log_z) * model.feature_vector(enc, s, y)
    return expected


def kernel_gradient(model, enc, s, w):
    """Φ(x, y) - E[Φ] from the kernel's marginals and expected counts."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    ll, node, edge = kernels.crf_sentence(w, 1.0, model.layout(), model.data(enc), a, b)
    grad = model.feature_vector(enc, s, enc.labels[a:b])
    kernels.add_expected_counts(grad, -1.0, model.layout(), model.data(enc), a, b, node, edge)
    return ll, grad


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_expected_counts_equal_brute_force_expectation(seed, constrain):
    model, enc = small_model(seed, constrain)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        _, node, edge = forward_backward(emission, transition, end)
        counts = np.zeros_like(model.weights)
        kernels.add_expected_counts(counts, 1.0, model.layout(), model.data(enc), a, b, node, edge)
        np.testing.assert_allclose(counts, naive_expected_phi(model, enc, s, model.weights), atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_gradient_matches_central_finite_differences(seed, constrain):
    model, enc = small_model(seed, constrain)
    rng = np.random.default_rng(100 + seed)
    w = model.weights
    for s in range(3):
        ll, grad = kernel_gradient(model, enc, s, w)
        assert ll == pytest.approx(naive_log_likelihood(model, enc, s, w))
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        touched = np.unique(np.concatenate([
            model.phi(enc, s, y) for y in all_labelings(b - a, model.n_labels)]))
        checked = np.concatenate([rng.choice(touched, size=min(12, len(touched)), replace=False),
                                  rng.integers(0, len(w), 3)])
        for i in checked:
            numeric = central_difference(lambda v: naive_log_likelihood(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), i


def naive_eager_sgd(model, enc, visits, eta0, l2, batch_size):
    """w <- (1 - η λ m) w + η sum_batch (Φ - E[Φ]) with brute-force expectations and an O(#weights)
    decay every step; returns the weight vector after each step."""
    w = model.weights.copy()
    history = []
    seen = 0
    for lo in range(0, len(visits), batch_size):
        batch = visits[lo: lo + batch_size]
        grad = np.zeros_like(w)
        for s in batch:
            a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
            grad += model.feature_vector(enc, s, enc.labels[a:b]) - naive_expected_phi(model, enc, s, w)
        eta = eta0 / (1 + l2 * eta0 * seen)
        w = (1 - eta * l2 * len(batch)) * w + eta * grad
        seen += len(batch)
        history.append(w.copy())
    return history


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("batch_size", [1, 3])
def test_lazy_scaled_sgd_equals_eager_sgd_and_its_average(seed, batch_size):
    model, enc = small_model(seed, "bio", scale=0.1)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2 = 0.5, 0.3  # a strong decay: s drops well below 1
    history = naive_eager_sgd(model, enc, visits, eta0, l2, batch_size)
    for average in (False, True):
        rule = CRFRule(l2=l2, eta0=eta0, batch_size=batch_size, average=average, average_start=0)
        rule.begin(Problem(model, model.data(enc)))
        split = 2 * batch_size  # two slices, as the on-line loop passes them
        rule.run(visits[:split])
        rule.run(visits[split:])
        expected = np.mean(history, axis=0) if average else history[-1]
        np.testing.assert_allclose(rule.weights(), expected, atol=1e-10)
    assert rule.state[sgd.SCALE] < 0.5


def test_rescale_keeps_real_weights_and_average():
    rng = np.random.default_rng(0)
    v, u = rng.normal(size=20), rng.normal(size=20)
    state = np.array([3e-10, 5.0, 7.0, 4.0])
    current = sgd.real_weights(v, u, state, False)
    average = sgd.real_weights(v, u, state, True)
    sgd.decay(v, state, 0.5)  # s falls below the threshold: folded into v
    assert state[sgd.SCALE] == 1.0
    np.testing.assert_allclose(sgd.real_weights(v, u, state, False), 0.5 * current)
    np.testing.assert_allclose(sgd.real_weights(v, u, state, True), average)


def test_calibration_keeps_the_best_candidate():
    tried = []

    def trial(eta):
        tried.append(eta)
        return -np.log(eta / 0.8) ** 2

    assert calibrate_eta0(trial, initial=-10.0) == pytest.approx(0.8)
    assert 0.1 in tried and 0.05 in tried and max(tried) <= 0.1 * 2 ** 10


def test_calibrated_rate_raises_the_sample_objective():
    model, enc = small_model(1, n_sentences=20)
    model.weights = np.zeros_like(model.weights)
    rule = CRFRule()
    rule.begin(Problem(model, model.data(enc)))
    assert rule.eta0_ > 0
    assert rule.l2_ == pytest.approx(2 / enc.n_sentences)


def test_options_are_checked():
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


def test_average_restarts_after_average_start_epochs():
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
