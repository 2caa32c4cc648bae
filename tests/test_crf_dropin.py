"""What sklearn-crfsuite's users do with a ``CRF`` beyond fit and predict: save it and get it back,
point it at a model file, read its attributes before and after fit, watch the iterations, ask
every model for marginals, and pass bytes."""
import itertools
import json
import os

import numpy as np
import pytest
import forked_cli

import structperc
from structperc import CRF
from structperc.errors import DataError, ModelFileError

ALGORITHMS = ["lbfgs", "l2sgd", "ap", "pa", "arow"]


def data(seed=0, n_sentences=40, labels=("N", "V", "D")):
    """Feature dicts whose word mostly gives the label, with a real-valued and a boolean feature."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        tags = [labels[int(i)] for i in rng.integers(0, len(labels), int(rng.integers(1, 5)))]
        X.append([{"bias": 1.0, "word": f"{tag.lower()}{int(rng.integers(0, 3))}" if rng.random() < 0.8 else "zz",
                   "length": float(rng.integers(1, 9)) / 4, "upper": bool(rng.random() < 0.3)} for tag in tags])
        y.append(tags)
    return X, y


@pytest.fixture(scope="module", params=ALGORITHMS)
def fitted(request):
    X, y = data()
    return CRF(algorithm=request.param, max_iterations=5).fit(X, y), X, y


def test_attributes_are_none_before_fit():
    crf = CRF()
    for name in ("tagger_", "size_", "classes_", "num_attributes_", "attributes_", "state_features_",
                 "transition_features_", "training_log_"):
        assert getattr(crf, name) is None, name
    with pytest.raises(Exception, match="not fitted"):
        crf.predict([[{"w": "a"}]])


def test_attributes_after_fit(fitted, tmp_path):
    crf, X, y = fitted
    assert crf.classes_ == crf.tagger_.labels() == ["D", "N", "V"]
    assert crf.num_attributes_ == len(crf.attributes_) > 0
    # every attribute with a state feature is listed, in CRFsuite's key:value spelling
    assert {attribute for attribute, _ in crf.state_features_} <= set(crf.attributes_)
    assert "bias" in crf.attributes_ and any(a.startswith("word:") for a in crf.attributes_)
    path = crf.save(tmp_path / "model.npz")
    assert crf.size_ == os.path.getsize(path) > 0


def test_save_and_load_model_give_back_the_crf(fitted, tmp_path):
    crf, X, y = fitted
    path = tmp_path / "crf.npz"
    crf.save(path)
    for loaded in (structperc.load_model(path), CRF.load(path)):
        assert type(loaded) is CRF
        assert loaded.get_params() == {**crf.get_params(), "model_filename": None}
        assert loaded.predict(X) == crf.predict(X)
        assert loaded.predict_single(X[0]) == crf.predict_single(X[0])
        assert loaded.state_features_ == crf.state_features_
        assert loaded.training_log_ is None  # the log stays with the estimator that trained


def test_model_filename_is_written_at_fit_and_read_before_one(tmp_path):
    X, y = data(1)
    path = tmp_path / "tagger.model"
    crf = CRF(algorithm="ap", max_iterations=3, model_filename=str(path))
    assert crf.tagger_ is None and not path.exists()
    crf.fit(X, y)
    assert path.is_file() and crf.size_ == path.stat().st_size
    reader = CRF(model_filename=str(path))  # no fit: the file is the model
    assert reader.predict(X) == crf.predict(X) and reader.classes_ == crf.classes_
    # a new fit with the same file name replaces the model in it
    CRF(algorithm="ap", max_iterations=1, model_filename=str(path)).fit(X[:3], [["N"] * len(s) for s in X[:3]])
    assert set(CRF(model_filename=str(path)).classes_) == {"N"}


def test_a_crfsuite_model_file_is_refused_in_one_line(tmp_path):
    path = tmp_path / "model.crfsuite"
    path.write_bytes(b"lCRF\x00\x00\x01\x00" + bytes(64))
    with pytest.raises(ModelFileError, match="not a structperc model file") as error:
        CRF(model_filename=str(path)).predict([[{"w": "a"}]])
    assert "\n" not in str(error.value)


def test_a_token_column_model_is_not_a_crf(tmp_path):
    tagger = structperc.Tagger(templates=["w[0]"], epochs=1).fit([["a", "b"]], [["X", "Y"]])
    tagger.save(tmp_path / "t.npz")
    assert type(structperc.load_model(tmp_path / "t.npz")) is structperc.Tagger
    with pytest.raises(ModelFileError, match="feature dicts"):
        CRF.load(tmp_path / "t.npz")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_verbose_prints_one_line_per_iteration(algorithm, capsys):
    X, y = data(2, 20)
    crf = CRF(algorithm=algorithm, max_iterations=3, verbose=True).fit(X, y, X[:5], y[:5])
    lines = capsys.readouterr().out.splitlines()
    iterations = crf.training_log_.iterations
    assert len(lines) == len(iterations) >= 1
    for number, (line, entry) in enumerate(zip(lines, iterations), start=1):
        assert line.startswith(f"Iter {number} ") and f"loss={entry['loss']:.2f}" in line
        assert f"accuracy={entry['scores']['accuracy'] / 100:.3f}" in line


def test_without_verbose_nothing_is_printed(capsys):
    X, y = data(2, 10)
    CRF(algorithm="ap", max_iterations=2).fit(X, y)
    assert capsys.readouterr().out == ""


def brute_force_node_marginals(model, encoded, sentence):
    """P(y_t = c | x) ∝ exp(w · Φ(x, y)) summed over every labeling y of the sentence."""
    n_labels = len(model.labels)
    n = int(encoded.sentence_offsets[sentence + 1] - encoded.sentence_offsets[sentence])
    labelings = list(itertools.product(range(n_labels), repeat=n))
    scores = np.array([model.score(encoded, sentence, y) for y in labelings])
    p = np.exp(scores - np.logaddexp.reduce(scores))
    node = np.zeros((n, n_labels))
    for y, probability in zip(labelings, p):
        node[np.arange(n), list(y)] += probability
    return node


def test_marginals_for_every_algorithm_come_from_the_weights(fitted):
    crf, X, _ = fitted
    model = crf.tagger_.model_
    assert model.constrain in (None, "none")  # labels N, V, D: no chunk scheme, no forbidden labeling
    encoded = model.encoder.transform(X[:6])
    for s, sentence in enumerate(crf.predict_marginals(X[:6])):
        got = np.array([[token[label] for label in model.labels] for token in sentence])
        np.testing.assert_allclose(got, brute_force_node_marginals(model, encoded, s), atol=1e-9)
    assert crf.predict_marginals_single(X[0]) == crf.predict_marginals(X[:1])[0]


def test_utf8_bytes_values_train_the_same_model_as_str():
    X, y = data(3, 25)
    as_bytes = [[{k: v.encode("utf-8") if isinstance(v, str) else v for k, v in token.items()} for token in s]
                for s in X]
    as_bytes[0][0]["word"] = "café".encode("utf-8")
    X[0][0]["word"] = "café"
    from_str = CRF(algorithm="ap", max_iterations=3).fit(X, y)
    from_bytes = CRF(algorithm="ap", max_iterations=3).fit(as_bytes, y)
    assert from_bytes.state_features_ == from_str.state_features_
    assert from_bytes.predict(as_bytes) == from_str.predict(X)
    tokens = [[{"tags": [b"a", "b"]}, {"tags": [b"b"]}]]
    assert CRF(algorithm="ap", max_iterations=1).fit(tokens, [["X", "Y"]]).num_attributes_ >= 1


def test_other_bytes_are_refused_in_one_line():
    with pytest.raises(DataError, match=r"feature 'word': the bytes value b'\\xff\\xfeab' is not UTF-8") as error:
        CRF().fit([[{"word": b"\xff\xfeab"}]], [["X"]])
    assert "\n" not in str(error.value)


def test_pa_and_arow_parameters_reach_their_rules():
    X, y = data(4, 20)
    pa = CRF(algorithm="pa", pa_type=2, c=0.25, error_sensitive=False, averaging=False, max_iterations=2).fit(X, y)
    options = pa.tagger_.model_.metadata["training"]["trainer_options"]
    assert options == {"pa_type": 2, "aggressiveness": 0.25, "error_sensitive": False, "average": False}
    arow = CRF(algorithm="arow", variance=0.5, gamma=2.0, max_iterations=2).fit(X, y)
    assert arow.tagger_.model_.metadata["training"]["trainer_options"] == {"variance": 0.5, "gamma": 2.0}


def test_a_saved_crf_tags_on_the_command_line(tmp_path):
    """The file is a structperc model like any other: ``info`` reads it without scikit-learn's CRF."""
    X, y = data(5, 10)
    path = tmp_path / "crf.npz"
    CRF(algorithm="ap", max_iterations=2, model_filename=str(path)).fit(X, y)
    done = forked_cli.run(["info", path, "--json"], timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["labels"] == ["D", "N", "V"]
