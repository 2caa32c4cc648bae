"""MEMM: normalized local distributions, gradients against finite differences, lazy steps against
eager steps, and training through the Tagger."""
import numpy as np
import pytest

from naive import all_labelings, gold_history_probabilities, naive_memm_log_probability
from structperc._kernels.score import scoring
from structperc.estimator.tagger import Tagger
from structperc.train import TRAINERS
from structperc.train.memm import MEMMRule
from builders import WORDS, potentials


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_local_distributions_are_normalized_and_match_the_decoder(seed, constrain, small_model):
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


def test_memm_fits_a_separable_problem_with_local_decoding():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in sent] for sent in X]
    tagger = Tagger(templates=["w[0]"], trainer="memm", epochs=8).fit(X, y)
    assert tagger.model_.normalization == "local"
    assert tagger.predict(X) == y
    assert TRAINERS["memm"] is MEMMRule


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_first_order_memm_decoding_is_the_brute_force_argmax(seed, constrain, small_model):
    """decode equals argmax over every labeling of sum_t log P(y_t | y_{t-1}, x), each P computed
    naively from the weights (softmax of w · f over the labels)."""
    model, enc = small_model(seed, constrain, scale=2.0)
    model.normalization = "local"
    model.decoder = "memm"
    predicted, scores = model.decode(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        candidates = [(naive_memm_log_probability(model, enc, s, model.weights, y), y)
                      for y in all_labelings(b - a, model.n_labels)]
        best, _ = max(candidates, key=lambda item: item[0])
        assert scores[s] == pytest.approx(best, abs=1e-9)
        assert naive_memm_log_probability(model, enc, s, model.weights, predicted[a:b]) == pytest.approx(best, abs=1e-9)
