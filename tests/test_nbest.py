"""Corpus-level k-best lists, their task scores and oracles, jackknifing, the block format."""
import io

import numpy as np
import pytest
from seqeval.metrics.sequence_labeling import get_entities

from structperc._kernels.score import scoring
from structperc._kernels.decode.kbest import kbest_viterbi
from structperc._kernels.decode.nbest import kbest_corpus
from structperc.chunks import chunk_spans
from structperc.features.encode import FeatureEncoder
from structperc.errors import ConfigError
from structperc.evaluate.metrics import chunk_scores, evaluate_labels, split
from structperc.model.linear_chain import LinearChainModel
from structperc.nbest.lists import jackknife_nbest, nbest_corpus, write_block
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "big", "red"]
CHUNK_TAGS = ["B-NP", "I-NP", "B-VP", "I-VP", "O"]
TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[1]", "bias", "pair:pos[0]"]


def random_corpus(rng, n_sentences, max_len=6, with_empty_pos=False):
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, max_len + 1))
        X.append([(WORDS[i], f"P{j}") for i, j in zip(rng.integers(0, len(WORDS), n), rng.integers(0, 3, n))])
        y.append([CHUNK_TAGS[i] for i in rng.integers(0, len(CHUNK_TAGS), n)])
    return as_corpus(X, y, ["word", "pos"])


def random_model(rng, corpus, constrain="bio", normalization="global", order=1):
    encoder = FeatureEncoder(TEMPLATES)
    encoder.fit_transform(corpus, corpus.columns["label"])  # fits the encoder the model is built on
    model = LinearChainModel(encoder, order=order, constrain=constrain, normalization=normalization)
    # integer weights: ties happen, and the tie order must still match the per-sentence kernel
    model.weights = rng.integers(-2, 3, size=model.weights.shape).astype(float)
    return model, encoder.transform(corpus, with_labels=False)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("normalization", ["global", "local"])
def test_corpus_kbest_equals_per_sentence_kbest_and_decode(seed, normalization):
    rng = np.random.default_rng(seed)
    corpus = random_corpus(rng, 15)
    model, encoded = random_model(rng, corpus, normalization=normalization)
    k = 7
    nb = nbest_corpus(model, corpus, k)
    decoded, decoded_scores = model.decode(encoded)
    for s in range(corpus.n_sentences):
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        emission = scoring.emission_scores(model.weights, model.layout(), model.data(encoded), a, b)
        transition = scoring.transition_scores(model.weights, model.layout(), model.data(encoded), a, b)
        end = scoring.end_scores(model.weights, model.layout())
        if normalization == "local":
            transition = scoring.local_log_probabilities(emission, transition)
            emission, end = np.zeros_like(emission), np.zeros_like(end)
        paths, scores = kbest_viterbi(emission, transition, end, k)
        first, last = nb.candidate_offsets[s], nb.candidate_offsets[s + 1]
        assert last - first == len(paths)
        for r, j in enumerate(range(first, last)):
            np.testing.assert_array_equal(nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]], paths[r])
            assert nb.scores[j] == scores[r]
            if normalization == "global":
                assert nb.scores[j] == pytest.approx(model.score(encoded, s, paths[r]), abs=1e-9)
        np.testing.assert_array_equal(paths[0], decoded[a:b])
        assert scores[0] == pytest.approx(decoded_scores[s])
        # the BIO mask is respected: no I-X after O or at the start
        for j in range(first, last):
            labels = nb.candidate_labels(j)
            for t, label in enumerate(labels):
                if label.startswith("I-"):
                    assert t > 0 and labels[t - 1][2:] == label[2:]


def test_kernel_layout_and_k_larger_than_the_number_of_labelings():
    rng = np.random.default_rng(3)
    corpus = random_corpus(rng, 6, max_len=2)
    model, encoded = random_model(rng, corpus, constrain=None)
    candidate_offsets, path_offsets, paths, scores = kbest_corpus(model.weights, model.layout(), model.data(encoded), 1000)
    lengths = np.diff(encoded.sentence_offsets)
    np.testing.assert_array_equal(np.diff(candidate_offsets), len(CHUNK_TAGS) ** lengths)
    assert len(scores) == candidate_offsets[-1] and len(paths) == path_offsets[-1]
    assert np.all(np.diff(path_offsets) == np.repeat(lengths, np.diff(candidate_offsets)))
    for s in range(corpus.n_sentences):
        block = scores[candidate_offsets[s]: candidate_offsets[s + 1]]
        assert np.all(np.diff(block) <= 0)


def test_second_order_model_is_refused():
    rng = np.random.default_rng(0)
    corpus = random_corpus(rng, 4)
    model, _ = random_model(rng, corpus, order=2)
    with pytest.raises(ConfigError, match="k-best needs a first-order model"):
        nbest_corpus(model, corpus, 5)


def test_chunk_spans_equal_seqeval():
    rng = np.random.default_rng(1)
    tags = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "E-NP", "S-VP", "I-PP", "B-PP"]
    for _ in range(500):
        labels = [tags[i] for i in rng.integers(0, len(tags), int(rng.integers(0, 9)))]
        assert chunk_spans(labels) == get_entities(labels), labels


@pytest.mark.parametrize("seed", range(3))
def test_task_scores_match_seqeval_and_oracle_is_at_least_one_best(seed):
    rng = np.random.default_rng(seed)
    corpus = random_corpus(rng, 20)
    model, encoded = random_model(rng, corpus)
    nb = nbest_corpus(model, corpus, 10)
    assert nb.metric == "f1"
    gold = split(corpus.columns["label"], corpus.sentence_offsets)
    sentence_of = nb.sentence_of_candidate()
    for j in range(nb.n_candidates):
        labels = nb.candidate_labels(j)
        g = gold[sentence_of[j]]
        if get_entities(g) or get_entities(labels):
            assert nb.task_scores[j] == pytest.approx(chunk_scores([g], [labels])["f1"])
        else:
            assert nb.task_scores[j] == 100.0
    decoded, _ = model.decode(encoded)
    one_best = evaluate_labels(corpus.columns["label"], [model.labels[c] for c in decoded],
                               corpus.sentence_offsets, True)["f1"]
    assert nb.corpus_score(nb.first_choice()) == pytest.approx(one_best)
    oracle = nb.oracle_choice()
    assert nb.corpus_score(oracle) >= nb.corpus_score(nb.first_choice())
    # oracle choice: most (2 * correct - predicted) per sentence, ties to the better rank
    for s in range(nb.n_sentences):
        a, b = nb.candidate_offsets[s], nb.candidate_offsets[s + 1]
        merit = [2 * nb.counts[j, 0] - nb.counts[j, 1] for j in range(a, b)]
        assert oracle[s] == a + merit.index(max(merit))
    # its F1 agrees with seqeval on the selected labels
    selected = nb.selected_labels(oracle)
    assert nb.corpus_score(oracle) == pytest.approx(
        evaluate_labels(corpus.columns["label"], selected, corpus.sentence_offsets, True)["f1"])


def test_accuracy_task_for_a_tag_set_that_is_not_bio():
    rng = np.random.default_rng(5)
    X = [[(WORDS[i], "P") for i in rng.integers(0, 10, 4)] for _ in range(8)]
    y = [[["A", "B", "C"][i] for i in rng.integers(0, 3, 4)] for _ in range(8)]
    corpus = as_corpus(X, y, ["word", "pos"])
    tagger = Tagger(templates=["w[0]", "bias"], epochs=2).fit(corpus)
    nb = nbest_corpus(tagger, corpus, 4)
    assert nb.metric == "accuracy"
    for j in range(nb.n_candidates):
        s = nb.sentence_of_candidate()[j]
        gold = corpus.columns["label"][4 * s: 4 * s + 4]
        assert nb.task_scores[j] == pytest.approx(100 * np.mean(np.array(gold) == np.array(nb.candidate_labels(j))))
    assert nb.corpus_score(nb.oracle_choice()) >= nb.corpus_score(nb.first_choice())
    assert nb.corpus_score(nb.first_choice()) == pytest.approx(tagger.evaluate(corpus)["accuracy"])


def test_jackknife_lists_come_from_models_that_did_not_see_the_sentence():
    rng = np.random.default_rng(2)
    corpus = random_corpus(rng, 30)
    params = dict(templates=["w[0]", "pos[0]", "bias"], epochs=2, constrain="bio", seed=0)
    nb = jackknife_nbest(corpus, params, folds=3, k=4, seed=7)
    assert nb.corpus is corpus and nb.n_sentences == corpus.n_sentences
    # rebuild fold 0 by the documented rule and compare with a tagger trained on the other folds
    fold_of = np.empty(corpus.n_sentences, dtype=np.int64)
    fold_of[np.random.default_rng(7).permutation(corpus.n_sentences)] = np.arange(corpus.n_sentences) % 3
    held = np.flatnonzero(fold_of == 0)
    tagger = Tagger(**params).fit(corpus.subset(np.flatnonzero(fold_of != 0)))
    predicted = tagger.predict(corpus.subset(held))
    for i, s in enumerate(held):
        assert nb.candidate_labels(nb.candidate_offsets[s]) == predicted[i]
        n = corpus.sentence_offsets[s + 1] - corpus.sentence_offsets[s]
        for j in range(nb.candidate_offsets[s], nb.candidate_offsets[s + 1]):
            assert len(nb.candidate_labels(j)) == n


def test_block_format_is_exact():
    corpus = as_corpus([[("He", "PRP"), ("ran", "VBD")]], [["B-NP", "B-VP"]], ["word", "pos"])
    tagger = Tagger(templates=["w[0]", "bias"], epochs=3, constrain="bio").fit(corpus)
    nb = nbest_corpus(tagger, corpus, 2)
    out = io.StringIO()
    write_block(out, nb)
    expected = []
    for r in range(2):
        j = nb.candidate_offsets[0] + r
        labels = nb.candidate_labels(j)
        expected += [f"# sentence 0 candidate {r} score {float(nb.scores[j])!r} task {float(nb.task_scores[j])!r}",
                     f"He PRP B-NP {labels[0]}", f"ran VBD B-VP {labels[1]}", ""]
    assert out.getvalue() == "\n".join(expected) + "\n"
    assert nb.candidate_labels(nb.candidate_offsets[0]) == ["B-NP", "B-VP"]
