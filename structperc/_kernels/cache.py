"""numba's on-disk cache of the kernels: is it warm for the kernels a task calls, when does it go
stale, and how the command line loads from it.

The kernels are compiled on their first call and cached beside their source (``cache=True``). A
first run after installing or editing them compiles for many seconds; ``cold`` tells beforehand, so
that the command line can say so instead of looking hung. Only entry points are listed: the
kernels they call are compiled (and cached) with them. ``watch_kernel_sources`` makes a kernel's
cache stale when any kernel module it imports changes, not only its own; ``load_kernels_lazily``
loads cached kernels without numba's compiler registries, and numba's runtime library from a cache
of its machine code rather than compiling it in every process.
"""
import functools
import hashlib
import importlib
import logging
import os
import pickle
import re
import sys
import zipfile

# every decoder of every size of input: one kernel, compiled once per decoder a model uses (the
# types of the layout's flags select its code) and run on threads for large inputs (``threads.py``)
DECODING = ("decode.decoders.decode_block",)
TAGGING = ("encode.keys.lookup_rows",)
TRAINING = ("encode.keys.intern_template", "encode.keys.number_features")
# parameter mixing (--workers N > 1, --scheduler): a shard's data, the jump to mixed weights, the sum
MIXING = ("encode.csr.gather_rows", "learn.mixing.jump", "learn.mixing.scale_into", "learn.mixing.add_scaled")
# the options and commands beyond plain training and tagging: feature hashing, gold feature-label
# pairs, reranking (perceptron, dual and kernel, boosting) and Brown clustering
OPTIONS = ("encode.keys.hash_template", "encode.keys.columns_to_csr", "score.emission.gold_pairs")
RERANKERS = {"perceptron": ("rank.ranking.ranking_epoch", "rank.ranking.predict_groups"),
             "dual": ("rank.dual_ranking.dual_epoch", "rank.dual_ranking.dual_predict",
                      "rank.dual_ranking.vote_by_differences"),
             "boost": ("rank.rank_boosting.pair_differences", "rank.rank_boosting.boost_rounds")}
RERANKING = sum(RERANKERS.values(), ())
# what `rerank apply` calls with each learner's file, and `nbest`: the choice, and the best
# candidate of each list (the oracle of the summary, on an input with gold labels only)
RERANK_APPLYING = {"perceptron": ("rank.ranking.predict_groups", "rank.ranking.group_argmax"),
                   "dual": ("rank.dual_ranking.dual_predict", "rank.dual_ranking.vote_by_differences",
                            "rank.ranking.group_argmax"),
                   "boost": ("rank.ranking.predict_groups", "rank.ranking.group_argmax")}
NBEST = ("decode.nbest.kbest_block", "rank.ranking.group_argmax")
CLUSTERING = ("cluster.brown.brown_steps",)
MARGINALS = {"global": "decode.marginals.marginals_block", "local": "decode.marginals.marginals_block"}
# the chunks' probabilities: a CRF's from its chain, an MEMM's by forcing copies of their sentences
SPANS = {"global": "decode.spans.span_block", "local": "encode.csr.gather_rows"}
# why a token got its label (`explain`, serve's /v1/explain): the score of each one-label change, the
# weights of the features that fire
EXPLAINING = ("score.changes.one_label_changes", "score.changes.feature_weights")


def training_kernels(epoch=(), dev=None, mixing=False):
    """Entry points that training calls: encoding, the rule's ``epoch`` kernels
    (``structperc.train.epoch_kernels``), with ``mixing`` parameter mixing's, and with a dev file
    ``dev`` decoding."""
    return TRAINING + tuple(epoch) + (MIXING if mixing else ()) + (DECODING if dev is not None else ())


def tagging_kernels(normalization=None, spans=True):
    """Entry points that tagging calls; with ``normalization`` ("global", "local"), also the kernels
    of the label marginals and (``spans``) of the chunks' probabilities of such a model."""
    if normalization not in MARGINALS:
        return TAGGING + DECODING
    return TAGGING + DECODING + (MARGINALS[normalization],) + ((SPANS[normalization],) if spans else ())


def nbest_kernels(labelled=True):
    """Entry points that `nbest` calls: encoding, the k-best kernel, and on an input with gold labels
    (``labelled``) the choice of each list's best candidate, for the oracle score of its summary."""
    return TAGGING + (NBEST if labelled else NBEST[:1])


# The notice before compiling, one line on stderr once per process, through logging so that a
# library user can silence it: logging.getLogger("structperc.compile").setLevel(logging.ERROR).
# The command line says it before a command starts (``cold``, ``cli.progress.announce_compiling``);
# in a Python process, numba's compile event of the first structperc kernel it compiles says it.
NOTICE = "compiling kernels, once"
logger = logging.getLogger("structperc.compile")
_said = _listening = False


def say_compiling(log=True):
    """The notice, once per process: by ``logger`` when ``log``, else only marked as said (the
    caller printed it)."""
    global _said
    if not _said and log:
        logger.warning(NOTICE)
    _said = True


def compiling_said() -> bool:
    """Whether this process has said the notice (``say_compiling``)."""
    return _said


_compiling = {"depth": 0, "start": 0.0, "seconds": 0.0}  # the compile events under way, their time


def compiling_seconds():
    """Wall seconds this process has spent compiling structperc kernels so far, to be left out of
    a speed (tokens/s): take it before and after the timed work."""
    import time

    done = _compiling["seconds"]
    if _compiling["depth"]:  # a compilation under way in another thread
        done += time.perf_counter() - _compiling["start"]
    return done


def _notice_listener():
    import time

    from numba.core import event

    class CompileWatch(event.Listener):
        """Says ``NOTICE`` when numba starts compiling a structperc kernel, once, and times the
        compilations (a kernel's callees compile inside it: the outermost event counts)."""

        def on_start(self, ev):
            if not ev.data["dispatcher"].py_func.__module__.startswith(__package__ + "."):
                return
            if not _said:
                say_compiling()
            if _compiling["depth"] == 0:
                _compiling["start"] = time.perf_counter()
            _compiling["depth"] += 1

        def on_end(self, ev):
            if not ev.data["dispatcher"].py_func.__module__.startswith(__package__ + "."):
                return
            _compiling["depth"] -= 1
            if _compiling["depth"] == 0:
                _compiling["seconds"] += time.perf_counter() - _compiling["start"]

    return CompileWatch()


def notice_compiling():
    """Say ``NOTICE`` when a structperc kernel starts to compile, and time the compilations
    (``compiling_seconds``), through numba's "numba:compile" events."""
    global _listening
    from numba.core import event

    if not _listening:
        event.register("numba:compile", _notice_listener())
        _listening = True


def _has_cached_code(name):
    module_name, function_name = name.rsplit(".", 1)
    module = importlib.import_module(f"structperc._kernels.{module_name}")
    dispatcher = getattr(module, function_name)
    try:
        # the index lists the compiled signatures; numba returns none when the source changed since
        return bool(dispatcher._cache._cache_file._load_index())
    except (AttributeError, OSError, EOFError, pickle.UnpicklingError):
        return False


def cold(names):
    """True when any of the kernels ``names`` ("module.function" under structperc._kernels) has no
    cached machine code for its current source, so that calling it compiles."""
    return not all(_has_cached_code(name) for name in names)


# numba versions whose cache loading was checked to need only the runtime and the import-time symbols
_LAZY_REGISTRIES_CHECKED = ("0.68.",)


def load_numba_without_blas():
    """Load numba's compiler registries now, with the BLAS probe skipped.

    Loading its first kernel, numba imports ``scipy.linalg.cython_blas`` (and so all of
    scipy.linalg, about a third of a warm ``tag`` run) only to offer ``np.dot`` and friends in
    compiled code. No structperc kernel uses them. For the command line only: in a library caller's
    process it would hide BLAS from the caller's own kernels. scipy itself stays importable.
    """
    if "numba.np.arraymath" in sys.modules or "scipy.linalg.cython_blas" in sys.modules:
        return
    from numba.core.registry import cpu_target

    sys.modules["scipy.linalg.cython_blas"] = None  # import fails: numba's probe finds no BLAS
    try:
        cpu_target.target_context.refresh()
        cpu_target.typing_context.refresh()
    finally:
        del sys.modules["scipy.linalg.cython_blas"]


def _load_overload_without_registries(cache, sig, target_context):
    # What a cached kernel's machine code links against, short of the registries: the runtime
    # (allocation, reference counts). The parallel kernels start their thread pool themselves
    # (their reload hooks). Code that hashes would also need the symbols that importing
    # numba.cpython.hashing adds; no structperc kernel hashes (tests/test_startup.py checks the cache).
    from numba.core.runtime import nrtdynmod, rtsys

    if not rtsys._init:
        nrtdynmod.compile_nrt_functions = _cached_nrt_functions
    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)


def _nrt_cache_path(codegen):
    """Where the runtime's machine code is kept: with the kernels' caches (NUMBA_CACHE_DIR when set,
    else __pycache__ beside them), one file per numba and llvmlite version and target (CPU name
    and features, as numba's own cache index keys them) and NRT debugging setting."""
    import llvmlite
    import numba

    # numba's NRT debugging options change the runtime's code
    debug = (getattr(numba.config, "DEBUG_NRT", 0), getattr(numba.config, "DEBUG_NRT_STACK_LIMIT", 0))
    key = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple(), debug)).encode()
    name = f"nrt-{hashlib.sha256(key).hexdigest()[:16]}.npz"
    folder = numba.config.CACHE_DIR or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    return os.path.join(folder, name)


def _cached_nrt_functions(ctx):
    """``numba.core.runtime.nrtdynmod.compile_nrt_functions`` through an on-disk cache.

    numba compiles its runtime's few LLVM functions (atomic reference counts) in every process, on
    the first kernel it loads. That one compilation runs LLVM's optimiser and code generator, whose
    code pages add to the resident set of a run that otherwise only loads cached
    kernels (linking machine code touches far less of LLVM). The library is kept as numba keeps a
    cached kernel's (machine code and the shared bitcode it links from), as two uint8 arrays in
    an npz (no pickle); a missing, unreadable or unwritable file falls back to compiling.
    """
    import numpy as np
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import nrtdynmod

    codegen = ctx.codegen()
    path = _nrt_cache_path(codegen)
    try:
        with np.load(path, allow_pickle=False) as arrays:
            state = (str(arrays["name"]), "object", (arrays["object_code"].tobytes(), arrays["bitcode"].tobytes()))
        return codegen.unserialize_library(state)
    except (OSError, KeyError, ValueError, RuntimeError, zipfile.BadZipFile):
        pass  # compiled below, and the file written anew
    with global_compiler_lock:
        ir_module, library = nrtdynmod.create_nrt_module(ctx)
        library.enable_object_caching()
        library.add_ir_module(ir_module)
        library.finalize()
    name, _, (object_code, bitcode) = library.serialize_using_object_code()
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "wb") as handle:
            np.savez(handle, name=np.array(name), object_code=np.frombuffer(object_code, dtype=np.uint8),
                     bitcode=np.frombuffer(bitcode, dtype=np.uint8))
        os.replace(partial, path)  # another process may be writing the same file: whole or nothing
    except OSError:  # a read-only cache folder: compiled again next time
        if os.path.exists(partial):
            os.remove(partial)
    return library


def load_kernels_lazily():
    """Load structperc's cached kernels without numba's compiler registries; True when installed.

    Before it loads a kernel's machine code from the cache, numba installs every typing and
    lowering registry it has (a large part of a warm ``tag`` run's start; ``make compile-budget``
    measures it: benchmarks/compile.md), and imports scipy.linalg for its BLAS probe. Only compiling
    uses them, and numba's compiler installs them itself before each compilation, so a cold kernel still compiles. Only
    the kernels of the folders that ``watch_kernel_sources`` watches load this way: a caller's own
    cached kernels load as numba loads them, registries and BLAS included. Done for the numba
    versions where this was checked (tests/test_startup.py loads and compiles under it); otherwise
    nothing changes and False is returned. Installed when ``structperc._kernels`` is imported.
    """
    import numba
    from numba.core import caching

    if not numba.__version__.startswith(_LAZY_REGISTRIES_CHECKED) or not hasattr(caching.Cache, "_load_overload"):
        return False
    original = caching.Cache.load_overload
    if getattr(original, "structperc_lazy", False):
        return True

    def load_overload(cache, sig, target_context):
        if _watched(getattr(cache, "_py_func", None)):
            return _load_overload_without_registries(cache, sig, target_context)
        return original(cache, sig, target_context)

    load_overload.structperc_lazy = True
    caching.Cache.load_overload = load_overload
    return True


def _watched(py_func):
    """Whether the kernel ``py_func`` is defined in a folder that ``watch_kernel_sources`` watches."""
    try:
        source = os.path.abspath(py_func.__code__.co_filename)
    except AttributeError:
        return False
    return any(source.startswith(folder + os.sep) for folder in _WATCHED_FOLDERS)


# numba stamps a kernel's cache with its own source file only. But a kernel that calls a helper of
# another module compiles that helper's code into its own machine code, so after an edit of the
# helper alone, the callers' caches still looked fresh and ran the old helper. The kernel modules'
# caches are stamped instead with the sources of the module and of every module of its folder it
# imports (``from .name import``, ``from ..family.name import``), transitively.
_RELATIVE_IMPORT = re.compile(r"^\s*from (\.+)([\w.]+) import", re.M)
_WATCHED_FOLDERS = set()


@functools.lru_cache(maxsize=None)
def _source(path, mtime_ns, size):
    """(sha256 of the file, the modules it imports relatively, as paths relative to its folder);
    memoized on the file's mtime and size."""
    with open(path, "rb") as handle:
        text = handle.read()
    imports = tuple(os.path.join(*([os.pardir] * (len(dots) - 1)), *name.split(".")) + ".py"
                    for dots, name in _RELATIVE_IMPORT.findall(text.decode("utf-8")))
    return hashlib.sha256(text).digest(), imports


def _read(path):
    st = os.stat(path)
    return _source(path, st.st_mtime_ns, st.st_size)


def kernel_sources(path):
    """The module file ``path`` and the files of the modules that it imports relatively, directly
    or not, sorted."""
    seen, todo = set(), [os.path.abspath(path)]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for relative in _read(current)[1]:
            imported = os.path.normpath(os.path.join(os.path.dirname(current), relative))
            if os.path.isfile(imported):  # a package (a folder) is not a kernel module
                todo.append(imported)
    return sorted(seen)


def sources_stamp(path):
    """The cache stamp of the kernels of ``path``: a digest of its source and its imports' sources."""
    digest = hashlib.sha256()
    for source in kernel_sources(path):
        digest.update(os.path.basename(source).encode() + b"\0" + _read(source)[0])
    return digest.digest()


def _watching(locator):
    """``locator`` (a numba cache locator backed by a source file), stamping with ``sources_stamp``
    the kernels of the watched folders and declining all others."""

    class Watching(locator):
        def get_source_stamp(self):
            return sources_stamp(self._py_file)

        @classmethod
        def from_function(cls, py_func, py_file):
            source = os.path.abspath(py_file)
            if not any(source.startswith(folder + os.sep) for folder in _WATCHED_FOLDERS):
                return None
            return super().from_function(py_func, py_file)

    Watching.__name__ = Watching.__qualname__ = f"Watching{locator.__name__}"
    return Watching


def watch_kernel_sources(folder):
    """Stamp the caches of the kernels defined in ``folder`` with ``sources_stamp``: call before
    those modules are imported. numba's own locators, in its order, with the new stamp: the
    NUMBA_CACHE_DIR folder when set, else __pycache__ beside the source, else the user's cache.
    A NUMBA_CACHE_LOCATOR_CLASSES setting replaces them all and is left alone, as is a numba
    without these locators."""
    from numba.core import caching

    folder = os.path.abspath(folder)
    if folder in _WATCHED_FOLDERS:
        return
    _WATCHED_FOLDERS.add(folder)
    bases = [getattr(caching, name, None) for name in ("UserProvidedCacheLocator", "InTreeCacheLocator",
                                                       "UserWideCacheLocator")]
    locators = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if None in bases or not isinstance(locators, list) or any(c.__name__.startswith("Watching") for c in locators):
        return
    locators[:0] = [_watching(base) for base in bases]
