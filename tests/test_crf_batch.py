"""The batch CRF objective in probability space (``crf_scaled.scaled_objective``) against brute-force
enumeration, against the log-space forward-backward on long sentences, and bit for bit against
itself on one thread and on two; the solver's vector steps (``quasi_newton``) against numpy."""
import numpy as np
import pytest

import naive
from structperc import Tagger
from structperc._kernels.decode.forward_backward import forward_backward, forward_backward_scaled
from structperc._kernels.learn import crf_scaled, crf_tables, quasi_newton
from test_lbfgs import brute_force_objective, dict_corpus


def scaled(model, data, w, c2, tokens=None):
    """(f, g, skipped) of ``scaled_objective`` with every table built as the solver builds them."""
    layout = model.layout()
    assert crf_tables.scaled_applies(layout, data)
    usable, observed = crf_tables.scaled_tables(layout, data)
    tables = crf_tables.scaled_tables_for(layout, data, usable, observed, tokens)
    gradient = np.full(layout.size, np.nan)
    f = crf_scaled.scaled_objective(w, c2, layout, data, tables, gradient)
    skipped = int((~usable & (np.diff(data.sentence_offsets) > 0)).sum())
    scaled.log_space = int(tables.log_space.sum())
    return f, gradient, skipped


def fitted(seed, all_pairs, constrain=None, n_sentences=8, max_len=4):
    X, y = dict_corpus(seed, n_sentences=n_sentences, max_len=max_len)
    if constrain == "bio":
        tags = {"A": "B-X", "B": "I-X", "C": "O"}
        y = [[tags[label] for label in sentence] for sentence in y]
    tagger = Tagger(trainer="crf", solver="lbfgs", epochs=1, all_pairs=all_pairs,
                    constrain=constrain).fit(X, y)
    model = tagger.model_
    enc = model.encoder.transform(X, [label for s in y for label in s])
    return model, enc


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("all_pairs", [True, False])
def test_scaled_objective_matches_brute_force(seed, all_pairs):
    model, enc = fitted(seed, all_pairs)
    w = np.random.default_rng(seed).normal(size=model.weights.shape)
    f, g, skipped = scaled(model, model.data(enc), w, 0.2, tokens=5)
    expected_f, expected_g = brute_force_objective(model, enc, w, 0.2)
    assert skipped == 0
    assert f == pytest.approx(expected_f, rel=1e-10)
    np.testing.assert_allclose(g, expected_g, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_forbidden_gold_sentences_are_skipped(seed):
    """Under the BIO constraint a gold I-X after O is forbidden: that sentence adds nothing."""
    model, enc = fitted(seed, False, constrain="bio", n_sentences=10)
    data = model.data(enc)
    w = np.random.default_rng(seed).normal(size=model.weights.shape)
    f, g, skipped = scaled(model, data, w, 0.1, tokens=3)
    mask = model.layout().mask_penalty
    expected_f, expected_g, expected_skipped = 0.1 * float(w @ w), 0.2 * w, 0
    for s in range(len(enc.sentence_offsets) - 1):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        gold = np.concatenate([[model.n_labels], enc.labels[a:b]])
        if np.isinf(mask[gold[:-1], gold[1:]]).any():
            expected_skipped += 1
            continue
        expected_f -= naive.naive_log_likelihood(model, enc, s, w)
        expected_g += naive.naive_expected_phi(model, enc, s, w) - model.feature_vector(enc, s, enc.labels[a:b])
    assert skipped == expected_skipped and (seed > 0 or skipped > 0)
    assert f == pytest.approx(expected_f, rel=1e-10)
    np.testing.assert_allclose(g, expected_g, atol=1e-9)


def test_large_weights_fall_back_to_log_space():
    """Weights too large for the rescaling give what the log-space recursion gives: the transitions
    are shifted by their largest, 1500, and every start weight, 0, then underflows (exp(-1500) = 0)."""
    model, enc = fitted(0, True, n_sentences=6, max_len=6)
    data = model.data(enc)
    rng = np.random.default_rng(1)
    w = rng.normal(size=model.weights.shape)
    layout = model.layout()
    n_labels = layout.n_labels
    transitions = w[layout.off_trans: layout.off_end].reshape(n_labels + 1, n_labels)
    transitions[:n_labels] = rng.choice([-1500.0, 0.0, 1500.0], size=(n_labels, n_labels))
    transitions[:n_labels, 0] = 1500.0
    transitions[n_labels] = 0.0
    f, g, _ = scaled(model, data, w, 0.0)
    assert scaled.log_space > 0  # the case under test: some sentence went to log space
    expected_f, expected_g = brute_force_objective(model, enc, w, 0.0)
    assert f == pytest.approx(expected_f, rel=1e-10)
    np.testing.assert_allclose(g, expected_g, atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_scaled_and_log_space_forward_backward_agree_on_long_sentences(seed):
    rng = np.random.default_rng(seed)
    n, n_labels = 2000, 7
    emission = rng.normal(scale=4.0, size=(n, n_labels))
    transition = rng.normal(scale=3.0, size=(1, n_labels + 1, n_labels))
    end = rng.normal(size=n_labels)
    log_z, node, edge = forward_backward_scaled(emission, transition, end)
    expected = forward_backward(emission, transition, end)
    assert log_z == pytest.approx(expected[0], rel=1e-12)
    np.testing.assert_allclose(node, expected[1], atol=1e-10)
    np.testing.assert_allclose(edge, expected[2], atol=1e-10)


@pytest.mark.parametrize("max_len, scale", [(300, 2.0), (1500, 0.0)])
def test_scaled_objective_and_log_space_agree_on_long_sentences(max_len, scale):
    """Long sentences: the objective against the same sums in log space (``forward_backward`` per
    sentence, the expected counts scattered by the model's own Φ); at w = 0 (where the solver starts)
    every scale is L, whose product over 1,500 tokens is far beyond a float64."""
    X, y = dict_corpus(3, n_sentences=4, max_len=max_len)
    model = Tagger(trainer="crf", solver="lbfgs", epochs=1).fit(X, y).model_
    enc = model.encoder.transform(X, [label for s in y for label in s])
    assert np.diff(enc.sentence_offsets).max() > max_len // 2
    data = model.data(enc)
    w = np.random.default_rng(3).normal(scale=scale, size=model.weights.shape)
    f, g, _ = scaled(model, data, w, 0.0)
    from builders import add_expected_counts
    from structperc._kernels.learn.crf import labeling_score
    from structperc._kernels.score.scoring import sentence_scores
    expected_f, expected_g = 0.0, np.zeros_like(w)
    for s in range(len(enc.sentence_offsets) - 1):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission, transition, end = sentence_scores(w, model.layout(), data, a, b)
        log_z, node, edge = forward_backward(emission, transition, end)
        expected_f += log_z - labeling_score(emission, transition, end, enc.labels[a:b])
        add_expected_counts(expected_g, 1.0, model.layout(), data, a, b, node, edge)
        expected_g -= model.feature_vector(enc, s, enc.labels[a:b])
    assert f == pytest.approx(expected_f, rel=1e-12)
    np.testing.assert_allclose(g, expected_g, atol=1e-8 * max(1.0, np.abs(expected_g).max()))


def test_the_same_bits_on_one_thread_and_on_two(monkeypatch):
    """The solver's objective (``CRFObjective``) on 1 and 2 threads, set as a user sets them
    (``numba.set_num_threads``, which ``threads.thread_count`` follows), and on 3 (the blocks and the
    ranges of features handed out in other orders): the same bits."""
    import numba

    from structperc._kernels import threads
    from structperc.train.objective import CRFObjective

    monkeypatch.setattr(crf_tables, "BLOCK_TOKENS", 16)
    # about 370 tokens, in sentences of at most 6 (the brute force enumerates 3^n labelings of each)
    model, enc = fitted(5, False, n_sentences=100, max_len=6)
    data = model.data(enc)
    w = np.random.default_rng(5).normal(size=model.weights.shape)
    results = []
    was = threads.thread_count()
    try:
        for count in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(count)
            assert threads.thread_count() == count
            objective = CRFObjective(model.layout(), data, 0.1)
            assert objective.scaled and len(objective.tables[0]) > 8
            results.append(objective(w))
    finally:
        numba.set_num_threads(was)
    monkeypatch.setattr(threads, "thread_count", lambda: 3)  # more threads than this machine may have
    results.append(CRFObjective(model.layout(), data, 0.1)(w))
    f1, g1 = results[0]
    assert all(f == f1 and np.array_equal(g, g1) for f, g in results[1:])
    expected_f, expected_g = brute_force_objective(model, enc, w, 0.1)
    assert f1 == pytest.approx(expected_f, rel=1e-10)
    np.testing.assert_allclose(g1, expected_g, atol=1e-9)


def test_sentence_blocks_depend_on_the_data_only():
    offsets = np.array([0, 3, 3, 10, 12, 30, 31], dtype=np.int64)
    blocks = crf_tables.sentence_blocks(offsets, 10)
    assert blocks[0] == 0 and blocks[-1] == 6 and (np.diff(blocks) > 0).all()
    assert len(blocks) - 1 == 3
    assert crf_tables.sentence_blocks(offsets, 1000).tolist() == [0, 6]


# ------------------------------------------------------------------ the solver's vector steps
def numpy_two_loop(direction, pairs):
    """Nocedal & Wright's algorithm 7.4 over (s, y) pairs, oldest first."""
    alphas = []
    for s, y in reversed(pairs):
        alphas.append((s @ direction) / (y @ s))
        direction = direction - alphas[-1] * y
    s, y = pairs[-1]
    direction = direction * (y @ s) / (y @ y)
    for (s, y), alpha in zip(pairs, reversed(alphas)):
        direction = direction + (alpha - (y @ direction) / (y @ s)) * s
    return direction


@pytest.mark.parametrize("count", [1, 3, 6])
def test_two_loop_matches_numpy(count):
    rng = np.random.default_rng(count)
    n, m = 50, 4
    pairs = [(rng.normal(size=n), rng.normal(size=n)) for _ in range(count)]
    for s, y in pairs:
        y += 3 * s  # y · s > 0, as the solver keeps only such pairs
    s_ring, y_ring, ys = np.zeros((m, n)), np.zeros((m, n)), np.zeros(m)
    newest = -1
    for s, y in pairs:  # the ring overwrites its oldest rows
        newest = (newest + 1) % m
        s_ring[newest], y_ring[newest], ys[newest] = s, y, y @ s
    kept = pairs[-m:]
    d = rng.normal(size=n)
    expected = numpy_two_loop(d.copy(), kept)
    quasi_newton.two_loop(d, s_ring, y_ring, ys, newest, len(kept))
    np.testing.assert_allclose(d, expected, rtol=1e-10, atol=1e-12)


def test_owlqn_update_keeps_curved_pairs_and_points_downhill():
    """The pair joins the ring only with y · s > 0; the direction is numpy's -H ◇F with the
    entries that do not point against ◇F zeroed."""
    rng = np.random.default_rng(7)
    n, m, c1 = 40, 3, 0.3
    s_ring, y_ring, ys = np.zeros((m, n)), np.zeros((m, n)), np.zeros(m)
    newest, count, pairs = -1, 0, []
    x0, g0 = rng.normal(size=n), rng.normal(size=n)
    for k in range(5):
        step = rng.normal(size=n)
        x, g = x0 + step, g0 + (2.0 if k != 2 else -2.0) * step  # the third pair has y · s < 0
        x[:5] = 0.0
        pg, direction = np.empty(n), np.empty(n)
        newest, count, pg_norm, x_norm = quasi_newton.owlqn_update((x, g), (x0, g0), c1, pg, (s_ring, y_ring, ys),
                                                                   (newest, count), direction)
        if k != 2:
            pairs = (pairs + [(x - x0, g - g0)])[-m:]
        from structperc.train.lbfgs import pseudo_gradient as numpy_pseudo_gradient
        expected_pg = numpy_pseudo_gradient(x, g, c1)
        np.testing.assert_allclose(pg, expected_pg, atol=1e-12)
        expected = numpy_two_loop(-expected_pg, pairs)
        expected[expected * expected_pg >= 0] = 0.0
        assert count == len(pairs)
        np.testing.assert_allclose(direction, expected, rtol=1e-9, atol=1e-12)
        assert pg_norm == pytest.approx(np.linalg.norm(expected_pg)) and x_norm == pytest.approx(np.linalg.norm(x))
        x0, g0 = x, g


def test_pseudo_gradient_and_orthant_point():
    x = np.array([1.0, -2.0, 0.0, 0.0, 0.0, 3.0])
    g = np.array([0.5, 0.5, -2.0, 2.0, 0.05, -1.0])
    c1 = 0.1
    pg = np.empty(6)
    size = quasi_newton.pseudo_gradient(x, g, c1, pg)
    np.testing.assert_allclose(pg, [0.6, 0.4, -1.9, 1.9, 0.0, -0.9])
    assert size == pytest.approx(np.linalg.norm(pg))
    d = np.array([-3.0, 1.0, 1.0, 1.0, 1.0, -1.0])
    out = np.empty(6)
    l1, slope = quasi_newton.orthant_point(x, d, 1.0, pg, out)
    # 1 - 3 crosses zero: 0; -2 + 1 stays; at 0 the orthant of -pg: +, -, none (pg 0)
    np.testing.assert_allclose(out, [0.0, -1.0, 1.0, 0.0, 0.0, 2.0])
    assert l1 == pytest.approx(4.0)
    assert slope == pytest.approx(pg @ (out - x))
