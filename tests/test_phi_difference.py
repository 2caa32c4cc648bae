"""``scoring.add_phi_difference`` (the perceptron's update, touching only where two labelings
differ) against the two full Φ vectors of ``phi_indices`` / ``phi_values`` added and subtracted:
label orders 1 and 2, pair features, only the seen feature-label pairs, real feature values."""
import dataclasses

import numpy as np
import pytest

from builders import TEMPLATES, random_sentences
from structperc._kernels.score.emission import gold_pairs
from structperc._kernels.score.scoring import add_phi, add_phi_difference, phi_indices, phi_values
from structperc.features.dicts import EncodedAttributes
from structperc.features.encode import FeatureEncoder
from structperc.model.linear_chain import LinearChainModel
from structperc.corpus import as_corpus


def case(seed, order, sparse, real):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 8, 4, max_len=7)
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    n_labels = len(encoder.labels_)
    pairs = gold_pairs(enc.feature_offsets, enc.feature_ids, enc.labels, encoder.n_features_, n_labels, 0) \
        if sparse else None
    if real:
        values = rng.uniform(0.1, 2.0, size=len(enc.feature_ids)).astype(np.float32)
        enc = EncodedAttributes(**dataclasses.asdict(enc), feature_values=values)
    model = LinearChainModel(encoder, order=order, emission_pairs=pairs)
    return rng, model, enc, n_labels


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_difference_equals_full_phi_of_both_labelings(order, sparse, real, seed):
    rng, model, enc, n_labels = case(seed, order, sparse, real)
    layout, data = model.layout(), model.data(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        y = rng.integers(0, n_labels, b - a)
        # z agrees with y on some tokens and not on others (and equals it once in a while)
        z = np.where(rng.random(b - a) < 0.5, y, rng.integers(0, n_labels, b - a))
        scale = float(rng.uniform(-2, 2))
        expected = np.zeros(len(model.weights))
        add_phi(expected, scale, phi_indices(layout, data, a, b, y), phi_values(layout, data, a, b, y))
        add_phi(expected, -scale, phi_indices(layout, data, a, b, z), phi_values(layout, data, a, b, z))
        got = np.zeros(len(model.weights))
        add_phi_difference(got, scale, layout, data, a, b, y, z)
        np.testing.assert_allclose(got, expected, atol=1e-12)
        if np.array_equal(y, z):
            assert not got.any()
