"""Start-up: the one-line notice before a cold compile, what `tag` leaves unimported, and the
serial decoder that small inputs take (the same result as the parallel one)."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from builders import random_sentences
from structperc._kernels.decode.decoders import PARALLEL_FROM, decode_corpus
from structperc.features.encode import FeatureEncoder
from structperc._kernels.cache import _LAZY_REGISTRIES_CHECKED
from structperc.model.linear_chain import LinearChainModel
from structperc.corpus import as_corpus

ROOT = Path(__file__).resolve().parents[1]
NOTICE = "compiling kernels, once"


def _run(*args, env=None, cwd=None):
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("startup")
    corpus = folder / "train.txt"
    corpus.write_text("the DT B-NP\ncat NN I-NP\nsat VBD O\n\na DT B-NP\ndog NN I-NP\n\n")
    done = _run("-m", "structperc", "train", corpus, "--model", folder / "m.npz", "--columns", "word,pos,chunk",
                "--epochs", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    return corpus, folder / "m.npz"


def test_cold_cache_prints_the_notice_once_and_a_warm_one_not_at_all(tiny_model, tmp_path):
    corpus, model = tiny_model
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    cold = _run("-m", "structperc", "tag", corpus, "--model", model, "--quiet", env=env)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(NOTICE) == 1, cold.stderr
    assert any(cache.rglob("*.nbi")), "numba did not write its cache under NUMBA_CACHE_DIR"
    warm = _run("-m", "structperc", "tag", corpus, "--model", model, "--quiet", env=env)
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr
    assert warm.stdout == cold.stdout


def test_tag_imports_neither_scipy_linalg_nor_conllu_nor_training_kernels(tiny_model):
    corpus, model = tiny_model
    script = (
        "import atexit, json, os, sys\n"
        "report = lambda: sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
        "atexit.register(report)\n"
        "quick_exit = os._exit\n"
        "os._exit = lambda code: (report(), sys.stderr.flush(), quick_exit(code))\n"
        "from structperc.cli.main import main\n"
        f"sys.argv = ['structperc', 'tag', {str(corpus)!r}, '--model', {str(model)!r}, '--quiet']\n"
        "main()\n"
    )
    done = _run("-c", script)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stderr.split("MODULES ", 1)[1])
    assert "structperc.estimator.core" in modules  # the script did tag
    assert "structperc.estimator.tagger" not in modules  # nor scikit-learn's estimator
    loaded = [m for m in modules if m.startswith(("scipy.linalg", "conllu", "seqeval", "matplotlib", "pydantic", "sklearn"))]
    assert loaded == []
    # the epoch kernels of the learning rules are imported by training only: the modules of every kernel that a
    # rule declares (each solver's, the L1 epochs' too), and every module of the learning kernels' family
    training = training_kernel_modules()
    assert len(training) > 10 and all(importlib.util.find_spec(m) is not None for m in training)
    assert training.isdisjoint(modules), sorted(training & set(modules))
    # scipy.linalg is still importable in such a process (the BLAS probe was skipped, not blocked)
    probe = script.replace("main()\n", "main()\nimport scipy.linalg\nscipy.linalg.cython_blas\n")
    assert _run("-c", probe).returncode == 0


def training_kernel_modules():
    """The modules of the kernels that the registered learning rules declare (``LearningRule.kernels``
    and ``l1_kernels``, "family.module.function" under ``structperc._kernels``), and every module of
    ``structperc._kernels.learn``."""
    import pkgutil

    import structperc._kernels.learn as learn
    from structperc.train import every_variant

    declared = {f"structperc._kernels.{'.'.join(kernel.split('.')[:-1])}" for _, _, rule in every_variant()
                for kernel in rule.kernels + rule.l1_kernels}
    return declared | {f"{learn.__name__}.{m.name}" for m in pkgutil.iter_modules(learn.__path__)}


@pytest.mark.parametrize("order, normalization", [(1, "global"), (2, "global"), (1, "local"), (2, "local")])
def test_decoding_on_threads_agrees_with_one_thread(order, normalization):
    rng = np.random.default_rng(order)
    X, y = random_sentences(rng, PARALLEL_FROM + 10, 4)
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(["w[0]", "w[-1]", "pos[0]", "pair:pos[0]"])
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, order=order, constrain=None, normalization=normalization)
    model.weights = rng.normal(size=model.weights.shape)
    data, layout = model.data(encoded), model.layout()
    serial_labels, serial_scores = decode_corpus(model.weights, layout, data, threads=1)
    parallel_labels, parallel_scores = decode_corpus(model.weights, layout, data, threads=3)
    np.testing.assert_array_equal(serial_labels, parallel_labels)
    np.testing.assert_array_equal(serial_scores, parallel_scores)
    # a sentence decoded alone: the labels and score it has in the corpus
    for s in (0, PARALLEL_FROM + 9):
        labels, scores = model.decode(encoder.transform(corpus.subset([s]), corpus.columns["label"]))
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        np.testing.assert_array_equal(labels, serial_labels[a:b])
        assert scores[0] == serial_scores[s]


# what `predict` compiles: after `fit` (its kernels from numba's cache, where they are), every kernel of the
# package forgets what it compiled or loaded and is made to compile afresh (a cache that is never read), so
# that decode_block's compilation compiles each kernel it calls, and only those: as from an empty cache,
# at about half the cost (the training kernels load)
DECODER_ONLY = """
import importlib, pkgutil
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher
import structperc._kernels as kernels
from structperc.estimator.core import TaggerCore
from structperc._kernels.decode import second_order, viterbi
from structperc._kernels.score import scoring

X = [[('a', 'D'), ('cat', 'N')], [('the', 'D')]]
tagger = TaggerCore(templates='chunk', epochs=1).fit(X, [['B', 'I'], ['B']])
watched = {'viterbi': viterbi.viterbi, 'viterbi2': second_order.viterbi2,
           'viterbi2_context': second_order.viterbi2_context, 'local': scoring.local_log_probabilities}
for info in pkgutil.walk_packages(kernels.__path__, kernels.__name__ + '.'):
    for value in vars(importlib.import_module(info.name)).values():
        if isinstance(value, Dispatcher):  # what fit compiled or loaded is forgotten, and the cache never read
            value._reset_overloads()
            value._cache = NullCache()
before = sorted(name for name, kernel in watched.items() if kernel.signatures)
tagger.predict(X)
print(before, sorted(name for name, kernel in watched.items() if kernel.signatures))
"""


def test_a_kernel_holds_the_code_of_its_models_decoder_only():
    """decode_block compiled for a first-order Viterbi model compiles none of the other decoders'
    inference (second order, local normalization)."""
    done = _run("-c", DECODER_ONLY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ['viterbi']"


def test_the_cache_check_names_kernels_that_exist():
    from structperc._kernels import cache as kernel_cache
    from structperc._kernels.decode import decoders

    for name in kernel_cache.DECODING:
        assert hasattr(decoders, name.rsplit(".", 1)[1]), name
    assert not set(kernel_cache.training_kernels(("learn.perceptron.perceptron_epoch",))) & set(kernel_cache.DECODING)
    assert set(kernel_cache.training_kernels((), dev="dev.txt")) >= set(kernel_cache.DECODING)


LAZY_MODULE = '''
import numpy as np
from numba import njit, prange


@njit(cache=True)
def allocate(n):
    out = np.empty(n)  # the runtime allocates it
    for i in range(n):
        out[i] = i * 0.5
    return out


@njit(cache=True, parallel=True)
def row_sums(x):
    out = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        out[i] = x[i].sum()
    return out
'''

LAZY_SCRIPT = '''
import json, os, sys
import numpy as np
from structperc._kernels.cache import load_kernels_lazily, watch_kernel_sources
if sys.argv[1] == "watched":  # the module's kernels load as structperc's own do
    watch_kernel_sources(os.getcwd())
load_kernels_lazily()
import lazy_kernels
a = lazy_kernels.allocate(5)
b = lazy_kernels.row_sums(np.arange(12.0).reshape(4, 3))
print(json.dumps({"a": a.tolist(), "b": b.tolist(), "registries": "numba.np.arraymath" in sys.modules,
                  "hits": sum(lazy_kernels.allocate.stats.cache_hits.values())}))
'''


@pytest.mark.parametrize("watched", [True, False])
def test_lazily_loaded_kernels_compile_when_cold_and_skip_the_registries_when_warm(tmp_path, watched):
    """structperc's kernels (a watched folder's) load from the cache without numba's registries; a
    caller's own kernels (an unwatched folder's) load as numba loads them, registries included."""
    (tmp_path / "lazy_kernels.py").write_text(LAZY_MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = str(tmp_path)
    runs = []
    for _ in range(2):
        done = _run("-c", LAZY_SCRIPT, "watched" if watched else "unwatched", env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    cold, warm = runs
    expected = {"a": [0.0, 0.5, 1.0, 1.5, 2.0], "b": [3.0, 12.0, 21.0, 30.0]}
    for run in runs:
        assert {key: run[key] for key in expected} == expected
    # the cold run compiled (numba's compiler installed its registries); the warm one only loaded
    assert cold["hits"] == 0 and cold["registries"]
    assert warm["hits"] == 1
    if numba.__version__.startswith(_LAZY_REGISTRIES_CHECKED):
        assert warm["registries"] is not watched


HASHING_MODULE = '''
from numba import njit


@njit(cache=True)
def hashes(text):
    return hash(text)
'''
HASH_SYMBOL = b"_numba_hashsecret"


def test_no_cached_kernel_needs_the_symbols_of_numba_hashing(tiny_model, tmp_path):
    # the lazy loader does not import numba.cpython.hashing, whose import defines the symbols that
    # compiled code hashing a value links against; a kernel that hashed would crash when loaded.
    # make install compiles nothing ahead: tag once, so that at least the tagging kernels are cached
    corpus, model = tiny_model
    assert _run("-m", "structperc", "tag", corpus, "--model", model, "--quiet").returncode == 0
    caches = list((ROOT / "structperc" / "_kernels").rglob("__pycache__/*.nbc"))
    assert caches, "tagging left no cached kernel under structperc/_kernels"
    # the check sees such a kernel: one that hashes names the symbol in its cache file
    (tmp_path / "hashing_kernel.py").write_text(HASHING_MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path))
    done = _run("-c", "import hashing_kernel; hashing_kernel.hashes('a')", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(HASH_SYMBOL in p.read_bytes() for p in (tmp_path / "cache").rglob("*.nbc"))
    assert [p.name for p in caches if HASH_SYMBOL in p.read_bytes()] == []
