"""Giving freed memory back to the operating system between the phases of a training run.

numpy takes large arrays from the C allocator. glibc's malloc keeps memory freed in the middle of
its heap (and, after a large block is freed, serves later large blocks from the heap too), so the
reading and encoding temporaries of a big corpus would stay in the process's resident set for the
whole of training. ``trim`` asks glibc to return every free page (``malloc_trim(0)``); it is a
no-op where glibc is not the allocator.
"""
import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def trim():
    """Return the allocator's free memory to the operating system (glibc only); True if it could."""
    fn = _malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True
