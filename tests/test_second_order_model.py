"""Second-order (trigram) tagging through the model: decode is the brute-force argmax of w·Φ(x, y),
with and without a tag dictionary, and the perceptron trains with order=2."""
import itertools

import numpy as np
import pytest

from structperc.features.encode import FIRST_ID, FeatureEncoder
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.tagger import Tagger
from structperc.model.layouts import build_tag_dict
from structperc.corpus import as_corpus

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "big", "red"]
TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[1]", "suffix2[0]", "bias", "pair:pos[0]"]


def random_corpus(rng, n_sentences, n_labels, max_len=5):
    X, y = [], []
    tags = ["A", "B", "C", "D"][:n_labels]
    for _ in range(n_sentences):
        n = int(rng.integers(1, max_len + 1))
        # a small vocabulary so that some words pass the tag-dictionary threshold
        words = [WORDS[i] for i in rng.integers(0, 6, n)]
        pos = [f"P{i}" for i in rng.integers(0, 3, n)]
        X.append(list(zip(words, pos)))
        y.append([tags[i] for i in rng.integers(0, n_labels, n)])
    return as_corpus(X, y, ["word", "pos"])


def second_order_model(rng, n_labels, threshold=None):
    corpus = random_corpus(rng, 12, n_labels)
    encoder = FeatureEncoder(TEMPLATES)
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    tag_dict = None
    if threshold is not None:
        n_words = len(encoder.vocabularies_["word"]) + FIRST_ID
        tag_dict = build_tag_dict(encoded.word_ids, encoded.labels, n_words, len(encoder.labels_), threshold)
    model = LinearChainModel(encoder, order=2, tag_dict=tag_dict)
    model.weights = rng.normal(size=model.weights.shape)
    return model, encoded


def brute_force(model, encoded, sentence):
    """max over labelings allowed by the tag dictionary of w·Φ(x, y), and the allowed sets."""
    a, b = encoded.sentence_offsets[sentence], encoded.sentence_offsets[sentence + 1]
    cand_offsets, cand_labels = model.candidates(encoded)
    if len(cand_offsets):
        allowed = [cand_labels[cand_offsets[t]: cand_offsets[t + 1]] for t in range(a, b)]
    else:
        allowed = [range(model.n_labels)] * (b - a)
    best = max(model.score(encoded, sentence, np.array(y)) for y in itertools.product(*allowed))
    return best, allowed


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [None, 1, 2])
def test_second_order_decode_is_brute_force_argmax(seed, threshold):
    rng = np.random.default_rng(seed)
    model, encoded = second_order_model(rng, n_labels=3, threshold=threshold)
    assert model.layout().order == 2
    predicted, scores = model.decode(encoded)
    for s in range(encoded.n_sentences):
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        best, allowed = brute_force(model, encoded, s)
        assert scores[s] == pytest.approx(best)
        assert model.score(encoded, s, predicted[a:b]) == pytest.approx(best)
        assert all(predicted[a + t] in list(allowed[t]) for t in range(b - a))


def test_tag_dictionary_restricts_frequent_words_only():
    rng = np.random.default_rng(11)
    model, encoded = second_order_model(rng, n_labels=4, threshold=2)
    offsets, labels = model.tag_dict
    counts = np.bincount(encoded.word_ids, minlength=len(offsets) - 1)
    for word in range(len(offsets) - 1):
        row = set(labels[offsets[word]: offsets[word + 1]].tolist())
        if counts[word] >= 2:
            assert row == set(encoded.labels[encoded.word_ids == word].tolist())
        else:
            assert row == set()  # an empty row: the word may take every label
    # the dictionary actually prunes something in this corpus, so the test above has teeth
    assert len(labels) < 4 * (len(offsets) - 1)


def test_second_order_score_depends_on_the_label_two_back():
    rng = np.random.default_rng(5)
    model, encoded = second_order_model(rng, n_labels=2)
    s = next(i for i in range(encoded.n_sentences) if encoded.sentence_offsets[i + 1] - encoded.sentence_offsets[i] >= 3)
    n = encoded.sentence_offsets[s + 1] - encoded.sentence_offsets[s]
    y = np.zeros(n, dtype=np.int64)
    before = model.score(encoded, s, y)
    model.weights[model.layout().off_trans2 + (0 * 3 + 0) * 2 + 0] += 1.0  #  (q=0, p=0) -> c=0
    assert model.score(encoded, s, y) == pytest.approx(before + (n - 2))


@pytest.mark.parametrize("tag_dict", [None, 1])
def test_perceptron_trains_with_order_two_on_a_separable_problem(tag_dict):
    # the label of each word depends on the label two back: A B C A B C ... shifted by the first word
    rng = np.random.default_rng(0)
    cycle = ["A", "B", "C"]
    X, y = [], []
    for _ in range(80):
        n = int(rng.integers(3, 9))
        start = int(rng.integers(0, 3))
        X.append([["x", "y", "z"][start]] + ["w"] * (n - 1))
        y.append([cycle[(start + i) % 3] for i in range(n)])
    second = Tagger(templates=["w[0]"], epochs=10, order=2, average=False, tag_dict=tag_dict).fit(X, y)
    assert second.history_[-1].stats["sentence_errors"] == 0
    assert second.predict(X) == y
    # a bigram tagger separates that too (the previous label determines the next); here only the
    # trigram can: the last label depends on the first through an uninformative middle "M"
    X2, y2 = [], []
    for _ in range(80):
        first = int(rng.integers(0, 2))
        X2.append([["p", "q"][first], "m", "e"])
        y2.append([["P", "Q"][first], "M", ["X", "Y"][first]])
    only_second = Tagger(templates=["w[0]"], epochs=10, order=2, average=False, tag_dict=tag_dict).fit(X2, y2)
    assert only_second.predict(X2) == y2
    bigram = Tagger(templates=["w[0]"], epochs=10, order=1, average=False).fit(X2, y2)
    assert bigram.predict(X2) != y2
