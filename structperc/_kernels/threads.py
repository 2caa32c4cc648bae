"""Sentence blocks on Python threads, for the kernels that run over a whole corpus.

A corpus kernel is compiled serial and with ``nogil=True``: it works on the sentences [lo, hi)
and writes its own part of preallocated outputs. ``over_blocks`` calls it on blocks of about
equal token counts, on as many threads as numba would use, so the kernel runs on every core
without numba's parallel backend (``parallel=True``, whose compilation of a loop over sentences
costs several times the serial kernel's and loads a threading layer). Each sentence is computed on
its own, so the result does not depend on the number of threads.
"""
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Below this many sentences, a corpus kernel runs in the calling thread: starting threads costs
# more than a small batch takes.
PARALLEL_FROM = 64
BLOCKS_PER_THREAD = 4  # shorter blocks even out the threads' loads


def thread_count():
    """numba's thread count (NUMBA_NUM_THREADS, by default the number of cores), read without
    starting numba's threading layer."""
    from numba import config

    return max(1, int(config.NUMBA_NUM_THREADS))


def token_blocks(sentence_offsets, n_blocks):
    """int64 (B + 1,): sentence boundaries of ``n_blocks`` blocks with about equal token counts
    (fewer when there are fewer sentences). Any offsets cut the same way: the features of the CRF's
    emission gradient by their occurrences (``learn.crf_tables.feature_ranges``)."""
    n_sentences = len(sentence_offsets) - 1
    n_blocks = max(1, min(n_blocks, n_sentences))
    targets = np.linspace(0, sentence_offsets[-1], n_blocks + 1)[1:-1]
    cuts = np.searchsorted(sentence_offsets, targets)
    return np.unique(np.concatenate([[0], cuts, [n_sentences]])).astype(np.int64)


def over_blocks(call, sentence_offsets, threads=None):
    """``call(lo, hi)`` on sentence blocks [lo, hi) covering every sentence of ``sentence_offsets``:
    in the calling thread below ``PARALLEL_FROM`` sentences or with one thread, else on
    ``threads`` threads (None: ``thread_count()``)."""
    n_sentences = len(sentence_offsets) - 1
    threads = thread_count() if threads is None else threads
    if n_sentences < PARALLEL_FROM or threads <= 1:
        call(0, n_sentences)
        return
    cuts = token_blocks(sentence_offsets, threads * BLOCKS_PER_THREAD)
    with ThreadPoolExecutor(threads) as pool:
        for _ in pool.map(lambda k: call(int(cuts[k]), int(cuts[k + 1])), range(len(cuts) - 1)):
            pass


_pool = None
_pool_lock = threading.Lock()


def shared_pool():
    """One pool of ``thread_count()`` threads for the process, started on first use: the kernels that
    run many times a second (an objective's evaluations) reuse its threads instead of starting new
    ones each call."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(thread_count(), thread_name_prefix="structperc")
        return _pool


def over_items(call, n_items, chunks_per_thread=8, threads=None):
    """``call(lo, hi)`` on consecutive ranges [lo, hi) covering range(n_items), handed out one at a
    time to ``threads`` threads (None: ``thread_count()``), the calling thread and threads - 1 of
    ``shared_pool()``, as each is done with its last: a thread that shares its core with another
    process takes fewer. Each item must be computed on its own (into its own part of the outputs),
    so that the result does not depend on which thread took which range. One thread, or one item,
    runs in the calling thread."""
    threads = thread_count() if threads is None else threads
    if threads <= 1 or n_items <= 1:
        call(0, n_items)
        return
    size = max(1, n_items // (threads * chunks_per_thread))
    starts = itertools.count(0, size)  # next() on it is atomic under the GIL

    def work(_):
        for lo in starts:
            if lo >= n_items:
                return
            call(lo, min(lo + size, n_items))

    helpers = [shared_pool().submit(work, k) for k in range(threads - 1)]
    try:
        work(threads - 1)  # the calling thread takes ranges too
    finally:
        for helper in helpers:
            helper.result()
