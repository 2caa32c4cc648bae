"""First-order Viterbi and Hamming cost augmentation against brute force (tests/naive.py)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from structperc._kernels.cost import add_hamming_cost
from structperc._kernels.viterbi import viterbi

SETTINGS = settings(max_examples=100, deadline=None)


@st.composite
def chains(draw):
    """A random first-order instance (n 1..5, L 1..4) with integer weights, so ties are frequent
    and exact; optionally masked with -inf, one random labeling kept finite."""
    n = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 4))
    per_token = draw(st.booleans())
    masked = draw(st.booleans())
    # weights in [-high, high]; high = 1 makes ties very frequent
    high = draw(st.sampled_from([1, 2]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = n if per_token else 1

    def weights(shape):
        return rng.integers(-high, high + 1, size=shape).astype(np.float64)

    emission = weights((n, n_labels))
    transition = weights((m, n_labels + 1, n_labels))
    end = weights(n_labels)
    if masked:
        emission[rng.random(emission.shape) < 0.3] = -np.inf
        transition[rng.random(transition.shape) < 0.3] = -np.inf
        end[rng.random(end.shape) < 0.3] = -np.inf
        y = rng.integers(0, n_labels, size=n)
        prev = n_labels
        for t, c in enumerate(y):
            emission[t, c] = weights(())
            transition[t if per_token else 0, prev, c] = weights(())
            prev = c
        end[prev] = weights(())
    return emission, transition, end


@SETTINGS
@given(chains())
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
@given(chains(), st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_hamming_augmented_viterbi_matches_brute_force(instance, seed, cost):
    emission, transition, end = instance
    n, n_labels = emission.shape
    gold = np.random.default_rng(seed).integers(0, n_labels, size=n)
    augmented = add_hamming_cost(emission, gold, float(cost))
    expected_path, expected_value = naive.hamming_augmented_best(emission, transition, end, gold, cost)
    path, score = viterbi(augmented, transition, end)
    np.testing.assert_array_equal(path, expected_path)
    assert score == expected_value


def test_add_hamming_cost_leaves_gold_and_input_alone():
    emission = np.array([[1.0, -np.inf, 0.0], [2.0, 3.0, -np.inf]])
    before = emission.copy()
    augmented = add_hamming_cost(emission, np.array([2, 0]), 0.5)
    np.testing.assert_array_equal(emission, before)
    np.testing.assert_array_equal(augmented, [[1.5, -np.inf, 0.0], [2.0, 3.5, -np.inf]])
