"""Pausing Python's cyclic garbage collector around passes that allocate millions of acyclic objects."""
import contextlib
import gc


@contextlib.contextmanager
def collector_paused():
    """Pause the cyclic garbage collector for the block. Reading a corpus or interning the items of
    feature dicts makes millions of short-lived tuples and strings; each allocation counts toward the
    next collection, and each full collection walks every object the caller holds (a user's list of
    dicts: 20 items a token). They are freed by their reference counts either way. Restores the
    collector as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
