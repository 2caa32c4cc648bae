"""A model with only the feature-label pairs seen in training equals a dense model whose other
emission weights are held at zero: decoding, Φ, a perceptron epoch and a CRF epoch, against naive
references over the dense layout."""
import numpy as np
import pytest
import forked_cli

from builders import TEMPLATES, potentials, random_sentences
from naive import all_labelings, brute_force_best, brute_force_log_z, sequence_score
from structperc._kernels.score.emission import gold_pairs
from structperc._kernels.learn.perceptron import perceptron_epoch
from structperc.features.encode import FeatureEncoder
from structperc.errors import ConfigError
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.train import Problem
from structperc.train.crf import CRFRule


def sparse_and_dense(seed, n_labels=3, n_sentences=6, max_len=4, dense_count=0):
    """(sparse model, dense model, encoded corpus, embed, mask): embed maps sparse weights to the
    dense layout (zeros off the pairs); mask is True on the dense weights the sparse model has.
    dense_count > 0: the features occurring that often have every label."""
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, n_sentences, n_labels, max_len=max_len)
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    n_labels = len(encoder.labels_)
    pairs = gold_pairs(enc.feature_offsets, enc.feature_ids, enc.labels, encoder.n_features_, n_labels, dense_count)
    sparse = LinearChainModel(encoder, emission_pairs=pairs)
    dense = LinearChainModel(encoder)
    # naive pair set: every feature of a token with its gold label
    seen = np.zeros((encoder.n_features_, n_labels), dtype=bool)
    for i in range(enc.n_tokens):
        seen[enc.feature_ids[enc.feature_offsets[i]: enc.feature_offsets[i + 1]], enc.labels[i]] = True
    if dense_count:
        seen[np.bincount(enc.feature_ids, minlength=encoder.n_features_) >= dense_count] = True
    offsets, labels = pairs
    assert np.array_equal(np.diff(offsets), seen.sum(axis=1))
    assert np.array_equal(labels, np.nonzero(seen)[1])
    # the model lists no labels for the rows with every label, and gives back one label per pair
    kept_offsets, listed = sparse._pairs
    assert len(listed) == len(labels) - n_labels * int(seen.all(axis=1).sum())
    np.testing.assert_array_equal(sparse.emission_pairs[1], labels)
    if dense_count:
        assert seen.all(axis=1).any()  # the case is exercised
    off = dense.layout().off_trans
    mask = np.ones(len(dense.weights), dtype=bool)
    mask[:off] = seen.ravel()

    def embed(w):
        out = np.zeros(len(dense.weights))
        out[:off][seen.ravel()] = w[: sparse.layout().off_trans]
        out[off:] = w[sparse.layout().off_trans:]
        return out

    sparse.weights = rng.normal(size=sparse.weights.shape)
    dense.weights = embed(sparse.weights)
    return sparse, dense, enc, embed, mask


@pytest.mark.parametrize("seed, dense_count", [(seed, 0) for seed in range(6)] + [(0, 2), (1, 3), (2, 5)])
def test_decode_and_phi_equal_the_masked_dense_model(seed, dense_count):
    sparse, dense, enc, embed, mask = sparse_and_dense(seed, dense_count=dense_count)
    assert len(sparse.weights) < len(dense.weights)
    ids_sparse, scores_sparse = sparse.decode(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(dense, enc, s, dense.weights)
        best, best_score = brute_force_best(emission, transition, end)
        assert np.array_equal(ids_sparse[a:b], best)
        assert scores_sparse[s] == pytest.approx(best_score)
        for y in all_labelings(b - a, sparse.n_labels)[:20]:
            np.testing.assert_array_equal(embed(sparse.feature_vector(enc, s, y)),
                                          dense.feature_vector(enc, s, y) * mask)
            assert sparse.score(enc, s, y) == pytest.approx(sequence_score(emission, transition, end, y))


@pytest.mark.parametrize("seed, dense_count", [(seed, 0) for seed in range(4)] + [(0, 2), (1, 3)])
def test_perceptron_epoch_equals_masked_dense_updates(seed, dense_count):
    sparse, dense, enc, embed, mask = sparse_and_dense(seed, n_sentences=8, dense_count=dense_count)
    sparse.weights[:] = 0.0
    w = np.zeros(len(dense.weights))
    visits = np.random.default_rng(seed).permutation(enc.n_sentences).astype(np.int64)
    perceptron_epoch(sparse.weights, np.zeros(0), 0.0, sparse.layout(), sparse.data(enc), visits)
    for s in visits:
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        best, _ = brute_force_best(*potentials(dense, enc, s, w))
        gold = enc.labels[a:b]
        if not np.array_equal(best, gold):
            w += mask * (dense.feature_vector(enc, s, gold) - dense.feature_vector(enc, s, best))
    np.testing.assert_allclose(embed(sparse.weights), w)


@pytest.mark.parametrize("seed, dense_count", [(seed, 0) for seed in range(3)] + [(0, 2), (2, 3)])
def test_crf_epoch_equals_masked_dense_sgd(seed, dense_count):
    sparse, dense, enc, embed, mask = sparse_and_dense(seed, max_len=3, dense_count=dense_count)
    sparse.weights *= 0.1
    w = embed(sparse.weights)
    eta0, l2 = 0.5, 0.3
    visits = np.arange(enc.n_sentences, dtype=np.int64)
    rule = CRFRule(l2=l2, eta0=eta0, average=False)
    rule.begin(Problem(sparse, sparse.data(enc)))
    rule.run(visits)
    for t, s in enumerate(visits):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(dense, enc, s, w)
        log_z = brute_force_log_z(emission, transition, end)
        expected = np.zeros_like(w)
        for y in all_labelings(b - a, dense.n_labels):
            expected += np.exp(sequence_score(emission, transition, end, y) - log_z) * dense.feature_vector(enc, s, y)
        gradient = mask * (dense.feature_vector(enc, s, enc.labels[a:b]) - expected)
        eta = eta0 / (1 + l2 * eta0 * t)
        w = (1 - eta * l2) * w + eta * gradient
    np.testing.assert_allclose(embed(rule.weights()), w, atol=1e-10)


def test_gold_pairs_model_file_round_trip_and_prune(tmp_path):
    rng = np.random.default_rng(0)
    X, y = random_sentences(rng, 30, 4, max_len=6)
    tagger = Tagger(templates=TEMPLATES, epochs=3, columns=["word", "pos"], all_pairs=False).fit(X, y)
    model = tagger.model_
    assert model.emission_pairs is not None
    offsets, labels = model.emission_pairs
    assert offsets[-1] == len(labels) == model.layout().off_trans
    assert np.all(model.weights[: len(labels)] != 0)  # pruned to the non-zero pairs
    path = tmp_path / "m.npz"
    tagger.save(path)
    loaded = Tagger.load(path)
    assert loaded.predict(X) == tagger.predict(X)
    np.testing.assert_array_equal(loaded.model_.emission_pairs[1], labels)
    dense = Tagger(templates=TEMPLATES, epochs=3, columns=["word", "pos"], all_pairs=True).fit(X, y)
    assert dense.model_.emission_pairs is None
    assert tagger.describe()["top_features"].keys() == dense.describe()["top_features"].keys()


def test_dense_count_gives_frequent_features_every_label_and_applies_to_gold_pairs_only():
    X, y = random_sentences(np.random.default_rng(4), 30, 8, max_len=5, tags=tuple("ABCDEFGH"))
    gold = Tagger(templates=TEMPLATES, epochs=1, all_pairs=False).fit(X, y).model_
    hybrid = Tagger(templates=TEMPLATES, epochs=1, all_pairs=False, dense_count=3).fit(X, y)
    sizes_gold = np.diff(gold.emission_pairs[0])
    sizes = np.diff(hybrid.model_.emission_pairs[0])
    # (pruning after training renumbers the features: compare the rows with every label)
    assert (sizes == len(hybrid.labels_)).sum() > (sizes_gold == len(hybrid.labels_)).sum()
    assert hybrid.model_.metadata["training"]["dense_count"] == 3
    for bad in (dict(all_pairs=True, dense_count=5), dict(all_pairs=False, dense_count=0)):
        with pytest.raises(ConfigError, match="dense_count"):
            Tagger(templates=TEMPLATES, epochs=1, **bad).fit(X, y)


def test_cli_dense_count_with_all_pairs_is_one_line_before_reading(tmp_path):
    # a dense count alone implies gold pairs (``model.layouts.choose_layout``); with --all-pairs it is an error
    missing = tmp_path / "not-read.txt"  # the option is refused before the corpus is opened
    done = forked_cli.run(["train", str(missing), "--model",
                           str(tmp_path / "m.npz"), "--dense-count", "5", "--all-pairs"])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "structperc: error: --dense-count applies to gold pairs (--gold-pairs) "
        "and is a positive integer, got 5 with --all-pairs"]
    assert not (tmp_path / "m.npz").exists()
