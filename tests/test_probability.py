"""probability.marginals against brute-force enumeration, for CRF and MEMM models; refusal otherwise."""
import numpy as np
import pytest

from naive import all_labelings, brute_force_log_z, brute_force_marginals, sequence_score
from structperc._kernels.score import scoring
from structperc.errors import StructpercError
from structperc.estimator.marginals import NotProbabilisticError, marginals
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from builders import TEMPLATES, potentials, random_sentences


def trained(trainer, seed, constrain="bio"):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 15, 3, max_len=5, tags=("B-NP", "I-NP", "O"))
    y = [[("B-NP" if l == "I-NP" and (i == 0 or s[i - 1] == "O") else l) for i, l in enumerate(s)] for s in y]
    tagger = Tagger(templates=TEMPLATES, trainer=trainer, epochs=3, constrain=constrain,
                    columns=["word", "pos"]).fit(X, y)
    model = tagger.model_
    return model, model.encoder.transform(as_corpus(X, y, ["word", "pos"]))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_crf_marginals_match_brute_force(seed, constrain):
    model, enc = trained("crf", seed, constrain)
    node, best = marginals(model, enc)
    predicted, _ = model.decode(enc)
    np.testing.assert_allclose(node.sum(axis=1), 1.0)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        expected, _ = brute_force_marginals(emission, transition, end)
        np.testing.assert_allclose(node[a:b], expected, atol=1e-10)
        log_p = sequence_score(emission, transition, end, predicted[a:b]) - brute_force_log_z(emission, transition, end)
        assert best[s] == pytest.approx(log_p)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_memm_marginals_match_brute_force_product_of_local_distributions(seed, constrain):
    model, enc = trained("memm", seed, constrain)
    node, best = marginals(model, enc)
    predicted, _ = model.decode(enc)
    np.testing.assert_allclose(node.sum(axis=1), 1.0)
    L = model.n_labels
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, _ = potentials(model, enc, s, model.weights)
        local = scoring.local_log_probabilities(emission, transition)
        expected = np.zeros((b - a, L))
        for y in all_labelings(b - a, L):
            log_p = sum(local[t, y[t - 1] if t > 0 else L, y[t]] for t in range(b - a))
            expected[np.arange(b - a), y] += np.exp(log_p)
            if np.array_equal(y, predicted[a:b]):
                assert best[s] == pytest.approx(log_p)
        np.testing.assert_allclose(node[a:b], expected, atol=1e-10)


@pytest.mark.parametrize("trainer", ["perceptron", "hinge"])
def test_models_without_a_distribution_are_refused(trainer):
    model, enc = trained(trainer, 0)
    with pytest.raises(NotProbabilisticError, match=f"marginals need a crf or memm model; this model was trained by {trainer}"):
        marginals(model, enc)
    assert issubclass(NotProbabilisticError, StructpercError)


def test_other_weights_can_be_given():
    model, enc = trained("crf", 1)
    node_zero, best_zero = marginals(model, enc, weights=np.zeros_like(model.weights))
    # zero weights: uniform over the allowed labelings, so the marginals differ from the model's
    assert not np.allclose(node_zero, marginals(model, enc)[0])
    assert np.all(best_zero < 0)
    with pytest.raises(ValueError, match="shape"):
        marginals(model, enc, weights=np.zeros(3))
