"""Scores and significance tests against hand counts and independent computations."""
import itertools

import numpy as np
import pytest

from structperc.chunks import chunk_spans
from structperc.evaluate.metrics import chunk_scores, evaluate_labels, f1_from_counts, mcnemar, paired_bootstrap


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


@pytest.mark.parametrize("seed", range(10))
def test_f1_from_counts_is_seqeval_f1(seed):
    """The one chunk-count -> F1 of the package, against seqeval on random BIO sentences (through
    chunk_scores), for a corpus, per sentence, and with the value an empty count takes."""
    rng = np.random.default_rng(seed)
    tags = ["B-NP", "I-NP", "B-VP", "O"]
    gold = [[tags[i] for i in rng.integers(0, 4, rng.integers(1, 6))] for _ in range(8)]
    pred = [[tags[i] if rng.random() < 0.7 else "O" for i in rng.integers(0, 4, len(s))] for s in gold]
    counts = []
    for g, p in zip(gold, pred):
        # conlleval's counts, written out: a chunk is correct when type and both ends agree
        gs, ps = set(chunk_spans(g)), set(chunk_spans(p))
        counts.append((len(gs & ps), len(ps), len(gs)))
    counts = np.array(counts)
    assert f1_from_counts(counts.sum(axis=0)) == pytest.approx(chunk_scores(gold, pred)["f1"], abs=1e-9)
    per_sentence = f1_from_counts(counts, empty=100.0)
    for i, (g, p) in enumerate(zip(gold, pred)):
        expected = 100.0 if not counts[i, 1] + counts[i, 2] else chunk_scores([g], [p])["f1"]
        assert per_sentence[i] == pytest.approx(expected, abs=1e-9)
    assert f1_from_counts([0, 0, 0]) == 0.0 and f1_from_counts([0, 0, 0], empty=100.0) == 100.0


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


def test_paired_bootstrap_equals_a_naive_resampling_with_the_same_draws():
    """The p-value against a loop over the same resamples (one draw of samples x n sentence indices
    from the seed), with chunk F1 in exact fractions from span sets, for A better than B and the
    other way round. A resample whose advantage is exactly twice the observed one may fall either
    way in floating point: the p-value must lie between the counts without and with those ties."""
    from fractions import Fraction

    rng = np.random.default_rng(4)
    tags = ["B-NP", "I-NP", "B-VP", "O"]
    gold = [[tags[i] for i in rng.integers(0, 4, rng.integers(2, 7))] for _ in range(15)]
    first = [[t if rng.random() < 0.85 else "O" for t in s] for s in gold]
    second = [[t if rng.random() < 0.85 else "O" for t in s] for s in gold]
    samples, seed = 800, 3

    def counts(predicted):
        return [(len(set(chunk_spans(g)) & set(chunk_spans(p))), len(chunk_spans(p)), len(chunk_spans(g)))
                for g, p in zip(gold, predicted)]

    def f1(rows):
        correct, guessed, true = (sum(column) for column in zip(*rows))
        return Fraction(200 * correct, guessed + true) if guessed + true else Fraction(0)

    draws = np.random.default_rng(seed).integers(0, len(gold), size=(samples, len(gold)))
    for system_a, system_b in ((first, second), (second, first)):
        result = paired_bootstrap(gold, system_a, system_b, samples=samples, seed=seed)
        count_a, count_b = counts(system_a), counts(system_b)
        delta = f1(count_a) - f1(count_b)
        assert delta != 0 and result["delta"] == pytest.approx(float(delta), abs=1e-9)
        assert result["f1_a"] == pytest.approx(chunk_scores(gold, system_a)["f1"], abs=1e-9)
        sign = 1 if delta > 0 else -1  # the share of resamples at least twice as far on the observed side
        beyond = ties = 0
        for picked in draws:
            sample_delta = f1([count_a[s] for s in picked]) - f1([count_b[s] for s in picked])
            beyond += sign * sample_delta > sign * 2 * delta
            ties += sample_delta == 2 * delta
        low, high = (beyond + 1) / (samples + 1), (beyond + ties + 1) / (samples + 1)
        assert 0.05 < low and high < 0.95  # a p-value in between, where a wrong count shows
        assert low - 1e-12 <= result["p_value"] <= high + 1e-12


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
