"""Global features, the SVMrank reader/writer, and the averaged ranking perceptron."""

import numpy as np
import pytest

from structperc._kernels.rank.ranking import group_argmax, ranking_epoch
from structperc._kernels.records import Groups
from structperc.errors import ConfigError, InputFormatError
from structperc.nbest.lists import nbest_corpus
from structperc.rerank.pipeline import (DEFAULT_FEATURES, GLOBAL_FEATURES, RankingData, Reranker, candidate_feature_strings,
                               check_feature_names, chosen_score, featurize, read_svmrank, write_svmrank)
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.features.templates import ATTRIBUTES, word_shape

WORDS = ["The", "cat", "sat", "on", "U.S.", "mat", "1,000", "dog"]
CHUNK_TAGS = ["B-NP", "I-NP", "B-VP", "I-VP", "O"]


# ------------------------------------------------------------------------------------ features
def test_global_features_of_a_hand_made_candidate():
    tokens = {"word": ["The", "U.S.", "economy", "grew", "in", "1999"],
              "pos": ["DT", "NNP", "NN", "VBD", "IN", "CD"]}
    labels = ["B-NP", "I-NP", "I-NP", "B-VP", "B-PP", "B-NP"]
    expected = {
        "chunk_words": ["cw=NP:The U.S. economy", "cw=VP:grew", "cw=PP:in", "cw=NP:1999"],
        "chunk_pos": ["cp=NP:DT NNP NN", "cp=VP:VBD", "cp=PP:IN", "cp=NP:CD"],
        "chunk_length": ["cl=NP:3", "cl=VP:1", "cl=PP:1", "cl=NP:1"],
        "chunk_first": ["cf=NP:The", "cf=VP:grew", "cf=PP:in", "cf=NP:1999"],
        "chunk_last": ["cz=NP:economy", "cz=VP:grew", "cz=PP:in", "cz=NP:1999"],
        "chunk_shape": ["cs=NP:Xx X.X. x", "cs=VP:x", "cs=PP:x", "cs=NP:d"],
        "chunk_sequence": ["cseq=NP VP PP NP"],
    }
    assert set(expected) == set(GLOBAL_FEATURES)
    for name, strings in expected.items():
        assert list(GLOBAL_FEATURES[name](tokens, labels)) == strings, name
    counts = candidate_feature_strings(tokens, labels, ["chunk_length"])
    assert counts == {"cl=NP:3": 1, "cl=VP:1": 1, "cl=PP:1": 1, "cl=NP:1": 1}
    # an I- after O starts a chunk (conlleval)
    assert list(GLOBAL_FEATURES["chunk_sequence"](tokens, ["O", "I-NP", "O", "B-VP", "I-VP", "O"])) == ["cseq=NP VP"]


def test_word_shape():
    assert [word_shape(w) for w in ["Hello", "U.S.", "1,000", "iPhone", "ABC"]] == ["Xx", "X.X.", "d,d", "xXx", "X"]


def test_chunk_shape_feature_uses_the_template_shape():
    # one shape for the tagger's `shape` attribute and the reranker's chunk_shape feature: a run of
    # one punctuation character collapses as a run of letters does
    assert ATTRIBUTES["shape"] is word_shape and word_shape("U.S....") == "X.X."
    tokens = {"word": ["U.S....", "--", "Co"], "pos": ["NNP", ":", "NNP"]}
    assert list(GLOBAL_FEATURES["chunk_shape"](tokens, ["B-NP", "I-NP", "I-NP"])) == ["cs=NP:X.X. - Xx"]


def test_unknown_feature_name_and_missing_column():
    with pytest.raises(ConfigError, match="unknown global feature 'nope'"):
        check_feature_names(["chunk_words", "nope"])
    with pytest.raises(ConfigError, match="unknown global feature 'nope'"):
        Reranker(features=["nope"]).fit(small_lists())
    with pytest.raises(ConfigError, match="needs the input column"):
        candidate_feature_strings({"word": ["a"]}, ["B-NP"], ["chunk_pos"])


# ------------------------------------------------------------------------------------ SVMrank files
def small_lists(seed=0, n_sentences=12, k=5):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, 7))
        X.append([(WORDS[i], f"P{j}") for i, j in zip(rng.integers(0, len(WORDS), n), rng.integers(0, 3, n))])
        y.append([CHUNK_TAGS[i] for i in rng.integers(0, len(CHUNK_TAGS), n)])
    corpus = as_corpus(X, y, ["word", "pos"])
    tagger = Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=1, constrain="bio").fit(corpus)
    return nbest_corpus(tagger, corpus, k)


@pytest.mark.parametrize("seed", range(3))
def test_featurize_rows_are_the_candidates_feature_counts(seed):
    nb = small_lists(seed)
    data, vocabulary = featurize(nb, grow=True)
    # ids in order of first appearance, over candidates and then over each candidate's strings
    expected_vocabulary, rows = {}, []
    o = nb.corpus.sentence_offsets
    for i in range(nb.n_sentences):
        tokens = {name: values[o[i]: o[i + 1]] for name, values in nb.corpus.columns.items()}
        for j in range(nb.candidate_offsets[i], nb.candidate_offsets[i + 1]):
            labels = [nb.label_names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]]]
            counts = candidate_feature_strings(tokens, labels, DEFAULT_FEATURES)
            for string in counts:
                expected_vocabulary.setdefault(string, len(expected_vocabulary) + 2)
            rows.append(sorted((expected_vocabulary[f], float(c)) for f, c in counts.items()))
    assert vocabulary == expected_vocabulary
    for r, row in enumerate(rows):
        a, b = data.row_offsets[r], data.row_offsets[r + 1]
        assert list(zip(data.feature_ids[a + 1: b].tolist(), data.values[a + 1: b].tolist())) == row
    # with a fixed vocabulary, strings outside it are dropped
    kept = dict(list(vocabulary.items())[::2])
    fixed, _ = featurize(nb, vocabulary=kept)
    assert set(fixed.feature_ids.tolist()) <= set(kept.values()) | {1}


def test_svmrank_round_trip(tmp_path):
    nb = small_lists()
    data, vocabulary = featurize(nb, grow=True)
    assert min(vocabulary.values()) == 2 and len(set(vocabulary.values())) == len(vocabulary)
    path = tmp_path / "lists.svm"
    with open(path, "w") as out:
        write_svmrank(out, data)
    back = read_svmrank(path)
    for name in ("group_offsets", "row_offsets", "feature_ids", "values", "targets", "qids"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name), err_msg=name)
    assert back.comments == data.comments
    assert back.comments[0].startswith("sentence 0 candidate 0 chunks ")
    np.testing.assert_array_equal(back.qids, np.arange(1, nb.n_sentences + 1))
    # feature 1 is the score relative to the group's 1-best
    first = data.feature_ids[data.row_offsets[:-1]]
    assert np.all(first == 1)
    np.testing.assert_allclose(data.values[data.row_offsets[:-1]],
                               nb.scores - np.repeat(nb.scores[nb.candidate_offsets[:-1]], np.diff(nb.candidate_offsets)))
    # comments carry the counts: corpus F1 of the first rows equals the lists' 1-best F1
    assert chosen_score(back, back.group_offsets[:-1])["f1"] == pytest.approx(nb.corpus_score(nb.first_choice()))


GOOD = "3 qid:1 1:0.5 4:1 # a\n1 qid:1 2:1\n\n# comment line\n2.5 qid:4 1:-1e-3 7:2\n"


@pytest.mark.parametrize("text, line, message", [
    ("1 qid:2 1:1\n0 qid:1 1:1\n", 2, "qids must be grouped and ascending"),
    ("1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 2:1\n", 3, "qids must be grouped and ascending"),
    ("1 qid:1 3:1 2:1\n", 1, "ascending and unique"),
    ("1 qid:1 1:1\n1 qid:1 2:1 2:1\n", 2, "ascending and unique"),
    ("1 qid:1 1:1\nx qid:1 1:1\n", 2, "target 'x' is not a number"),
    ("1 qid:1 1:abc\n", 1, "value of feature 1 'abc' is not a number"),
    ("1 qid:1 1:nan\n", 1, "not finite"),
    ("1 qid:1\n1 1:1\n", 2, "expected '<target> qid:<n>"),
    ("1 qid:a 1:1\n", 1, "qid 'a'"),
    ("1 qid:1 0:1\n", 1, "not positive"),
    ("1 qid:1 1:1 x\n", 1, "feature 'x' is not '<id>:<value>'"),
    ("1 qid:1 -2:1\n", 1, "feature '-2:1'"),
])
def test_svmrank_reader_rejects_with_the_line_number(tmp_path, text, line, message):
    path = tmp_path / "bad.svm"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message) as info:
        read_svmrank(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_svmrank_reader_accepts_generic_files(tmp_path):
    path = tmp_path / "good.svm"
    path.write_text(GOOD)
    data = read_svmrank(path)
    np.testing.assert_array_equal(data.group_offsets, [0, 2, 3])
    np.testing.assert_array_equal(data.qids, [1, 4])
    np.testing.assert_array_equal(data.feature_ids, [1, 4, 2, 1, 7])
    np.testing.assert_array_equal(data.values, [0.5, 1, 1, -1e-3, 2])
    np.testing.assert_array_equal(data.targets, [3, 1, 2.5])
    np.testing.assert_array_equal(data.line_numbers, [1, 2, 5])
    assert data.comments == ["a", "", ""]
    empty = tmp_path / "empty.svm"
    empty.write_text("# nothing\n\n")
    with pytest.raises(InputFormatError, match="no candidates"):
        read_svmrank(empty)


# ------------------------------------------------------------------------------------ the perceptron
def random_groups(rng, n_groups=25, n_features=12, max_candidates=5, with_score=True):
    group_sizes = rng.integers(1, max_candidates + 1, n_groups)
    rows_ids, rows_values = [], []
    for _ in range(group_sizes.sum()):
        ids = np.sort(rng.choice(np.arange(2, n_features), size=int(rng.integers(1, 5)), replace=False))
        values = rng.integers(1, 3, len(ids)).astype(float)
        if with_score:
            ids, values = np.concatenate([[1], ids]), np.concatenate([[-float(rng.integers(0, 4))], values])
        rows_ids.append(ids)
        rows_values.append(values)
    return RankingData(
        np.concatenate([[0], np.cumsum(group_sizes)]).astype(np.int64),
        np.concatenate([[0], np.cumsum([len(r) for r in rows_ids])]).astype(np.int64),
        np.concatenate(rows_ids).astype(np.int64), np.concatenate(rows_values),
        rng.integers(0, 4, group_sizes.sum()).astype(float), np.arange(1, n_groups + 1), [""] * group_sizes.sum(),
    )


def naive_ranking_perceptron(data, epochs, seed, w0, scale):
    """Dense vectors, explicit history of w after every group, explicit average."""
    n = max(data.n_features, len(w0))
    dense = np.zeros((data.n_rows, n))
    for j in range(data.n_rows):
        for k in range(data.row_offsets[j], data.row_offsets[j + 1]):
            v = data.values[k] / (scale if data.feature_ids[k] == 1 else 1.0)
            dense[j, data.feature_ids[k]] += v
    w = np.zeros(n)
    w[: len(w0)] = w0
    history = []
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        for g in rng.permutation(data.n_groups):
            a, b = data.group_offsets[g], data.group_offsets[g + 1]
            if b - a > 1:
                scores = dense[a:b] @ w
                predicted = a + int(np.argmax(scores))
                best = a + int(np.argmax(data.targets[a:b]))
                if data.targets[predicted] < data.targets[best]:
                    w = w + dense[best] - dense[predicted]
            history.append(w.copy())
    return w, np.mean(history, axis=0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("with_score", [False, True])
def test_lazy_average_equals_explicit_average(seed, with_score):
    rng = np.random.default_rng(seed)
    data = random_groups(rng, with_score=with_score)
    reranker = Reranker(epochs=4, seed=seed, score_weight=0.7).fit_ranking(data)
    if with_score:
        values = -data.values[data.feature_ids == 1]
        scale = values[values != 0].mean()
    else:
        scale = 1.0
    assert reranker.score_scale_ == pytest.approx(scale)
    _, average = naive_ranking_perceptron(data, 4, seed, np.array([0.0, 0.7]), scale)
    np.testing.assert_allclose(reranker.weights_, average, atol=1e-12)
    last, _ = naive_ranking_perceptron(data, 4, seed, np.array([0.0, 0.7]), scale)
    plain = Reranker(epochs=4, seed=seed, score_weight=0.7, average=False).fit_ranking(data)
    np.testing.assert_allclose(plain.weights_, last, atol=1e-12)


def test_epoch_kernel_counts_mistakes_and_steps():
    data = RankingData(np.array([0, 2]), np.array([0, 1, 2]), np.array([2, 3]), np.array([1.0, 1.0]),
                       np.array([0.0, 1.0]), np.array([1]), ["", ""])
    w, u = np.zeros(4), np.zeros(4)
    groups = Groups(data.group_offsets, data.row_offsets, data.feature_ids, data.values, data.targets, np.array([1]))
    counter, mistakes = ranking_epoch(w, u, 5.0, groups, np.array([0, 0]))
    # first visit: tie -> row 0 predicted, worse target -> update at counter 5; second visit: right
    assert (counter, mistakes) == (7.0, 1)
    np.testing.assert_array_equal(w, [0, 0, -1, 1])
    np.testing.assert_array_equal(u, [0, 0, -5, 5])


def test_separates_a_separable_problem():
    rng = np.random.default_rng(11)
    # the best candidate of every group carries feature 2; every candidate has noise features
    n_groups, size = 60, 6
    ids, values, targets = [], [], []
    for g in range(n_groups):
        best = int(rng.integers(0, size))
        for r in range(size):
            noise = np.sort(rng.choice(np.arange(3, 40), 3, replace=False))
            row = ([2] if r == best else []) + list(noise)
            ids.append(row)
            values.append([1.0] * len(row))
            targets.append(1.0 if r == best else 0.0)
    data = RankingData(np.arange(0, n_groups * size + 1, size), np.concatenate([[0], np.cumsum([len(r) for r in ids])]),
                       np.concatenate(ids).astype(np.int64), np.concatenate(values), np.array(targets),
                       np.arange(1, n_groups + 1), [""] * (n_groups * size))
    untrained = Reranker(epochs=1, score_weight=0.0)
    untrained.weights_, untrained.score_scale_ = np.zeros(40), 1.0
    assert np.mean(untrained.choose(data) == data.best_rows()) < 0.5
    reranker = Reranker(epochs=10, seed=0, score_weight=0.0).fit_ranking(data)
    np.testing.assert_array_equal(reranker.choose(data), data.best_rows())
    assert reranker.history_[-1]["mistakes"] == 0


def test_reranker_file_round_trip_and_rerank(tmp_path):
    nb = small_lists(seed=3, n_sentences=20)
    reranker = Reranker(epochs=3, seed=1).fit(nb)
    choice = reranker.rerank(nb)
    assert choice.shape == (nb.n_sentences,)
    assert np.all((choice >= nb.candidate_offsets[:-1]) & (choice < nb.candidate_offsets[1:]))
    path = reranker.save(tmp_path / "r.npz")
    loaded = Reranker.load(path)
    assert loaded.vocabulary_ == reranker.vocabulary_
    np.testing.assert_array_equal(loaded.weights_, reranker.weights_)
    np.testing.assert_array_equal(loaded.rerank(nb), choice)
    with np.load(path, allow_pickle=False) as data:
        assert "weights" in data.files
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    from structperc.errors import ModelFileError
    with pytest.raises(ModelFileError):
        Reranker.load(tmp_path / "bad.npz")


def test_untrained_direction_keeps_the_one_best():
    nb = small_lists(seed=4)
    data, vocabulary = featurize(nb, grow=True)
    reranker = Reranker(score_weight=1.0)
    reranker.weights_ = np.zeros(max(vocabulary.values()) + 1)
    reranker.weights_[1] = 1.0
    reranker.score_scale_ = 1.0
    reranker.vocabulary_ = vocabulary
    np.testing.assert_array_equal(reranker.rerank(nb), nb.first_choice())


# ------------------------------------------------------------------------------------ command line
def test_cli_nbest_train_apply_and_errors(tmp_path):
    import json

    from typer.testing import CliRunner

    from structperc.cli.main import app

    runner = CliRunner()
    lines = []
    rng = np.random.default_rng(0)
    for _ in range(15):
        n = int(rng.integers(2, 6))
        tags = ["B-NP"] + [CHUNK_TAGS[i] for i in rng.integers(0, 5, n - 1)]
        lines += [f"{WORDS[i]} P{i % 3} {t}" for i, t in zip(rng.integers(0, len(WORDS), n), tags)] + [""]
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n")
    tagger = Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=2, constrain="bio")
    from structperc.readers import read_corpus
    corpus = read_corpus(tmp_path / "c.txt", columns=["word", "pos", "chunk"])
    tagger.fit(corpus)
    tagger.model_.metadata["input"] = {"format": "conll", "columns": ["word", "pos", "chunk"], "label": "chunk"}
    tagger.save(tmp_path / "m.npz")
    svm, vocab = tmp_path / "c.svm", tmp_path / "v.json"
    result = runner.invoke(app, ["nbest", str(tmp_path / "c.txt"), "--model", str(tmp_path / "m.npz"), "-k", "3",
                                 "--output-format", "svmrank", "--vocab-out", str(vocab), "--output", str(svm), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["oracle"] >= summary["one_best"] and summary["sentences"] == 15
    result = runner.invoke(app, ["rerank", "train", str(svm), "--model", str(tmp_path / "r.npz"), "--vocab", str(vocab)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["rerank", "apply", str(svm), "--model", str(tmp_path / "r.npz")])
    assert result.exit_code == 0, result.output
    out = [l for l in result.stdout.splitlines() if l.strip() and l[0].isdigit()]
    assert len(out) == 15 and out[0].split()[0] == "1" and "# sentence 0 candidate" in out[0]
    (tmp_path / "bad.svm").write_text("1 qid:1 1:1\n1 qid:1 2:1 2:1\n")
    result = runner.invoke(app, ["rerank", "train", str(tmp_path / "bad.svm"), "--model", str(tmp_path / "x.npz")])
    assert result.exit_code == 2 and "bad.svm:2:" in result.output
    for command in (["nbest", "--help"], ["rerank", "train", "--help"], ["rerank", "apply", "--help"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 0 and "Example" in result.output


def test_group_argmax_is_the_first_maximum_of_each_group():
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 5, size=50)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = rng.integers(0, 3, size=int(offsets[-1])).astype(np.float64)  # many ties
    expected = [a + int(np.argmax(values[a:b])) if b > a else -1 for a, b in zip(offsets[:-1], offsets[1:])]
    assert group_argmax(values, offsets).tolist() == expected
