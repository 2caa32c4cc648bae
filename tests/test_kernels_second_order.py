"""Second-order Viterbi with candidate pruning against brute-force enumeration (tests/naive.py)."""
import numpy as np
from hypothesis import given, settings

import naive
from strategies import trigram_chains
from naive import all_candidates
from structperc._kernels.decode.second_order import viterbi2

SETTINGS = settings(max_examples=200, deadline=None)


def assert_matches_brute_force(emission, transition2, end, cand_offsets, cand_labels):
    expected_path, expected_score = naive.ranked_labelings2(
        emission, transition2, end, cand_offsets, cand_labels
    )[0]
    path, score = viterbi2(emission, transition2, end, cand_offsets, cand_labels)
    assert path.dtype == np.int64
    np.testing.assert_array_equal(path, expected_path)
    assert score == expected_score
    assert score == naive.sequence_score2(emission, transition2, end, path)


@SETTINGS
@given(trigram_chains(pruned=False))
def test_all_candidates_matches_brute_force_including_ties(instance):
    assert_matches_brute_force(*instance)


@SETTINGS
@given(trigram_chains(pruned=True))
def test_pruned_candidates_match_restricted_brute_force(instance):
    emission, transition2, end, cand_offsets, cand_labels = instance
    assert_matches_brute_force(*instance)
    path, _ = viterbi2(*instance)
    for t, allowed in enumerate(naive.candidate_sets(cand_offsets, cand_labels)):
        assert path[t] in allowed


@settings(max_examples=60, deadline=None)
@given(trigram_chains(pruned=True))
def test_pruning_equals_masking_the_emission(instance):
    # Restricting to candidates is the same as setting non-candidate emissions to -inf.
    emission, transition2, end, cand_offsets, cand_labels = instance
    n, n_labels = emission.shape
    masked = np.full_like(emission, -np.inf)
    for t, allowed in enumerate(naive.candidate_sets(cand_offsets, cand_labels)):
        masked[t, allowed] = emission[t, allowed]
    path, score = viterbi2(*instance)
    full_path, full_score = viterbi2(masked, transition2, end, *all_candidates(n, n_labels))
    np.testing.assert_array_equal(path, full_path)
    assert score == full_score


def test_all_candidates_layout():
    offsets, labels = all_candidates(3, 2)
    assert offsets.dtype == np.int64 and labels.dtype == np.int64
    assert offsets.tolist() == [0, 2, 4, 6]
    assert labels.tolist() == [0, 1, 0, 1, 0, 1]


def test_all_ties_returns_all_zeros():
    n, n_labels = 4, 3
    path, score = viterbi2(np.zeros((n, n_labels)), np.zeros((1, 4, 4, 3)), np.zeros(3),
                           *all_candidates(n, n_labels))
    assert path.tolist() == [0, 0, 0, 0] and score == 0.0


def test_uses_second_order_context():
    # Label 1 pays off only after the pair (0, 0): a first-order model cannot see it.
    n_labels = 2
    transition2 = np.zeros((1, 3, 3, 2))
    transition2[0, 0, 0, 1] = 5.0
    emission = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    path, score = viterbi2(emission, transition2, np.zeros(2), *all_candidates(3, n_labels))
    assert path.tolist() == [0, 0, 1] and score == 8.0


def test_empty_sentence():
    path, score = viterbi2(np.zeros((0, 2)), np.zeros((1, 3, 3, 2)), np.zeros(2), *all_candidates(0, 2))
    assert path.shape == (0,) and score == 0.0


def test_final_tie_prefers_lowest_last_label():
    # [0, 1] and [1, 0] tie at 0, [0, 0] and [1, 1] score -1: the smaller reversed sequence wins.
    transition2 = np.zeros((1, 3, 3, 2))
    transition2[0, 2, 0, 0] = transition2[0, 2, 1, 1] = -1.0
    path, score = viterbi2(np.zeros((2, 2)), transition2, np.zeros(2), *all_candidates(2, 2))
    assert path.tolist() == [1, 0] and score == 0.0
