"""The one thread policy of structperc: how many threads, and which ones.

How many: ``thread_count()``, numba's own count (``numba.set_num_threads`` once numba's threading
layer runs, else NUMBA_NUM_THREADS, by default the number of cores). Which: the corpus kernels are
compiled serial and with ``nogil=True``, each working on the sentences [lo, hi) into its own part of
preallocated outputs, and run on the calling thread plus the threads of one pool for the process
(``shared_pool``), handed out a few at a time (``over_items``; ``over_blocks`` cuts sentences into
blocks of about equal token counts first). Each sentence is computed on its own, so the result does
not depend on the number of threads.

One exception, for a stated reason: the L-BFGS objective's sum of the blocks' gradients
(``learn.crf_batch.crf_objective``) is a ``prange`` loop of numba's parallel backend, whose threads
sum a slice of every block's gradient at once without a Python call per slice; it takes its thread
count from numba, as ``thread_count`` does.
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
    """numba's thread count: what ``numba.set_num_threads`` set, once numba's threading layer runs
    (that call starts it); before, NUMBA_NUM_THREADS (by default the number of cores), read without
    starting the layer, which costs a tagging command its start-up."""
    from numba import config
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        from numba import get_num_threads

        return max(1, int(get_num_threads()))
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
    in the calling thread below ``PARALLEL_FROM`` sentences or with one thread, else on ``threads``
    threads (None: ``thread_count()``) of ``over_items``."""
    n_sentences = len(sentence_offsets) - 1
    threads = thread_count() if threads is None else threads
    if n_sentences < PARALLEL_FROM or threads <= 1:
        call(0, n_sentences)
        return
    cuts = token_blocks(sentence_offsets, threads * BLOCKS_PER_THREAD)

    def blocks(lo, hi):
        for k in range(lo, hi):
            call(int(cuts[k]), int(cuts[k + 1]))

    over_items(blocks, len(cuts) - 1, chunks_per_thread=BLOCKS_PER_THREAD, threads=threads)


_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def shared_pool():
    """One pool of ``thread_count() - 1`` threads for the process (the calling thread is the other),
    started on first use and grown when the count grows: the kernels reuse its threads instead of
    starting new ones each call."""
    global _pool, _pool_size
    with _pool_lock:
        wanted = thread_count()
        if _pool is None or _pool_size < wanted - 1:  # numba.set_num_threads raised the count
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool, _pool_size = ThreadPoolExecutor(max(1, wanted - 1), thread_name_prefix="structperc"), wanted - 1
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
