"""Forced decoding: known labels fixed in Viterbi (first and second order), k-best and the
marginals, against brute force over the consistent labelings; errors for a forced label the
model does not know or the constraint forbids, in the API and on the command line."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

import naive
from builders import fitted_model, potentials, random_sentences, small_model
from structperc import Tagger
from structperc._kernels.decode.decoders import decode_corpus
from structperc._kernels.decode.marginals import corpus_marginals
from structperc._kernels.decode.nbest import kbest_corpus
from structperc.cli.main import app
from structperc.errors import InputFormatError
from structperc.model.linear_chain import force_candidates


def random_forced(rng, enc, n_labels, fraction=0.3):
    forced = rng.integers(0, n_labels, enc.n_tokens)
    forced[rng.random(enc.n_tokens) >= fraction] = -1
    return forced


def consistent(y, forced):
    return all(f < 0 or f == c for c, f in zip(y, forced))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), constrain=st.sampled_from([None, "bio"]), fraction=st.sampled_from([0.2, 0.5, 1.0]))
def test_forced_viterbi_is_the_best_consistent_labeling(seed, constrain, fraction):
    model, enc = small_model(seed, constrain, max_len=5)
    rng = np.random.default_rng(seed)
    forced = random_forced(rng, enc, model.n_labels, fraction)
    ids, scores = model.decode(enc, forced=forced)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        ranked = [(y, v) for y, v in naive.ranked_labelings(emission, transition, end) if consistent(y, forced[a:b])]
        if not ranked:  # the constraint forbids the forced labels (the API refuses such input)
            assert scores[s] == -np.inf
            continue
        kept = forced[a:b] >= 0
        np.testing.assert_array_equal(ids[a:b][kept], forced[a:b][kept])
        np.testing.assert_array_equal(ids[a:b], ranked[0][0])
        assert scores[s] == pytest.approx(ranked[0][1])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6))
def test_forced_kbest_lists_the_best_consistent_labelings(seed, k):
    model, enc = small_model(seed, "bio", max_len=4)
    forced = random_forced(np.random.default_rng(seed), enc, model.n_labels)
    forced[forced == 1] = -1  # I-NP forced might be forbidden; keep B-NP and O
    candidate_offsets, path_offsets, paths, scores = kbest_corpus(model.weights, model.layout(),
                                                                  model.data(enc, forced), k)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        ranked = [v for y, v in naive.ranked_labelings(emission, transition, end) if consistent(y, forced[a:b])]
        got = scores[candidate_offsets[s]: candidate_offsets[s + 1]]
        np.testing.assert_allclose(got, ranked[:k])
        for j in range(candidate_offsets[s], candidate_offsets[s + 1]):
            assert consistent(paths[path_offsets[j]: path_offsets[j + 1]], forced[a:b])


@pytest.mark.parametrize("seed", range(4))
def test_forced_marginals_are_conditioned_on_the_forced_labels(seed):
    model, enc = small_model(seed, max_len=4)
    forced = random_forced(np.random.default_rng(seed), enc, model.n_labels)
    node, _ = corpus_marginals(model.weights, model.layout(), model.data(enc, forced))
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = potentials(model, enc, s, model.weights)
        expected = np.zeros((b - a, model.n_labels))
        for y in naive.all_labelings(b - a, model.n_labels):
            if consistent(y, forced[a:b]):
                expected[np.arange(b - a), y] += np.exp(naive.sequence_score(emission, transition, end, y))
        expected /= expected.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(node[a:b], expected, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_forced_second_order_decoding_keeps_the_forced_labels(seed):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, ["w[0]", "pos[0]", "bias"], n_labels=3, order=2)
    forced = random_forced(rng, enc, model.n_labels, 0.4)
    ids, _ = decode_corpus(model.weights, model.layout(), model.data(enc, forced))
    np.testing.assert_array_equal(ids[forced >= 0], forced[forced >= 0])


def test_force_candidates_intersects_nothing_but_replaces_the_forced_tokens():
    offsets, labels = np.array([0, 2, 3, 5]), np.array([0, 2, 1, 0, 1])
    new_offsets, new_labels = force_candidates((offsets, labels), np.array([-1, 2, 1]), 3)
    np.testing.assert_array_equal(new_offsets, [0, 2, 3, 4])
    np.testing.assert_array_equal(new_labels, [0, 2, 2, 1])
    new_offsets, new_labels = force_candidates((np.zeros(0, dtype=np.int64),) * 2, np.array([1, -1]), 3)
    np.testing.assert_array_equal(new_offsets, [0, 1, 4])
    np.testing.assert_array_equal(new_labels, [1, 0, 1, 2])


def np_sentences(seed=0):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 40, 3, tags=("B-NP", "I-NP", "O"))
    y = [[("B-NP" if tag == "I-NP" and (i == 0 or s[i - 1] == "O") else tag) for i, tag in enumerate(s)] for s in y]
    return X, y


def np_tagger(seed=0):
    X, y = np_sentences(seed)
    return Tagger(templates=["w[0]", "pos[0]"], epochs=2, constrain="bio").fit(X, y), X


def test_predict_with_forced_labels_keeps_them():
    tagger, X = np_tagger()
    forced = [None if i % 3 == 0 else ["O" if j % 2 else "?" for j in range(len(s))] for i, s in enumerate(X)]
    predicted = tagger.predict(X, forced=forced)
    for labels, sentence_forced in zip(predicted, forced):
        for label, f in zip(labels, sentence_forced or []):
            if f != "?":
                assert label == f
    assert tagger.predict(X, forced=[None] * len(X)) == tagger.predict(X)


@pytest.mark.parametrize("forced, message", [("X-NP", "not a label"), ("I-NP", "not allowed at the start")])
def test_predict_refuses_unknown_or_forbidden_forced_labels(forced, message):
    tagger, X = np_tagger()
    with pytest.raises(InputFormatError, match=message):
        tagger.predict(X[:1], forced=[[forced] + [None] * (len(X[0]) - 1)])


TEST = """He PRP B-NP B-NP
reckons VBZ B-VP O
the DT B-NP B-NP
current JJ I-NP ?
account NN I-NP I-NP
. . O O

The DT B-NP ?
pound NN I-NP I-NP
fell VBD B-VP O
"""


@pytest.fixture()
def cli_model(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("\n\n".join("\n".join(f"{w} {p} {c}" for (w, p), c in zip(s, lab))
                                 for s, lab in zip(*np_sentences())) + "\n")
    model = tmp_path / "m.npz"
    result = CliRunner().invoke(app, ["train", str(train), "--model", str(model), "--columns", "word,pos,chunk",
                                      "--only-types", "NP", "--constrain", "bio", "--epochs", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    return tmp_path, model


def test_tag_force_column_keeps_the_forced_labels(cli_model):
    tmp_path, model = cli_model
    test = tmp_path / "test.txt"
    test.write_text(TEST)
    result = CliRunner().invoke(app, ["tag", str(test), "--model", str(model), "--force-column", "4", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()]
    assert len(rows) == 9
    for row in rows:
        if row[3] != "?":
            assert row[-1] == row[3], row


@pytest.mark.parametrize("line, replacement, message", [
    (4, "current JJ I-NP X-NP", "test.txt:4: forced label 'X-NP' is not a label of the model"),
    (3, "the DT B-NP I-NP", "test.txt:3: forced label 'I-NP' is not allowed after 'O'"),
    (8, "The DT B-NP I-NP", "test.txt:8: forced label 'I-NP' is not allowed at the start of a sentence"),
])
def test_tag_force_column_errors_name_file_and_line(cli_model, line, replacement, message):
    tmp_path, model = cli_model
    lines = TEST.splitlines()
    lines[line - 1] = replacement
    test = tmp_path / "test.txt"
    test.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["tag", str(test), "--model", str(model), "--force-column", "4", "--quiet"])
    assert result.exit_code == 2
    assert message in result.output
