"""What keeps a training run's peak down: the word ids do not hold the encoder's value matrix, and
numba's runtime library is loaded from a cache of its machine code rather than compiled."""
import os
import subprocess
import sys

import numpy as np
import pytest

from structperc.corpus import as_corpus
from structperc.features.encode import FIRST_ID, FeatureEncoder

WORDS = ["the", "cat", "Sat", "on", "mat-2", "a", "dog", "ran", "Big", "red", "x1", "of"]
# templates reading many fields (word attributes too): the value matrix has many rows
TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[0]", "suffix2[0]", "prefix1[0]", "shape[0]", "lower[1]", "bias"]


def random_corpus(rng, n_sentences):
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, 7))
        X.append([(WORDS[i], f"P{p}") for i, p in zip(rng.integers(0, len(WORDS), n), rng.integers(0, 3, n))])
        y.append([("A", "B", "C")[i] for i in rng.integers(0, 3, n)])
    return as_corpus(X, y, ["word", "pos"])


@pytest.mark.parametrize("release", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_word_ids_own_their_memory_and_are_the_word_value_ids(seed, release):
    corpus = random_corpus(np.random.default_rng(seed), 20)
    words = list(corpus.columns["word"])
    encoder = FeatureEncoder(TEMPLATES)
    encoded = encoder.fit_transform(corpus, release=release)
    ids = encoded.word_ids
    # a row of the (n_fields, n_tokens) value matrix would be a view keeping all of it alive
    assert ids.base is None and ids.flags.owndata
    assert ids.nbytes == ids.itemsize * len(words)
    vocabulary = {w: i + FIRST_ID for i, w in enumerate(encoder.vocabularies_["word"])}
    assert ids.tolist() == [vocabulary[w] for w in words]


RUNTIME = """
import sys
from numba.core.registry import cpu_target
from numba.core.runtime import nrtdynmod
from structperc._kernels import cache

cache._nrt_cache_path = lambda codegen: sys.argv[1]
built = []
create = nrtdynmod.create_nrt_module
nrtdynmod.create_nrt_module = lambda ctx: built.append(1) or create(ctx)
library = cache._cached_nrt_functions(cpu_target.target_context)
print("compiled" if built else "loaded", library.get_pointer_to_function("nrt_atomic_add") != 0)
"""


def runtime_library(path):
    """In a fresh process (a library's symbols are defined once per process): "compiled" or
    "loaded", and whether the library defines the runtime's atomic increment."""
    out = subprocess.run([sys.executable, "-c", RUNTIME, str(path)], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_runtime_library_is_written_once_then_loaded_and_rebuilt_when_damaged(tmp_path):
    path = tmp_path / "nrt.npz"
    assert runtime_library(path) == ["compiled", "True"]
    with np.load(path, allow_pickle=False) as arrays:  # no pickle in the file
        assert arrays["object_code"].dtype == np.uint8 and arrays["object_code"].size > 0
        object_code = arrays["object_code"]
    written = path.read_bytes()
    assert runtime_library(path) == ["loaded", "True"]
    assert path.read_bytes() == written
    path.write_bytes(b"not an npz")
    assert runtime_library(path) == ["compiled", "True"]
    with np.load(path, allow_pickle=False) as arrays:  # rebuilt: the same machine code
        assert np.array_equal(arrays["object_code"], object_code)
    assert runtime_library(path) == ["loaded", "True"]


def test_command_line_loading_uses_the_cached_runtime_and_still_compiles_new_kernels():
    """structperc's loading (``load_kernels_lazily``): a cached kernel, then a kernel compiled in
    the process, which links against the runtime library read from the cache."""
    code = """
import numpy as np
from numba import njit
from numba.core.runtime import nrtdynmod, rtsys
from structperc._kernels.cache import load_kernels_lazily
load_kernels_lazily()
from structperc._kernels.encode.csr import gather_rows
offsets, labels = gather_rows(np.array([0, 1, 3]), np.array([5, 6, 7]), np.array([1, 0, 1]))
assert offsets.tolist() == [0, 2, 3, 5] and labels.tolist() == [6, 7, 5, 6, 7]
assert rtsys._init

@njit
def filled(n):
    a = np.empty(n)
    a[:] = 2.0
    return [a.sum(), float(n)]

print(nrtdynmod.compile_nrt_functions.__name__, filled(10))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["_cached_nrt_functions", "[20.0,", "10.0]"]
