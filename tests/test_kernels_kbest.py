"""Exact k-best Viterbi against the brute-force ranking of every labeling (tests/naive.py)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from strategies import chains
from structperc._kernels.decode.kbest import kbest_viterbi
from structperc._kernels.decode.viterbi import viterbi

SETTINGS = settings(max_examples=100, deadline=None)


def assert_matches_ranking(emission, transition, end, k):
    ranked = naive.ranked_labelings(emission, transition, end)[:k]
    paths, scores = kbest_viterbi(emission, transition, end, k)
    n = emission.shape[0]
    assert paths.dtype == np.int64 and paths.shape == (len(ranked), n)
    assert scores.shape == (len(ranked),)
    for j, (y, s) in enumerate(ranked):
        np.testing.assert_array_equal(paths[j], y, err_msg=f"rank {j}")
        np.testing.assert_allclose(scores[j], s, rtol=0, atol=1e-9)
    assert np.isfinite(scores).all()


@SETTINGS
@given(chains(integer=True), st.integers(1, 100))
def test_integer_weights_match_ranking_with_ties(instance, k):
    assert_matches_ranking(*instance, k)


@SETTINGS
@given(chains(integer=False), st.integers(1, 100))
def test_float_weights_match_ranking(instance, k):
    assert_matches_ranking(*instance, k)


@settings(max_examples=40, deadline=None)
@given(chains())
def test_k_larger_than_number_of_labelings(instance):
    emission, transition, end = instance
    n, n_labels = emission.shape
    n_finite = len(naive.ranked_labelings(emission, transition, end))
    k = n_labels**n + 5
    paths, _ = kbest_viterbi(emission, transition, end, k)
    assert paths.shape[0] == n_finite
    assert_matches_ranking(emission, transition, end, k)


@SETTINGS
@given(chains(), st.integers(1, 20))
def test_first_path_is_viterbi(instance, k):
    emission, transition, end = instance
    best_path, best_score = viterbi(emission, transition, end)
    paths, scores = kbest_viterbi(emission, transition, end, k)
    np.testing.assert_array_equal(paths[0], best_path)
    assert scores[0] == best_score


def test_everything_forbidden_gives_no_paths():
    emission = np.zeros((3, 2))
    emission[1] = -np.inf
    paths, scores = kbest_viterbi(emission, np.zeros((1, 3, 2)), np.zeros(2), 5)
    assert paths.shape == (0, 3) and scores.shape == (0,)


def test_all_ties_enumerate_in_reversed_lexicographic_order():
    # Every labeling scores 0, so the order is purely the tie rule.
    paths, scores = kbest_viterbi(np.zeros((3, 2)), np.zeros((1, 3, 2)), np.zeros(2), 8)
    expected = [(a, b, c) for c in range(2) for b in range(2) for a in range(2)]
    assert [tuple(p) for p in paths] == expected
    assert (scores == 0.0).all()


def test_k_zero_and_empty_sentence():
    paths, scores = kbest_viterbi(np.zeros((2, 2)), np.zeros((1, 3, 2)), np.zeros(2), 0)
    assert paths.shape == (0, 2) and scores.shape == (0,)
    paths, scores = kbest_viterbi(np.zeros((0, 2)), np.zeros((1, 3, 2)), np.zeros(2), 3)
    assert paths.shape == (1, 0) and scores.tolist() == [0.0]
