"""Iterative parameter mixing: against a naive serial Python IPM, against the serial loop, and on a
real dask cluster (threads; one test with worker processes and a killed worker)."""
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import forked_cli

pytest.importorskip("dask.distributed")

import builders  # noqa: E402
from builders import potentials  # noqa: E402
from naive import brute_force_best  # noqa: E402
from structperc._kernels.score.scoring import phi_indices  # noqa: E402
from structperc.errors import ConfigError  # noqa: E402
from structperc.train import Problem, make_rule, train_online  # noqa: E402
from structperc.train.mixing import EngineError, dask_client, mix_weights, subset_data, train_mixed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny.conll"


@pytest.fixture(scope="module")
def client():
    """Two single-threaded workers in this process, shut down at the end whatever happens."""
    manager = dask_client(workers=2)
    c = manager.__enter__()
    try:
        yield c
    finally:
        manager.__exit__(None, None, None)


def naive_ipm_perceptron(model, enc, n_shards, epochs, seed, mix):
    """McDonald et al. (2010), Figure 3, with Collins' perceptron on each shard, written out:
    brute-force decoding, explicit copies of every weight vector. Shard i holds the sentences
    i, i + S, ...; each epoch it visits them in the order of the epoch's global permutation.
    Returns (the mixed weights after each epoch, the mean of every vector any shard held after
    an example, after each epoch)."""
    layout, data = model.layout(), model.data(enc)
    n = enc.n_sentences
    shards = [set(range(i, n, n_shards)) for i in range(n_shards)]
    rng = np.random.default_rng(seed)
    mixed = model.weights.copy()
    held = []
    mixed_history, average_history = [], []
    for _ in range(epochs):
        order = rng.permutation(n)
        ends, mistakes = [], []
        for shard in shards:
            w = mixed.copy()
            errors = 0
            for s in order:
                if s not in shard:
                    continue
                a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
                gold = enc.labels[a:b]
                best, _ = brute_force_best(*potentials(model, enc, s, w))
                if np.any(best != gold):
                    errors += 1
                    np.add.at(w, phi_indices(layout, data, a, b, gold), 1.0)
                    np.add.at(w, phi_indices(layout, data, a, b, np.asarray(best, dtype=np.int64)), -1.0)
                held.append(w.copy())
            ends.append(w)
            mistakes.append(errors)
        if mix == "errors" and sum(mistakes) > 0:
            mu = [m / sum(mistakes) for m in mistakes]
        else:
            mu = [1.0 / n_shards] * n_shards
        mixed = sum(m * w for m, w in zip(mu, ends))
        mixed_history.append(mixed)
        average_history.append(np.mean(held, axis=0))
    return mixed_history, average_history


def _run_mixed(client, model, enc, n_shards, epochs, seed, mix, average):
    seen = []
    rule = make_rule("perceptron", average=average)
    start = model.weights.copy()
    problem = Problem(model, model.data(enc))
    history, best = train_mixed(rule, problem, epochs, client, seed=seed, mix=mix, n_shards=n_shards,
                                dev_score=lambda w: (seen.append(w.copy()), {"score": len(seen)})[1])
    model.weights = start
    return seen, history


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("mix", ["uniform", "errors"])
def test_ipm_matches_naive_reference(client, n_shards, mix):
    model, enc = builders.small_model(7, n_sentences=9, max_len=4)
    epochs = 3
    mixed_ref, average_ref = naive_ipm_perceptron(model, enc, n_shards, epochs, seed=5, mix=mix)
    mixed, _ = _run_mixed(client, model, enc, n_shards, epochs, 5, mix, average=False)
    averaged, _ = _run_mixed(client, model, enc, n_shards, epochs, 5, mix, average=True)
    for epoch in range(epochs):
        np.testing.assert_allclose(mixed[epoch], mixed_ref[epoch], rtol=0, atol=1e-9)
        np.testing.assert_allclose(averaged[epoch], average_ref[epoch], rtol=0, atol=1e-9)
    # without dev data the run keeps the last epoch's weights (built in the shards' own buffers)
    start = model.weights.copy()
    for average, reference in ((False, mixed_ref), (True, average_ref)):
        model.weights = start.copy()
        train_mixed(make_rule("perceptron", average=average), Problem(model, model.data(enc)), epochs, client,
                    seed=5, mix=mix, n_shards=n_shards)
        np.testing.assert_allclose(model.weights, reference[-1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("average", [True, False])
def test_one_shard_is_the_serial_perceptron_exactly(client, average):
    model, enc = builders.small_model(3, n_sentences=12, max_len=5)
    start = model.weights.copy()
    train_online(make_rule("perceptron", average=average), Problem(model, model.data(enc)), 4, seed=11)
    serial = model.weights.copy()
    model.weights = start.copy()
    train_mixed(make_rule("perceptron", average=average), Problem(model, model.data(enc)), 4, client, seed=11,
                n_shards=1)
    assert model.weights.tobytes() == serial.tobytes()


@pytest.mark.parametrize("trainer", ["perceptron", "crf"])
def test_shards_sharing_the_corpus_train_as_shards_with_copies(client, trainer):
    """Workers in this process read the client's corpus in place; remote ones get a copy of their
    sentences (subset_data): the same model bytes either way."""
    models = []
    for share in (True, False):
        model, enc = builders.small_model(5, n_sentences=11, max_len=5)
        rule = make_rule(trainer, **({"eta0": 0.1} if trainer == "crf" else {}))
        train_mixed(rule, Problem(model, model.data(enc)), 3, client, seed=2, n_shards=3, share=share)
        models.append(model.weights.tobytes())
    assert models[0] == models[1]


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_mixing_threads_sum_every_index_in_shard_order(threads):
    """The client's sum over blocks of indices in parallel threads: each index summed as the
    naive left-to-right sum, so any number of threads gives the same bytes; ``out`` is reused."""
    rng = np.random.default_rng(threads)
    weights = [rng.normal(size=1001) * 10.0 ** rng.integers(-8, 8, size=1001) for _ in range(3)]
    mu = np.array([0.2, 0.3, 0.5])
    expected = np.array([(mu[0] * a + mu[1] * b) + mu[2] * c for a, b, c in zip(*weights)])
    out = np.full(1001, np.nan)
    mixed = mix_weights(weights, mu, out=out, threads=threads)
    assert mixed is out
    assert mixed.tobytes() == expected.tobytes()


def test_subset_data_rebases_every_array():
    model, enc = builders.small_model(4, n_sentences=8, max_len=5)
    data = model.data(enc)
    sentences = np.array([1, 4, 6], dtype=np.int64)
    sub = subset_data(data, sentences)
    for k, s in enumerate(sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        c, d = sub.sentence_offsets[k], sub.sentence_offsets[k + 1]
        assert (b - a) == (d - c)
        np.testing.assert_array_equal(sub.gold[c:d], data.gold[a:b])
        for t in range(b - a):
            f = data.feature_ids[data.feature_offsets[a + t]: data.feature_offsets[a + t + 1]]
            g = sub.feature_ids[sub.feature_offsets[c + t]: sub.feature_offsets[c + t + 1]]
            np.testing.assert_array_equal(f, g)
            f = data.pair_ids[data.pair_offsets[a + t]: data.pair_offsets[a + t + 1]]
            g = sub.pair_ids[sub.pair_offsets[c + t]: sub.pair_offsets[c + t + 1]]
            np.testing.assert_array_equal(f, g)


@pytest.mark.parametrize("trainer", ["crf", "hinge", "memm"])
def test_sgd_rules_mix_and_keep_one_objective(client, trainer):
    """Every rule trains under mixing; one shard replays the serial run (same l2, eta0, order)."""
    model, enc = builders.small_model(5, n_sentences=10, max_len=4)
    start = model.weights.copy()
    train_online(make_rule(trainer), Problem(model, model.data(enc)), 3, seed=2)
    serial = model.weights.copy()
    model.weights = start.copy()
    train_mixed(make_rule(trainer), Problem(model, model.data(enc)), 3, client, seed=2, n_shards=1)
    np.testing.assert_allclose(model.weights, serial, rtol=1e-9, atol=1e-9)
    model.weights = start.copy()
    history, _ = train_mixed(make_rule(trainer), Problem(model, model.data(enc)), 3, client, seed=2, n_shards=2)
    assert np.all(np.isfinite(model.weights)) and len(history) == 3


def test_error_mixing_needs_a_rule_that_counts_mistakes(client):
    model, enc = builders.small_model(5)
    with pytest.raises(ConfigError, match="crf"):
        train_mixed(make_rule("crf"), Problem(model, model.data(enc)), 1, client, mix="errors")


# ------------------------------------------------------------------ through the CLI
def _cli(*args, timeout=120):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, timeout=timeout)


def test_same_seed_and_workers_give_the_same_model_bytes(client, tmp_path):
    from structperc.estimator.tagger import Tagger

    models = []
    for run in range(3):
        out = tmp_path / f"m{run}.npz"
        Tagger(epochs=3, seed=4).fit_file(TINY, client=client).save(out)
        models.append(out.read_bytes())
    assert models[0] == models[1] == models[2]


@pytest.mark.slow
def test_workers_two_is_deterministic(tmp_path):
    models = []
    for run in range(2):
        out = tmp_path / f"m{run}.npz"
        r = _cli("train", TINY, "--model", out, "--epochs", 3, "--workers", 2, "-q")
        assert r.returncode == 0, r.stderr
        models.append(out.read_bytes())
    assert models[0] == models[1]


def test_options_that_do_not_apply_are_errors(tmp_path):
    r = _cli("train", TINY, "--model", tmp_path / "m.npz", "--mix", "errors")
    assert r.returncode == 2 and "--mix" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _cli("train", TINY, "--model", tmp_path / "m.npz", "--workers", 2, "--trainer", "crf", "--mix", "errors")
    assert r.returncode == 2 and "crf" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m.npz").exists()


def test_unreachable_scheduler_is_one_line_quickly(tmp_path):
    start = time.monotonic()
    r = _cli("train", TINY, "--model", tmp_path / "m.npz", "--scheduler", "tcp://127.0.0.1:9")
    assert time.monotonic() - start < 30
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "scheduler" in r.stderr
    assert not (tmp_path / "m.npz").exists()


def test_a_lost_worker_stops_the_run():
    """Two worker processes; one is killed after epoch 1: the run stops with EngineError naming the
    epoch, and the model keeps its initial weights (the CLI then writes nothing)."""
    model, enc = builders.small_model(6, n_sentences=40, max_len=5)
    start = model.weights.copy()
    with dask_client(workers=2, processes=True) as c:
        pids = sorted(c.run(os.getpid).values())

        def kill_one(record):
            if record.epoch == 1:
                os.kill(pids[0], signal.SIGKILL)
                time.sleep(0.5)

        with pytest.raises(EngineError, match="worker lost during epoch 2; no model written"):
            train_mixed(make_rule("perceptron"), Problem(model, model.data(enc)), 5, c, callback=kill_one)
    np.testing.assert_array_equal(model.weights, start)
