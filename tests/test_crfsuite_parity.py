"""``structperc.CRF`` with L-BFGS (OWL-QN) follows CRFsuite iteration by iteration: the same features
(an attribute of value 0 makes its (attribute, gold label) pair, as in CRFsuite), the same objective,
the same line search; sklearn-crfsuite's own training log is the reference."""
import numpy as np
import pytest

from structperc import CRF
from structperc.features.dicts import AttributeEncoder


def dicts(seed, n_sentences=30):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, 7))
        words = [f"w{int(rng.integers(0, 12))}" for _ in range(n)]
        X.append([{"bias": 1.0, "w": w, "upper": w.endswith(("1", "2")), "digit": w.endswith("3"),
                   "-1:w": words[i - 1] if i else "", "len": float(len(w)) / 2, "zero": 0}
                  for i, w in enumerate(words)])
        y.append([("B-X" if w < "w5" else "O") if i % 2 == 0 else ("I-X" if w < "w7" else "O")
                  for i, w in enumerate(words)])
    return X, y


def test_attributes_of_value_zero_are_listed_apart():
    X = [[{"a": False, "b": True, "c": 0, "d": 2.0, "e": None}, {"a": True, "c": 0.0}]]
    encoder = AttributeEncoder()
    encoded = encoder.fit_transform(X, ["A", "B"])
    main = [[encoder.attributes_[f] for f in encoded.feature_ids[lo:hi]]
            for lo, hi in zip(encoded.feature_offsets[:-1], encoded.feature_offsets[1:])]
    zero = [[encoder.attributes_[f] for f in encoded.zero_ids[lo:hi]]
            for lo, hi in zip(encoded.zero_offsets[:-1], encoded.zero_offsets[1:])]
    assert main == [["b", "d"], ["a"]]
    assert zero == [["a", "c"], ["c"]]
    assert encoded.feature_values.tolist() == [1.0, 2.0, 1.0]


@pytest.mark.parametrize("seed", range(2))
def test_the_lbfgs_run_is_crfsuites(seed):
    sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")
    X, y = dicts(seed)
    arguments = {"algorithm": "lbfgs", "c1": 0.1, "c2": 0.1, "max_iterations": 15, "all_possible_transitions": True}
    theirs = sklearn_crfsuite.CRF(**arguments).fit(X, y).training_log_.iterations
    ours = CRF(**arguments).fit(X, y).training_log_.iterations
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)
        assert a["active_features"] == b["active_features"]
        assert a["evaluations"] == b["linesearch_trials"]
