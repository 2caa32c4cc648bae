"""Where named models live: ``<user cache>/structperc/<version>/models/``.

The user cache is ``$XDG_CACHE_HOME`` (else ``~/.cache``) on Linux and other Unix systems,
``~/Library/Caches`` on macOS and ``%LOCALAPPDATA%`` on Windows. A model NAME is two files:

- ``NAME.npz``, the model, written atomically (``utils.atomic``);
- ``NAME.json``, its build record: the model file's sha256, the build time, the test score, the
  recipe. It is written after the model, so a model without its record (a build stopped between
  the two renames) is not a built model; a model whose bytes no longer have the recorded sha256
  (changed on disk) is refused, and so is one whose record holds another recipe than the caller's.

``NAME.lock`` serialises the builds of one name across processes (``fcntl.flock``; ``msvcrt.locking``
on Windows), released by the system when a process ends, however it ends.

A NAME is checked (``checked_name``) wherever it becomes a path: ``[a-z0-9][a-z0-9._-]*``, the whole
of it, so that no name reaches outside the folder (no ``/``, no backslash, no leading ``.``).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from pathlib import Path

from structperc.errors import ModelNameError
from structperc.utils.atomic import atomic_write
from structperc.utils.digest import file_sha256


def user_cache_dir() -> Path:
    """The platform's folder for a user's cached files."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def cache_root() -> Path:
    """``<user cache>/structperc/<version>``: the models of this version of the package (the installed
    distribution's version; "source" for a checkout on PYTHONPATH that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("structperc")
    except PackageNotFoundError:
        installed = "source"
    return user_cache_dir() / "structperc" / installed


MODEL_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


def checked_name(name) -> str:
    """``name`` when it may name a model (``MODEL_NAME``, the whole of it); ModelNameError otherwise."""
    if not isinstance(name, str) or MODEL_NAME.fullmatch(name) is None:
        raise ModelNameError(f"{name!r} is not a model name: lower-case letters, digits, '.', '_' and '-', "
                             f"starting with a letter or digit")
    return name


def models_dir() -> Path:
    return cache_root() / "models"


def model_file(name: str) -> Path:
    return models_dir() / f"{checked_name(name)}.npz"


def record_file(name: str) -> Path:
    return models_dir() / f"{checked_name(name)}.json"


def read_record(name: str) -> dict | None:
    """The build record of ``name``, or None when there is none (or it cannot be read)."""
    try:
        with open(record_file(name), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def write_record(name: str, record: dict) -> None:
    with atomic_write(record_file(name)) as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
        handle.write("\n")


def check_built(name: str, quick: bool = False, recipe: dict | None = None) -> tuple[dict | None, str | None]:
    """(the record of a good built model, None), or (None, why it is not one): not built, no record,
    built from another recipe than ``recipe`` (its ``making()``, when given: the fields it names), or a
    model file whose sha256 is not the recorded one. quick : compare the file's size with the recorded
    one instead of its sha256 (for a listing; loading always checks the sha256)."""
    path = model_file(name)
    if not path.is_file():
        return None, "not built"
    record = read_record(name)
    if record is None or "sha256" not in record:
        return None, f"{path} has no build record"
    built_from = record.get("recipe") or {}
    if recipe is not None and {key: built_from.get(key) for key in recipe} != json.loads(json.dumps(recipe)):
        return None, f"{path} was built from another recipe of {name}"
    if quick and "size" in record:
        size = path.stat().st_size
        return (record, None) if size == record.get("size") else (None, f"{path} changed on disk since it was built")
    actual = file_sha256(path)
    if actual != record["sha256"]:
        return None, (f"{path} changed on disk since it was built "
                      f"(sha256 {actual[:12]}..., recorded {record['sha256'][:12]}...)")
    return record, None


@contextlib.contextmanager
def build_lock(name: str):
    """Hold the build lock of ``name`` (waits for another process's build to end): ``fcntl.flock``, or
    on Windows ``msvcrt.locking`` of the lock file's first byte."""
    folder = models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{checked_name(name)}.lock", "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                    break
                except OSError:
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
