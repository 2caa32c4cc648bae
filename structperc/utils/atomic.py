"""Writing files so that a reader never sees half of one.

``atomic_write`` writes to a temporary file with a unique name beside the target and renames it
onto the target only when the block ends without an error. Two writers of the same target each
have their own temporary file; the last rename wins, whole. On any error, KeyboardInterrupt
included, the temporary file is removed and the target is left as it was.
"""
import contextlib
import os
import sys
import tempfile
from pathlib import Path


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8", suffix=".tmp"):
    """Open a unique temporary file beside ``path``; on success fsync it and rename it onto ``path``.

    mode : "w" (text, ``encoding``) or "wb" (bytes)
    suffix : ending of the temporary name ``.NAME.XXXXXXXX<suffix>``
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=folder)
    try:
        with os.fdopen(fd, mode, **({"encoding": encoding} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _default_mode())  # mkstemp creates 0600; give the file the usual mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_output(path, encoding="utf-8"):
    """``atomic_write(path)``, or standard output (flushed at the end) when ``path`` is None."""
    if path is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with atomic_write(path, "w", encoding=encoding) as handle:
        yield handle
