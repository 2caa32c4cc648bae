"""The crf rule's batch solver: the corpus objective and gradient against brute force, OWL-QN against
an independent bound-constrained reference, the stepped L-BFGS-B against scipy's one-shot run, and
the wiring into ``Tagger`` (solver "lbfgs", its errors)."""
import numpy as np
import pytest
from scipy.optimize import minimize

import naive
from structperc import Tagger
from structperc.errors import ConfigError
from structperc.train.lbfgs import OWLQN, SteppedLBFGSB, pseudo_gradient
from structperc.train.objective import CRFObjective


def brute_force_objective(model, enc, w, c2):
    """-sum_s log P(y_s | x_s) + c2 ||w||² and its gradient sum_s E[Φ] - Φ(x, y_s) + 2 c2 w, by
    enumerating every labeling of every sentence."""
    loss, gradient = c2 * float(w @ w), 2 * c2 * w
    for s in range(len(enc.sentence_offsets) - 1):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        loss -= naive.naive_log_likelihood(model, enc, s, w)
        gradient = gradient + naive.naive_expected_phi(model, enc, s, w) - model.feature_vector(enc, s, enc.labels[a:b])
    return loss, gradient


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
@pytest.mark.parametrize("n_blocks", [1, 2, 4])
def test_objective_matches_brute_force(seed, constrain, n_blocks, small_model):
    model, enc = small_model(seed, constrain)
    objective = CRFObjective(model.layout(), model.data(enc), c2=0.3, n_blocks=n_blocks)
    loss, gradient = objective(model.weights)
    expected_loss, expected_gradient = brute_force_objective(model, enc, model.weights, 0.3)
    assert loss == pytest.approx(expected_loss, rel=1e-10)
    np.testing.assert_allclose(gradient, expected_gradient, atol=1e-9)


def dict_corpus(seed, n_sentences=8, max_len=4, missing=0.0):
    """Random feature dicts with real values, three labels; a fraction ``missing`` of the labels "?"."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, max_len + 1))
        X.append([{"w": f"w{int(rng.integers(0, 4))}", "x": float(rng.normal()), "b": bool(rng.random() < 0.5)}
                  for _ in range(n)])
        y.append(["?" if rng.random() < missing else "ABC"[int(rng.integers(0, 3))] for _ in range(n)])
    return X, y


@pytest.mark.parametrize("seed", range(2))
def test_objective_with_values_and_gold_pairs_matches_brute_force(seed):
    X, y = dict_corpus(seed)
    tagger = Tagger(trainer="crf", solver="lbfgs", epochs=1, all_pairs=False).fit(X, y)
    model = tagger.model_
    enc = model.encoder.transform(X, [label for s in y for label in s])
    assert enc.feature_values is not None and len(model.weights) < model.encoder.n_features_ * 3 + 16
    w = np.random.default_rng(seed).normal(size=model.weights.shape)
    loss, gradient = CRFObjective(model.layout(), model.data(enc), c2=0.05, n_blocks=2)(w)
    expected_loss, expected_gradient = brute_force_objective(model, enc, w, 0.05)
    assert loss == pytest.approx(expected_loss, rel=1e-10)
    np.testing.assert_allclose(gradient, expected_gradient, atol=1e-9)


def test_partial_labels_gradient_matches_central_differences():
    X, y = dict_corpus(5, n_sentences=10, missing=0.3)
    tagger = Tagger(trainer="crf", solver="lbfgs", epochs=1, missing_label="?").fit(X, y)
    model = tagger.model_
    flat = [label for s in y for label in s]
    enc = model.encoder.transform(X, ["A" if label == "?" else label for label in flat])
    enc.labels[np.array(flat) == "?"] = -1
    assert 0 < (enc.labels < 0).sum() < len(flat) and "?" not in model.labels
    objective = CRFObjective(model.layout(), model.data(enc), c2=0.1, n_blocks=2)
    w = np.random.default_rng(0).normal(size=model.weights.shape)
    _, gradient = objective(w)
    for i in np.random.default_rng(1).choice(len(w), size=15, replace=False):
        numeric = naive.central_difference(lambda v: objective(v)[0], w, i)
        assert gradient[i] == pytest.approx(numeric, abs=1e-5)


def run_owlqn(fun, x0, c1, iterations=400):
    solver = OWLQN(fun, x0, c1, epsilon=1e-9, period=0)
    for _ in range(iterations):
        if solver.stopped is not None:
            break
        solver.iterate()
    return solver


def l1_reference(fun, n, c1):
    """min f(p - q) + c1 sum(p + q) over p, q >= 0: the L1 problem as a smooth bound-constrained one,
    solved by scipy's L-BFGS-B (independent of OWL-QN)."""
    def split(z):
        f, g = fun(z[:n] - z[n:])
        return f + c1 * z.sum(), np.concatenate([g + c1, -g + c1])

    result = minimize(split, np.zeros(2 * n), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * n),
                      options={"maxiter": 5000, "ftol": 1e-14, "gtol": 1e-10})
    return result.fun


@pytest.mark.parametrize("seed", range(2))
def test_owlqn_gives_exact_zeros_and_the_l1_optimum(seed, small_model):
    model, enc = small_model(seed, n_sentences=10)
    objective = CRFObjective(model.layout(), model.data(enc), c2=0.01)
    x0 = np.zeros_like(model.weights)
    c1 = 0.5
    sparse = run_owlqn(objective, x0, c1)
    dense = run_owlqn(objective, x0, 0.0)
    x = sparse.x
    assert (x == 0).sum() > len(x) // 2 and (dense.x == 0).sum() < (x == 0).sum()
    assert np.abs(x).sum() < np.abs(dense.x).sum()
    assert sparse.f == pytest.approx(l1_reference(objective, len(x), c1), rel=1e-6)
    # optimality: the pseudo-gradient vanishes (|g_i| <= c1 where x_i = 0)
    assert np.abs(pseudo_gradient(x, objective(x)[1], c1)).max() < 1e-3


def test_stepped_lbfgsb_follows_scipy(small_model):
    model, enc = small_model(3, n_sentences=10)
    objective = CRFObjective(model.layout(), model.data(enc), c2=0.1)
    x0 = np.zeros_like(model.weights)
    stepped = SteppedLBFGSB(objective, x0)
    path = [stepped.iterate() for _ in range(8)]
    stepped.close()
    assert not stepped.thread.is_alive()
    result = minimize(objective, x0, jac=True, method="L-BFGS-B",
                      options={"maxcor": 6, "maxls": 20, "ftol": 0, "gtol": 0, "maxiter": 8})
    np.testing.assert_array_equal(path[-1][0], result.x)
    assert [f for _, f in path] == sorted([f for _, f in path], reverse=True)


@pytest.mark.parametrize("l1", [0.0, 0.01])
def test_tagger_lbfgs_converges_and_scores_dev(l1):
    X, y = dict_corpus(7, n_sentences=40, max_len=6)
    records = []
    tagger = Tagger(trainer="crf", solver="lbfgs", l1=l1, epochs=500, delta=1e-6)
    tagger.fit(X[:30], y[:30], dev=X[30:], dev_y=y[30:], callback=records.append)
    assert 1 < len(records) < 500 and records[-1].stats["stopped"] in ("delta", "epsilon")
    losses = [r.stats["loss"] for r in records]
    assert losses == sorted(losses, reverse=True)
    assert all("accuracy" in r.dev for r in records)
    assert tagger.n_iter_ == max(records, key=lambda r: r.dev["score"]).epoch


@pytest.mark.parametrize("options, name", [
    ({"solver": "lbfgs", "eta0": 0.1}, "eta0"),
    ({"solver": "lbfgs", "batch_size": 4}, "batch_size"),
    ({"epsilon": 1e-3}, "epsilon"),
    ({"solver": "sgd", "period": 5}, "period"),
    ({"solver": "newton"}, "newton"),
])
def test_options_of_the_other_solver_are_errors(options, name):
    X, y = dict_corpus(0)
    with pytest.raises(ConfigError, match=name):
        Tagger(trainer="crf", epochs=1, **options).fit(X, y)


def test_lbfgs_refuses_order_two_and_other_trainers():
    X, y = dict_corpus(0)
    with pytest.raises(ConfigError, match="order"):
        Tagger(trainer="crf", solver="lbfgs", order=2, epochs=1).fit(X, y)
    with pytest.raises(ConfigError, match="solver"):
        Tagger(trainer="perceptron", solver="lbfgs", epochs=1).fit(X, y)
