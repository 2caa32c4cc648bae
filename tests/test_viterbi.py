"""First-order Viterbi and Hamming cost augmentation against brute force (tests/naive.py)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from strategies import chains
from structperc._kernels.decode.viterbi import viterbi

SETTINGS = settings(max_examples=100, deadline=None)


@SETTINGS
@given(chains(integer=True))
def test_viterbi_matches_brute_force_including_ties(instance):
    emission, transition, end = instance
    expected_path, expected_score = naive.brute_force_best(emission, transition, end)
    path, score = viterbi(emission, transition, end)
    assert path.dtype == np.int64
    np.testing.assert_array_equal(path, expected_path)
    assert score == expected_score
    assert score == naive.sequence_score(emission, transition, end, path)


def test_viterbi_all_ties_returns_all_zeros():
    path, score = viterbi(np.zeros((4, 3)), np.zeros((1, 4, 3)), np.zeros(3))
    assert path.tolist() == [0, 0, 0, 0] and score == 0.0


@SETTINGS
@given(chains(integer=True), st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_hamming_augmented_viterbi_matches_brute_force(instance, seed, cost):
    emission, transition, end = instance
    n, n_labels = emission.shape
    gold = np.random.default_rng(seed).integers(0, n_labels, size=n)
    augmented = naive.add_hamming_cost(emission, gold, float(cost))
    expected_path, expected_value = naive.hamming_augmented_best(emission, transition, end, gold, cost)
    path, score = viterbi(augmented, transition, end)
    np.testing.assert_array_equal(path, expected_path)
    assert score == expected_value


def test_add_hamming_cost_leaves_gold_and_input_alone():
    emission = np.array([[1.0, -np.inf, 0.0], [2.0, 3.0, -np.inf]])
    before = emission.copy()
    augmented = naive.add_hamming_cost(emission, np.array([2, 0]), 0.5)
    np.testing.assert_array_equal(emission, before)
    np.testing.assert_array_equal(augmented, [[1.5, -np.inf, 0.0], [2.0, 3.5, -np.inf]])
