"""Partial labels: the constrained quantities (best consistent labeling, log Z over the consistent
labelings, the CRF's partial-label gradient) against brute force, the training rules on partially
labelled sentences, and the missing symbol never becoming a label."""
import dataclasses

import numpy as np
import pytest

import naive
from builders import add_expected_counts, potentials, random_sentences
from structperc import Tagger
from structperc._kernels.learn import crf as crf_kernels
from structperc._kernels.decode.decoders import decode_sentence
from structperc._kernels.learn.perceptron import perceptron_epoch
from structperc._kernels.score.scoring import known_label_penalty
from structperc.train import Problem
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule


def hide(enc, rng, fraction=0.5):
    """A copy of enc whose gold labels are -1 (unlabelled) at a random ``fraction`` of the tokens."""
    labels = enc.labels.copy()
    labels[rng.random(len(labels)) < fraction] = -1
    return dataclasses.replace(enc, labels=labels)


def consistent(y, known):
    return all(k < 0 or k == c for c, k in zip(y, known))


def consistent_scores(emission, transition, end, known):
    return [(y, naive.sequence_score(emission, transition, end, y))
            for y in naive.all_labelings(len(known), emission.shape[1]) if consistent(y, known)]


def partial_log_likelihood(model, enc, s, w):
    """log sum over consistent y of exp score(y) - log Z, by enumeration."""
    emission, transition, end = potentials(model, enc, s, w)
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    scores = [score for _, score in consistent_scores(emission, transition, end, enc.labels[a:b])]
    return float(np.logaddexp.reduce(scores)) - naive.brute_force_log_z(emission, transition, end)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_constrained_viterbi_is_the_best_consistent_labeling(seed, constrain, small_model):
    model, enc = small_model(seed, constrain, max_len=5)
    enc = hide(enc, np.random.default_rng(seed))
    layout, data = model.layout(), model.data(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        known = enc.labels[a:b]
        path, score = decode_sentence(model.weights, layout, data, a, b, known_label_penalty(known, model.n_labels))
        emission, transition, end = potentials(model, enc, s, model.weights)
        candidates = [(y, v) for y, v in consistent_scores(emission, transition, end, known) if np.isfinite(v)]
        if not candidates:
            assert score == -np.inf
            continue
        best_y, best = max(candidates, key=lambda item: item[1])
        assert score == pytest.approx(best)
        assert consistent(path, known)
        np.testing.assert_array_equal(path, best_y)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_constrained_log_z_and_gradient_match_brute_force(seed, constrain, small_model):
    model, enc = small_model(seed, constrain, max_len=4)
    rng = np.random.default_rng(50 + seed)
    enc = hide(enc, rng)
    layout, data, w = model.layout(), model.data(enc), model.weights
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        if not (enc.labels[a:b] >= 0).any() or (enc.labels[a:b] >= 0).all():
            continue
        ll, node, edge, known_node, known_edge = crf_kernels.crf_partial_sentence(w, 1.0, layout, data, a, b)
        expected = partial_log_likelihood(model, enc, s, w)
        if not np.isfinite(expected):
            assert ll == -np.inf
            continue
        assert ll == pytest.approx(expected)
        # gradient E_K[Φ] - E[Φ] against central finite differences
        grad = np.zeros_like(w)
        add_expected_counts(grad, 1.0, layout, data, a, b, known_node, known_edge)
        add_expected_counts(grad, -1.0, layout, data, a, b, node, edge)
        touched = np.unique(np.concatenate([model.phi(enc, s, y) for y in naive.all_labelings(b - a, model.n_labels)]))
        checked = np.concatenate([rng.choice(touched, size=min(12, len(touched)), replace=False),
                                  rng.integers(0, len(w), 3)])
        for i in checked:
            numeric = naive.central_difference(lambda v: partial_log_likelihood(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), i


@pytest.mark.parametrize("seed", range(3))
def test_with_every_label_known_the_partial_quantities_are_the_full_ones(seed, small_model):
    model, enc = small_model(seed)
    layout, data, w = model.layout(), model.data(enc), model.weights
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        full, node, edge = crf_kernels.crf_sentence(w, 1.0, layout, data, a, b)
        partial, node2, edge2, known_node, _ = crf_kernels.crf_partial_sentence(w, 1.0, layout, data, a, b)
        assert partial == pytest.approx(full)
        np.testing.assert_allclose(node2, node)
        np.testing.assert_allclose(known_node, np.eye(model.n_labels)[enc.labels[a:b]], atol=1e-12)
        path, _ = decode_sentence(w, layout, data, a, b, known_label_penalty(enc.labels[a:b], model.n_labels))
        np.testing.assert_array_equal(path, enc.labels[a:b])


@pytest.mark.parametrize("seed", range(4))
def test_perceptron_step_on_a_partial_sentence_uses_the_constrained_best(seed, small_model):
    model, enc = small_model(seed, max_len=5)
    enc = hide(enc, np.random.default_rng(seed))
    layout, data = model.layout(), model.data(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        known = enc.labels[a:b]
        if not (known >= 0).any():
            continue
        w0 = model.weights.copy()
        emission, transition, end = potentials(model, enc, s, w0)
        latent, _ = max(consistent_scores(emission, transition, end, known), key=lambda item: item[1])
        predicted, _ = naive.brute_force_best(emission, transition, end)
        expected = w0.copy()
        if not np.array_equal(latent, predicted):
            expected += model.feature_vector(enc, s, latent) - model.feature_vector(enc, s, predicted)
        w = w0.copy()
        perceptron_epoch(w, np.zeros(0), 0.0, layout, data, np.array([s], dtype=np.int64))
        np.testing.assert_allclose(w, expected)


@pytest.mark.parametrize("rule", [
    lambda: CRFRule(l2=0.1, eta0=0.5, average=False),
    lambda: HingeRule(l2=0.1, eta0=0.5, average=False),
    lambda: MEMMRule(l2=0.1, eta0=0.5, average=False),
])
def test_a_sentence_with_no_known_label_contributes_nothing(rule, small_model):
    model, enc = small_model(0)
    labels = enc.labels.copy()
    labels[enc.sentence_offsets[0]: enc.sentence_offsets[1]] = -1
    enc = dataclasses.replace(enc, labels=labels)
    model.weights[:] = 0.0
    r = rule()
    r.begin(Problem(model, model.data(enc)))
    r.run(np.array([0, 0], dtype=np.int64))
    assert not r.weights().any()
    w = np.zeros_like(model.weights)
    perceptron_epoch(w, np.zeros(0), 0.0, model.layout(), model.data(enc), np.array([0], dtype=np.int64))
    assert not w.any()


def test_memm_trains_only_tokens_with_a_known_history(small_model):
    """Hiding a token removes exactly its own term and the terms of the tokens it is the history of."""
    from structperc._kernels.learn import memm as memm_kernels

    model, enc = small_model(3, max_len=6)
    layout, w = model.layout(), model.weights
    s = int(np.argmax(np.diff(enc.sentence_offsets)))
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    assert b - a >= 3
    _, full = memm_kernels.memm_sentence(w, 1.0, layout, model.data(enc), a, b)
    labels = enc.labels.copy()
    labels[a + 1] = -1
    hidden = dataclasses.replace(enc, labels=labels)
    _, partial = memm_kernels.memm_sentence(w, 1.0, layout, model.data(hidden), a, b)
    assert partial[0] == full[0]
    assert partial[1] == -np.inf and partial[2] == -np.inf
    np.testing.assert_array_equal(partial[3:], full[3:])


def tokens_and_labels(seed, fraction):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 30, 3, tags=("B-NP", "I-NP", "O"))
    y = [[("B-NP" if tag == "I-NP" and (i == 0 or s[i - 1] == "O") else tag) for i, tag in enumerate(s)] for s in y]
    partial = [[("?" if rng.random() < fraction else tag) for tag in s] for s in y]
    return X, y, partial


@pytest.mark.parametrize("trainer", ["perceptron", "crf", "hinge", "memm"])
def test_the_missing_symbol_is_never_a_label(trainer):
    X, _, partial = tokens_and_labels(0, 0.5)
    tagger = Tagger(templates=["w[0]", "pos[0]"], trainer=trainer, epochs=2, missing_label="?").fit(X, partial)
    assert "?" not in tagger.labels_
    assert sorted(tagger.labels_) == ["B-NP", "I-NP", "O"]
    assert all("?" not in s for s in tagger.predict(X))


@pytest.mark.parametrize("trainer", ["perceptron", "crf"])
def test_without_missing_tokens_training_is_unchanged(trainer):
    X, y, _ = tokens_and_labels(1, 0.0)
    plain = Tagger(templates=["w[0]", "pos[0]"], trainer=trainer, epochs=3).fit(X, y)
    with_option = Tagger(templates=["w[0]", "pos[0]"], trainer=trainer, epochs=3, missing_label="?").fit(X, y)
    np.testing.assert_array_equal(plain.model_.weights, with_option.model_.weights)


def test_partial_labels_round_trip_through_the_model_file(tmp_path):
    X, _, partial = tokens_and_labels(2, 0.3)
    tagger = Tagger(templates=["w[0]", "pos[0]"], epochs=2, missing_label="?", tag_dict=1).fit(X, partial)
    tagger.save(tmp_path / "m.npz")
    loaded = Tagger.load(tmp_path / "m.npz")
    assert loaded.missing_label == "?"
    assert loaded.predict(X) == tagger.predict(X)


@pytest.mark.parametrize("seed", range(3))
def test_second_order_constrained_decoding_keeps_the_known_labels(seed, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, ["w[0]", "pos[0]", "bias"], n_labels=3, order=2)
    enc = hide(enc, rng)
    layout, data = model.layout(), model.data(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        known = enc.labels[a:b]
        path, score = decode_sentence(model.weights, layout, data, a, b, known_label_penalty(known, model.n_labels))
        assert np.isfinite(score) and consistent(path, known)


@pytest.mark.parametrize("trainer", ["perceptron", "memm"])
def test_second_order_training_on_partial_labels(trainer):
    X, y, partial = tokens_and_labels(3, 0.3)
    tagger = Tagger(templates=["w[0]", "pos[0]"], trainer=trainer, order=2, epochs=3, missing_label="?").fit(X, partial)
    assert "?" not in tagger.labels_
    assert tagger.score(X, y) > 0.5


def test_cli_train_with_missing_label(tmp_path):
    from typer.testing import CliRunner

    from structperc.cli.main import app

    X, _, partial = tokens_and_labels(4, 0.5)
    train = tmp_path / "train.txt"
    train.write_text("\n\n".join("\n".join(f"{w} {p} {c}" for (w, p), c in zip(s, lab))
                                 for s, lab in zip(X, partial)) + "\n")
    model = tmp_path / "m.npz"
    result = CliRunner().invoke(app, ["train", str(train), "--model", str(model), "--columns", "word,pos,chunk",
                                      "--constrain", "bio", "--epochs", "2", "--missing-label", "?", "--quiet"])
    assert result.exit_code == 0, result.output
    loaded = Tagger.load(model)
    assert loaded.labels_ == ["B-NP", "I-NP", "O"] and loaded.missing_label == "?"


def brute_force_partial_gradient(model, enc, s, w):
    """E_{P(y | y_K, x)}[Φ] - E_{P(y | x)}[Φ] of sentence s by enumerating every labeling (0 when no
    label of s is known)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    known = enc.labels[a:b]
    if not (known >= 0).any():
        return np.zeros_like(w)
    labelings = naive.all_labelings(b - a, model.n_labels)
    phis = np.array([model.feature_vector(enc, s, y) for y in labelings])
    scores = phis @ w
    p = np.exp(scores - scores.max())
    mask = np.array([consistent(y, known) for y in labelings])
    p_known = np.where(mask, p, 0.0)
    return (p_known / p_known.sum()) @ phis - (p / p.sum()) @ phis


@pytest.mark.parametrize("seed", range(3))
def test_crf_training_on_partial_labels_equals_eager_brute_force_steps(seed, small_model):
    """The epoch kernel's step on a partially labelled sentence (constrained minus free marginals,
    folded into one pass over v and u) against eager SGD on the brute-force gradient, last iterate
    and average."""
    model, enc = small_model(seed, None, max_len=4, scale=0.1)
    rng = np.random.default_rng(70 + seed)
    enc = hide(enc, rng)
    model.weights[:] = rng.normal(scale=0.1, size=model.weights.shape)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2 = 0.5, 0.3
    history = naive.eager_sgd(model.weights.copy(), visits, eta0, l2,
                              lambda s, w: brute_force_partial_gradient(model, enc, s, w))
    for average in (False, True):
        rule = CRFRule(l2=l2, eta0=eta0, average=average, average_start=0)
        rule.begin(Problem(model, model.data(enc)))
        rule.run(visits)
        expected = np.mean(history, axis=0) if average else history[-1]
        np.testing.assert_allclose(rule.weights(), expected, atol=1e-10)
