"""Forward-backward kernels against brute-force enumeration (tests/naive.py)."""
import numpy as np
from hypothesis import given, settings

import naive
from strategies import chains
from structperc._kernels.decode.forward_backward import (
    forward_backward,
    forward_backward_scaled,
    log_partition,
    log_sum_exp,
)

SETTINGS = settings(max_examples=80, deadline=None)


def test_log_sum_exp_edge_cases():
    assert log_sum_exp(np.array([-np.inf, -np.inf])) == -np.inf
    assert log_sum_exp(np.empty(0)) == -np.inf
    assert log_sum_exp(np.array([1000.0, 1000.0])) == 1000.0 + np.log(2.0)
    np.testing.assert_allclose(log_sum_exp(np.array([0.5, -np.inf, 2.0])), np.logaddexp(0.5, 2.0))


@SETTINGS
@given(chains(integer=False, scale=2.0))
def test_log_z_matches_brute_force(instance):
    emission, transition, end = instance
    expected = naive.brute_force_log_z(emission, transition, end)
    log_z, _, _ = forward_backward(emission, transition, end)
    np.testing.assert_allclose(log_z, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(log_partition(emission, transition, end), expected, rtol=0, atol=1e-9)


@SETTINGS
@given(chains(integer=False, scale=2.0))
def test_marginals_match_brute_force(instance):
    emission, transition, end = instance
    node_expected, edge_expected = naive.brute_force_marginals(emission, transition, end)
    _, node, edge = forward_backward(emission, transition, end)
    assert not np.isnan(node).any() and not np.isnan(edge).any()
    np.testing.assert_allclose(node, node_expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge, edge_expected, rtol=0, atol=1e-9)
    # Forbidden labels and transitions carry exactly zero mass.
    assert (node[emission == -np.inf] == 0.0).all()
    if transition.shape[0] > 1:
        assert (edge[1:, :-1, :][transition[1:, :-1, :] == -np.inf] == 0.0).all()


@SETTINGS
@given(chains(integer=False, scale=2.0))
def test_marginals_are_consistent(instance):
    emission, transition, end = instance
    n, n_labels = emission.shape
    _, node, edge = forward_backward(emission, transition, end)
    np.testing.assert_allclose(node.sum(axis=1), np.ones(n), rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge.sum(axis=1), node, rtol=0, atol=1e-9)
    # For t >= 1, summing over c gives the node marginal of the previous token.
    np.testing.assert_allclose(edge[1:, :n_labels, :].sum(axis=2), node[:-1], rtol=0, atol=1e-9)
    assert (edge[1:, n_labels, :] == 0.0).all()
    assert (edge[0, :n_labels, :] == 0.0).all()


def test_all_forbidden_gives_zero_marginals():
    emission = np.full((3, 2), -np.inf)
    transition = np.zeros((1, 3, 2))
    end = np.zeros(2)
    log_z, node, edge = forward_backward(emission, transition, end)
    assert log_z == -np.inf
    assert (node == 0.0).all() and (edge == 0.0).all()
    assert log_partition(emission, transition, end) == -np.inf


def test_large_scores_do_not_overflow():
    emission = np.full((4, 3), 800.0)
    transition = np.zeros((1, 4, 3))
    end = np.zeros(3)
    log_z, node, _ = forward_backward(emission, transition, end)
    np.testing.assert_allclose(log_z, 3200.0 + 4 * np.log(3.0))
    np.testing.assert_allclose(node, np.full((4, 3), 1 / 3))


@SETTINGS
@given(chains(integer=False, scale=2.0))
def test_scaled_forward_backward_matches_brute_force(instance):
    emission, transition, end = instance
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
    expected_node, expected_edge = naive.brute_force_marginals(emission, transition, end)
    np.testing.assert_allclose(log_z, naive.brute_force_log_z(emission, transition, end), rtol=0, atol=1e-9)
    np.testing.assert_allclose(node, expected_node, rtol=0, atol=1e-9)
    np.testing.assert_allclose(edge, expected_edge, rtol=0, atol=1e-9)


def test_scaled_forward_backward_extreme_scores_and_forbidden():
    emission = np.array([[800.0, -900.0, 0.0], [0.0, 750.0, -5.0], [3.0, 2.0, 1.0]])
    transition = np.zeros((1, 4, 3))
    transition[0, 0, 1] = -2000.0
    end = np.array([0.0, -np.inf, 5.0])
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
    expected = forward_backward(emission, transition, end)
    np.testing.assert_allclose(log_z, expected[0])
    np.testing.assert_allclose(node, expected[1], atol=1e-12)
    np.testing.assert_allclose(edge, expected[2], atol=1e-12)
    blocked = forward_backward_scaled(np.full((2, 2), -np.inf), np.zeros((1, 3, 2)), np.zeros(2))
    assert blocked[0] == -np.inf and (blocked[1] == 0).all()
