"""``structperc.CRF`` against python-crfsuite's own model (same features, same arguments), its
scikit-learn behaviour (clone, repr, pickle, joblib) and its misuse errors."""
import io
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone

from structperc import CRF
from structperc.errors import ConfigError

pycrfsuite = pytest.importorskip("pycrfsuite")

LABELS = ["B-X", "I-X", "O", "B-Y"]


def corpus(seed=1, n_sentences=120):
    """Random feature dicts (str, real and bool values, a feature of the previous token) whose
    labels the features predict in part."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        labels = [LABELS[int(rng.integers(0, 4))] for _ in range(int(rng.integers(2, 8)))]
        sentence = []
        for label in labels:
            word = f"{label[0]}{int(rng.integers(0, 6))}" if rng.random() < 0.7 else f"z{int(rng.integers(0, 9))}"
            token = {"bias": 1.0, "w": word, "num": float(rng.random()) if rng.random() < 0.5 else 0.0,
                     "flag": bool(rng.random() < 0.3)}
            if sentence:
                token["-1:w"] = sentence[-1]["w"]
            sentence.append(token)
        X.append(sentence)
        y.append(labels)
    return X, y


def crfsuite_model(tmp_path, X, y, c1, c2, all_possible_transitions):
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": c1, "c2": c2, "max_iterations": 3000, "epsilon": 1e-9, "delta": 1e-12,
                        "feature.possible_transitions": all_possible_transitions})
    path = str(tmp_path / "model.crfsuite")
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return tagger


# Both run to convergence (epsilon 1e-9, delta 1e-12) on the same strictly convex objective:
# weights agree to 1e-3 and marginals to 1e-4 (measured: 4e-5 and 6e-7).
@pytest.mark.parametrize("c1, all_possible_transitions", [(0.0, True), (0.1, False)])
def test_weights_and_marginals_agree_with_crfsuite(tmp_path, c1, all_possible_transitions):
    X, y = corpus()
    theirs = crfsuite_model(tmp_path, X, y, c1, 0.1, all_possible_transitions)
    info = theirs.info()
    crf = CRF(algorithm="lbfgs", c1=c1, c2=0.1, max_iterations=3000, epsilon=1e-9, delta=1e-12,
              all_possible_transitions=all_possible_transitions).fit(X, y)
    ours = crf.state_features_
    assert set(ours) == set(info.state_features)
    for key, weight in info.state_features.items():
        assert ours[key] == pytest.approx(weight, abs=1e-3)
    transitions = crf.transition_features_
    for key in set(transitions) | set(info.transitions):
        assert transitions.get(key, 0.0) == pytest.approx(info.transitions.get(key, 0.0), abs=1e-3)
    for xseq in X[:5]:
        theirs.set(xseq)
        expected = [[theirs.marginal(label, t) for label in crf.classes_] for t in range(len(xseq))]
        got = [[token[label] for label in crf.classes_] for token in crf.predict_marginals_single(xseq)]
        np.testing.assert_allclose(got, expected, atol=1e-4)
        assert crf.predict_single(xseq) == theirs.tag(xseq)
    if c1 > 0:  # OWL-QN's exact zeros: as many weights as CRFsuite keeps
        assert len(ours) == len(info.state_features) < crf.tagger_.model_.encoder.n_features_ * len(LABELS)


@pytest.fixture(scope="module")
def fitted():
    X, y = corpus(2, 60)
    return CRF(c1=0.05, c2=0.1, max_iterations=30).fit(X[:50], y[:50], X[50:], y[50:]), X, y


def test_fitted_attributes(fitted):
    crf, X, y = fitted
    assert sorted(crf.classes_) == sorted(LABELS)
    log = crf.training_log_
    assert 1 <= len(log.iterations) <= 30 and log.last_iteration is log.iterations[-1]
    assert "loss" in log.last_iteration and "scores" in log.last_iteration
    assert ("w:B0", "B-X") in crf.state_features_ or ("w:B0", "B-Y") in crf.state_features_
    assert crf.size_ > 0
    predicted = crf.predict(X[50:])
    accuracy = np.mean([a == b for p, g in zip(predicted, y[50:]) for a, b in zip(p, g)])
    assert crf.score(X[50:], y[50:]) == pytest.approx(accuracy) and 0 < accuracy <= 1
    for token in crf.predict_marginals(X[:3])[0]:
        assert sum(token.values()) == pytest.approx(1.0)


def test_clone_repr_pickle_joblib(fitted):
    crf, X, _ = fitted
    assert repr(CRF(c1=0.1, all_possible_transitions=True)) == "CRF(all_possible_transitions=True, c1=0.1)"
    copy = clone(crf)
    assert copy.get_params() == crf.get_params() and copy.tagger_ is None
    again = pickle.loads(pickle.dumps(crf))
    assert again.predict(X) == crf.predict(X)
    buffer = io.BytesIO()
    joblib.dump(crf, buffer)
    buffer.seek(0)
    assert joblib.load(buffer).state_features_ == crf.state_features_


@pytest.mark.parametrize("params, match", [
    ({"algorithm": "newton"}, "newton"),
    ({"algorithm": "arow", "c": 0.5}, "c=0.5 does not apply to algorithm 'arow'"),
    ({"algorithm": "pa", "gamma": 0.5}, "gamma"),
    ({"algorithm": "ap", "c2": 0.1}, "c2"),
    ({"algorithm": "l2sgd", "c1": 0.1}, "c1"),
    ({"algorithm": "pa", "pa_type": 3}, "pa_type"),
    ({"algorithm": "lbfgs", "pa_type": 1}, "pa_type"),
    ({"algorithm": "pa", "c": 0.0}, "c=0.0 must be > 0"),
    ({"num_memories": 10}, "num_memories"),
    ({"linesearch": "Backtracking"}, "linesearch"),
    ({"keep_tempfiles": True}, "keep_tempfiles"),
    ({"c2": -1.0}, "c2"),
])
def test_misuse_is_an_error_naming_the_parameter(params, match):
    X, y = corpus(3, 5)
    with pytest.raises(ConfigError, match=match):
        CRF(**params).fit(X, y)


def test_dev_data_needs_both_halves():
    X, y = corpus(3, 5)
    with pytest.raises(ValueError, match="both"):
        CRF().fit(X, y, X_dev=X)


@pytest.mark.parametrize("algorithm, trainer", [("l2sgd", "crf"), ("ap", "perceptron"), ("pa", "pa"),
                                               ("arow", "arow")])
def test_other_algorithms_map_to_rules(algorithm, trainer):
    X, y = corpus(4, 30)
    crf = CRF(algorithm=algorithm, max_iterations=2).fit(X, y)
    assert crf.tagger_.trainer == trainer and len(crf.training_log_.iterations) == 2
