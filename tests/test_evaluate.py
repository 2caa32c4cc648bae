"""Scores and significance tests against hand counts and independent computations."""
import itertools

import numpy as np
import pytest

from structperc.evaluate.metrics import chunk_scores, evaluate_labels, mcnemar, paired_bootstrap


def test_chunk_scores_count_like_conlleval():
    gold = [["B-NP", "I-NP", "O", "B-VP"], ["B-NP", "B-NP"]]
    pred = [["B-NP", "I-NP", "O", "B-NP"], ["B-NP", "I-NP"]]
    # gold chunks: NP(0-1) VP(3) | NP(0) NP(1); predicted: NP(0-1) NP(3) | NP(0-1); correct: 1
    s = chunk_scores(gold, pred)
    assert s["precision"] == pytest.approx(100 / 3)
    assert s["recall"] == pytest.approx(100 / 4)
    assert s["f1"] == pytest.approx(200 / 7)
    assert s["per_type"]["VP"]["recall"] == 0.0
    assert s["per_type"]["NP"]["support"] == 3


def test_evaluate_labels_accuracy():
    gold = ["A", "B", "B", "A"]
    pred = ["A", "B", "A", "A"]
    r = evaluate_labels(gold, pred, np.array([0, 2, 4]), chunks=False)
    assert r["accuracy"] == 75.0 and r["tokens"] == 4 and r["sentences"] == 2


def exact_two_sided_binomial(k, n):
    """P(X <= k or X >= n - k) for X ~ Bin(n, 1/2), by enumerating all 2^n outcomes."""
    hits = sum(1 for bits in itertools.product((0, 1), repeat=n) if min(sum(bits), n - sum(bits)) <= k)
    return hits / 2**n


@pytest.mark.parametrize("a_only, b_only", [(3, 9), (0, 5), (6, 6), (1, 12)])
def test_mcnemar_exact_matches_enumeration(a_only, b_only):
    gold = ["X"] * (a_only + b_only + 5)
    a = ["X"] * a_only + ["Y"] * b_only + ["X"] * 5
    b = ["Y"] * a_only + ["X"] * b_only + ["X"] * 5
    r = mcnemar(gold, a, b)
    assert (r["a_only"], r["b_only"]) == (a_only, b_only)
    assert r["p_value"] == pytest.approx(min(1.0, exact_two_sided_binomial(min(a_only, b_only), a_only + b_only)))


def test_mcnemar_large_sample_chi_square():
    gold = ["X"] * 300
    a = ["X"] * 100 + ["Y"] * 60 + ["X"] * 140
    b = ["Y"] * 100 + ["X"] * 60 + ["X"] * 140
    r = mcnemar(gold, a, b)
    assert r["statistic"] == pytest.approx((40 - 1) ** 2 / 160)
    assert r["p_value"] == pytest.approx(0.0020477, abs=1e-6)  # chi2(1) survival at 9.50625 (scipy.stats.chi2.sf)


def test_paired_bootstrap_identical_and_clearly_better_systems():
    rng = np.random.default_rng(0)
    gold = [["B-NP", "I-NP", "O"] * 3 for _ in range(200)]
    perfect = [list(s) for s in gold]
    noisy = [[("O" if rng.random() < 0.3 else t) for t in s] for s in gold]
    same = paired_bootstrap(gold, perfect, perfect, samples=500)
    assert same["delta"] == 0 and same["p_value"] > 0.5
    better = paired_bootstrap(gold, perfect, noisy, samples=500)
    assert better["f1_a"] == 100.0 and better["delta"] > 10
    assert better["p_value"] < 0.01
    assert better["f1_b"] == pytest.approx(chunk_scores(gold, noisy)["f1"])
