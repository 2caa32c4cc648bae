"""Compiling: the one-line notice from Python (once, and silenced through logging), the compile time
left out of speeds, and the corpus kernels run on Python threads (the same result on any count)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builders import random_sentences
from structperc._kernels import threads
from structperc._kernels.decode.marginals import corpus_marginals
from structperc._kernels.decode.nbest import kbest_corpus, kbest_sentence
from structperc.corpus import as_corpus
from structperc.features.encode import FeatureEncoder
from structperc.model.linear_chain import LinearChainModel

ROOT = Path(__file__).resolve().parents[1]
NOTICE = "compiling kernels, once"

# a small kernel compiled for two argument types (two compilations), then timed
SCRIPT = """
import logging, sys, time
import numpy as np
{silence}
from structperc._kernels.cache import compiling_seconds
from structperc._kernels.encode.csr import gather_rows

offsets = np.array([0, 2, 3], dtype=np.int64)
start = time.perf_counter()
gather_rows(offsets, np.array([1.0, 2.0, 3.0]), np.array([1, 0], dtype=np.int64))
gather_rows(offsets, np.array([1, 2, 3], dtype=np.int32), np.array([1], dtype=np.int64))
elapsed = time.perf_counter() - start
print(len(gather_rows.signatures), sum(gather_rows.stats.cache_misses.values()), compiling_seconds(), elapsed)
"""


def _run(cache, silence=""):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(silence=silence)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    signatures, compiled, compiling, elapsed = done.stdout.split()
    return done.stderr, int(signatures), int(compiled), float(compiling), float(elapsed)


def test_python_says_it_compiles_once_and_not_when_cached(tmp_path):
    stderr, signatures, compiled, compiling, elapsed = _run(tmp_path / "cache")
    assert (signatures, compiled) == (2, 2)  # two compilations in the process
    assert stderr.splitlines() == [NOTICE]  # one line, before the first
    assert 0 < compiling <= elapsed  # the compiling was timed, inside the calls
    stderr, signatures, compiled, compiling, _ = _run(tmp_path / "cache")
    assert (signatures, compiled, compiling) == (2, 0, 0.0)  # both loaded from the cache
    assert stderr == ""


def test_the_notice_is_silenced_through_logging(tmp_path):
    stderr, _, compiled, _, _ = _run(tmp_path / "cache", 'logging.getLogger("structperc.compile").setLevel(logging.ERROR)')
    assert compiled == 2
    assert stderr == ""


@pytest.mark.slow
def test_a_first_tagger_fit_says_it_once(tmp_path):
    script = ("from structperc import Tagger\n"
              "X = [[('the', 'DT'), ('cat', 'NN')], [('a', 'DT')]] * 40\n"
              "y = [['B-NP', 'I-NP'], ['B-NP']] * 40\n"
              "print(Tagger(templates='chunk', epochs=2).fit(X, y).predict(X)[0])\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    for expected in ([NOTICE], []):
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines() == expected
        assert done.stdout.strip() == "['B-NP', 'I-NP']"


def test_blocks_cover_every_sentence_once_with_balanced_tokens():
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 30, size=500)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    for count in (1, 2, 3, 8):
        calls = []
        threads.over_blocks(lambda lo, hi: calls.append((lo, hi)), offsets, threads=count)
        calls.sort()
        assert calls[0][0] == 0 and calls[-1][1] == 500
        assert all(a[1] == b[0] for a, b in zip(calls, calls[1:]))  # contiguous, no overlap
        assert len(calls) == (1 if count == 1 else min(count * threads.BLOCKS_PER_THREAD, 500))
        tokens = [offsets[hi] - offsets[lo] for lo, hi in calls]
        assert max(tokens) <= offsets[-1] / len(calls) + lengths.max()  # about equal
    calls = []
    threads.over_blocks(lambda lo, hi: calls.append((lo, hi)), offsets[:threads.PARALLEL_FROM], threads=4)
    assert calls == [(0, threads.PARALLEL_FROM - 1)]  # a small batch stays in the calling thread


def test_items_on_the_shared_threads_cover_every_item_once():
    """``over_items`` hands out ranges to the calling thread and real threads of the shared pool: every
    item exactly once, from more than one thread when a range waits; one thread stays in the calling
    thread."""
    import threading
    import time

    for n_items, count in ((1, 2), (7, 2), (100, 2), (100, 3), (33, 1)):
        seen, names = [], set()

        def call(lo, hi):
            names.add(threading.current_thread().name)
            time.sleep(0.002)  # long enough that the other thread takes ranges too
            seen.extend(range(lo, hi))

        threads.over_items(call, n_items, threads=count)
        assert sorted(seen) == list(range(n_items))
        if count == 1 or n_items == 1:
            assert names == {threading.current_thread().name}
        else:
            assert len(names) > 1 and threading.current_thread().name in names
            assert all(name.startswith("structperc") for name in names - {threading.current_thread().name})


@pytest.mark.parametrize("normalization", ["global", "local"])
def test_kbest_and_marginals_on_threads_agree_with_each_sentence_alone(normalization):
    rng = np.random.default_rng(3)
    X, y = random_sentences(rng, threads.PARALLEL_FROM + 20, 3)
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(["w[0]", "w[-1]", "pos[0]"])
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, order=1, constrain=None, normalization=normalization)
    model.weights = rng.normal(size=model.weights.shape)
    w, layout, data = model.weights, model.layout(), model.data(encoded)
    one = kbest_corpus(w, layout, data, 4, threads=1)
    for count in (2, 5):
        for a, b in zip(one, kbest_corpus(w, layout, data, 4, threads=count)):
            np.testing.assert_array_equal(a, b)
    candidate_offsets, path_offsets, paths, scores = one
    offsets = data.sentence_offsets
    for s in range(len(offsets) - 1):  # the compacted lists are each sentence's own k-best
        alone_paths, alone_scores = kbest_sentence(w, layout, data, offsets[s], offsets[s + 1], 4)
        first, last = candidate_offsets[s], candidate_offsets[s + 1]
        np.testing.assert_array_equal(scores[first:last], alone_scores)
        for j in range(last - first):
            np.testing.assert_array_equal(paths[path_offsets[first + j]:path_offsets[first + j + 1]], alone_paths[j])
    node_one, best_one = corpus_marginals(w, layout, data, threads=1)
    node_many, best_many = corpus_marginals(w, layout, data, threads=3)
    np.testing.assert_array_equal(node_one, node_many)
    np.testing.assert_array_equal(best_one, best_many)
    np.testing.assert_allclose(node_one.sum(axis=1), 1.0)


def test_the_notice_and_the_warm_up_list_the_kernels_of_the_chosen_solver():
    from structperc._kernels.cache import training_kernels
    from structperc.train import epoch_kernels
    from structperc.warmup.run import every_kernel

    objective, sgd_epoch = "learn.crf_batch.crf_objective", "learn.crf.crf_epoch"
    sgd = training_kernels(epoch_kernels("crf", {}))
    lbfgs = training_kernels(epoch_kernels("crf", {"solver": "lbfgs"}))
    assert sgd_epoch in sgd and objective not in sgd
    assert objective in lbfgs and sgd_epoch not in lbfgs
    assert "learn.elastic.crf_l1_epoch" in training_kernels(epoch_kernels("crf", {"l1": 0.1}))
    assert {objective, sgd_epoch} <= set(every_kernel())  # `make warm` compiles both solvers


@pytest.mark.slow
@pytest.mark.parametrize("solver, runs, not_runs", [("sgd", "crf_epoch", "range_sums"),
                                                    ("lbfgs", "range_sums", "crf_epoch")])
def test_a_solver_compiles_its_own_kernels_only(tmp_path, solver, runs, not_runs):
    # the batch solver's objective on this small input (every label allowed at every token) is the scaled one
    # (train/objective.py: crf_scaled's kernels, range_sums among them); crf_objective takes the other inputs
    script = ("from structperc.estimator.core import TaggerCore\n"
              "from structperc._kernels.learn import crf, crf_batch, crf_scaled\n"
              "from structperc.train import epoch_kernels\n"
              "X = [[('the', 'DT'), ('cat', 'NN')], [('a', 'DT')]] * 3\n"
              "y = [['B-NP', 'I-NP'], ['B-NP']] * 3\n"
              f"TaggerCore(templates='chunk', trainer='crf', solver={solver!r}, epochs=2).fit(X, y)\n"
              "print(epoch_kernels('crf', {'solver': %r}))\n"
              "homes = {'crf_epoch': crf, 'crf_objective': crf_batch, 'range_sums': crf_scaled}\n"
              "print(*[k for k, home in homes.items() if getattr(home, k).signatures])\n" % solver)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    declared, compiled = done.stdout.splitlines()
    assert compiled.split() == [runs]
    assert runs in declared and not_runs not in declared


# what a command does when a named model is built on first use: the build's compiling says the notice
# (numba's compile event, ``say_compiling``), then the command announces its tagging kernels
BUILD_THEN_TAG = """
from structperc._kernels.cache import cold, say_compiling, tagging_kernels
from structperc.cli.progress import announce_compiling

assert cold(tagging_kernels())
say_compiling()
announce_compiling(tagging_kernels())
"""


def test_the_notice_is_said_once_per_process_when_a_build_compiled_before_the_command(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", BUILD_THEN_TAG], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [NOTICE]
