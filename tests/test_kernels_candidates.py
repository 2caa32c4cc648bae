"""First-order decoders over per-token candidate sets (the tag dictionary) against brute force over
the labelings inside the sets (tests/naive.py), and against the dense decoders when every token
has every label."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from strategies import chains, pruned_chains
from structperc._kernels.decode.forward_backward import (
    forward_backward,
    forward_backward_candidates,
)
from structperc._kernels.decode.kbest import kbest_candidates, kbest_viterbi
from structperc._kernels.decode.viterbi import viterbi, viterbi_candidates

SETTINGS = settings(max_examples=80, deadline=None)


def sets_of(cand_offsets, cand_labels):
    return naive.candidate_sets(cand_offsets, cand_labels)


@SETTINGS
@given(pruned_chains())
def test_viterbi_matches_brute_force_inside_the_sets(instance):
    emission, transition, end, offsets, labels = instance
    best_y, best_score = naive.ranked_labelings_in(emission, transition, end, sets_of(offsets, labels))[0]
    path, score = viterbi_candidates(emission, transition, end, offsets, labels)
    np.testing.assert_array_equal(path, best_y)  # lowest-index tie break: smallest reversed labeling
    np.testing.assert_allclose(score, best_score, rtol=0, atol=1e-9)


@SETTINGS
@given(pruned_chains(), st.integers(1, 40))
def test_kbest_matches_brute_force_ranking_inside_the_sets(instance, k):
    emission, transition, end, offsets, labels = instance
    ranked = naive.ranked_labelings_in(emission, transition, end, sets_of(offsets, labels))[:k]
    paths, scores = kbest_candidates(emission, transition, end, k, offsets, labels)
    assert paths.shape == (len(ranked), emission.shape[0])
    for j, (y, s) in enumerate(ranked):
        np.testing.assert_array_equal(paths[j], y, err_msg=f"rank {j}")
        np.testing.assert_allclose(scores[j], s, rtol=0, atol=1e-9)


@SETTINGS
@given(pruned_chains(integer=False, scale=2.0))
def test_log_z_and_marginals_match_brute_force_inside_the_sets(instance):
    emission, transition, end, offsets, labels = instance
    log_z_expected, node_expected, edge_expected = naive.marginals_in(emission, transition, end,
                                                                      sets_of(offsets, labels))
    log_z, node, edge = forward_backward_candidates(emission, transition, end, offsets, labels)
    np.testing.assert_allclose(log_z, log_z_expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(node, node_expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge, edge_expected, rtol=0, atol=1e-9)


@SETTINGS
@given(chains(), st.integers(1, 30))
def test_every_label_everywhere_gives_the_dense_results_exactly(instance, k):
    emission, transition, end = instance
    n, n_labels = emission.shape
    offsets, labels = naive.all_candidates(n, n_labels)
    path, score = viterbi(emission, transition, end)
    path_c, score_c = viterbi_candidates(emission, transition, end, offsets, labels)
    if np.isfinite(score):
        np.testing.assert_array_equal(path_c, path)
    assert score_c == score
    paths, scores = kbest_viterbi(emission, transition, end, k)
    paths_c, scores_c = kbest_candidates(emission, transition, end, k, offsets, labels)
    np.testing.assert_array_equal(paths_c, paths)
    np.testing.assert_array_equal(scores_c, scores)
    log_z, node, edge = forward_backward(emission, transition, end)
    log_z_c, node_c, edge_c = forward_backward_candidates(emission, transition, end, offsets, labels)
    assert log_z_c == log_z
    np.testing.assert_array_equal(node_c, node)
    np.testing.assert_array_equal(edge_c, edge)


@SETTINGS
@given(pruned_chains())
def test_sets_equal_masking_the_emission(instance):
    # restricting to the candidates is the dense decoder on emissions set to -inf off the sets
    emission, transition, end, offsets, labels = instance
    masked = np.full_like(emission, -np.inf)
    for t, s in enumerate(sets_of(offsets, labels)):
        masked[t, s] = emission[t, s]
    path, score = viterbi(masked, transition, end)
    path_c, score_c = viterbi_candidates(emission, transition, end, offsets, labels)
    np.testing.assert_array_equal(path_c, path)
    assert score_c == score


def test_empty_sentence():
    empty = np.zeros(1, dtype=np.int64)
    no_labels = np.zeros(0, dtype=np.int64)
    emission, transition, end = np.zeros((0, 2)), np.zeros((1, 3, 2)), np.zeros(2)
    path, score = viterbi_candidates(emission, transition, end, empty, no_labels)
    assert path.shape == (0,) and score == 0.0
    paths, scores = kbest_candidates(emission, transition, end, 3, empty, no_labels)
    assert paths.shape == (1, 0) and scores.tolist() == [0.0]
    log_z, node, edge = forward_backward_candidates(emission, transition, end, empty, no_labels)
    assert log_z == 0.0 and node.shape == (0, 2)


def test_an_empty_tag_dictionary_row_takes_every_label():
    # a word the dictionary leaves free has an empty row; decoding must equal the row written out
    from structperc.corpus import as_corpus
    from structperc.estimator.tagger import Tagger

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    X = [[words[i] for i in rng.integers(0, 30, size=rng.integers(2, 8))] for _ in range(80)]
    y = [[f"T{(int(w[1:]) + (rng.random() < 0.3)) % 7}" for w in sentence] for sentence in X]
    tagger = Tagger(templates="pos", epochs=2, tag_dict=4, all_pairs=True).fit(X, y)
    model = tagger.model_
    offsets, labels = model.tag_dict
    counts = np.diff(offsets)
    assert (counts == 0).any() and (counts > 0).any()
    encoded = tagger.encode_input(as_corpus(X + [["unseen", "w1"]], None, None))
    ids, scores = model.decode(encoded)
    rows = [labels[offsets[i]: offsets[i + 1]] if counts[i] else np.arange(model.n_labels)
            for i in range(len(counts))]
    model.tag_dict = (np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64),
                      np.concatenate(rows).astype(np.int64))
    ids_full, scores_full = model.decode(encoded)
    np.testing.assert_array_equal(ids, ids_full)
    np.testing.assert_array_equal(scores, scores_full)
