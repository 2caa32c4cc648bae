"""Every process-wide setting structperc makes, in one place, each with why. ``configure`` applies
them once; the kernels' package calls it as it is first imported, because numba picks a kernel's
cache locator when the kernel is decorated, so the settings must be in place before the first kernel
module is imported (the one stated exception to "no side effect at import time").

- ``OMP_WAIT_POLICY=PASSIVE`` (a user's own setting stays): numba's OpenMP threads, which run the one
  ``prange`` kernel (``learn.crf_batch``), wait for the next parallel region by sleeping, not spinning.
  On a machine whose cores are busy with other work, a spinning thread keeps the core from the thread
  it waits for. libgomp reads the setting when numba loads it, at the first parallel kernel.
- numba's cache locator (``cache.watch_kernel_sources``): a kernel's cache goes stale when a helper it
  inlines changes, not only its own module.
- numba's compile event (``cache.notice_compiling``): one line on stderr before the first kernel
  compiles, so that a first run does not look hung.
- numba's cache loader (``cache.load_kernels_lazily``): cached kernels load without numba's compiler
  registries, which a tagging command would otherwise initialise for every kernel it loads.

The cyclic garbage collector is paused only around a pass, and restored (``utils.collector``).
"""
import os

_configured = False


def configure():
    """Apply the settings above, once per process."""
    global _configured
    if _configured:
        return
    _configured = True
    from .cache import load_kernels_lazily, notice_compiling, watch_kernel_sources

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    watch_kernel_sources(os.path.dirname(__file__))
    notice_compiling()
    load_kernels_lazily()
