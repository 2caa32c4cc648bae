"""A folder of encoded corpora (``--cache-dir``): encode a training file once, memory-map it later.

An entry is a folder named by a key: the sha256 of the input file's bytes, the templates, the
encoder options and the reader options (``cache_key``). It holds one ``.npy`` file per array and
``manifest.json`` with each array's shape, dtype and sha256, plus the JSON metadata the arrays
need. An entry is built in a temporary folder beside it and renamed into place whole, so a reader
never sees half of one. On load every file is checked against the manifest; a missing, stale or
corrupt entry is rebuilt (with one warning), never used.
"""
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

from structperc.errors import StructpercWarning
from structperc.utils.digest import file_sha256

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


def cache_key(path, options):
    """sha256 of the file's contents and of ``options`` (JSON-able: templates, encoder and reader
    options)."""
    text = json.dumps({"version": FORMAT_VERSION, "input": file_sha256(path), "options": options},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _check(entry):
    """(arrays memory-mapped, metadata) of a cache entry, or the reason it cannot be used."""
    manifest_path = entry / MANIFEST
    if not manifest_path.exists():
        return None, "no manifest"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"unreadable manifest ({exc})"
    if manifest.get("version") != FORMAT_VERSION or manifest.get("key") != entry.name:
        return None, "stale manifest"
    arrays = {}
    for name, spec in manifest["arrays"].items():
        path = entry / f"{name}.npy"
        try:
            if file_sha256(path) != spec["sha256"]:
                return None, f"{path.name} fails its checksum"
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            return None, f"{path.name} unreadable ({exc})"
        if list(array.shape) != spec["shape"] or str(array.dtype) != spec["dtype"]:
            return None, f"{path.name} has shape {array.shape} {array.dtype}, not {spec['shape']} {spec['dtype']}"
        arrays[name] = array
    return (arrays, manifest["meta"]), None


def _write(cache_dir, key, arrays, meta):
    """Write an entry in a temporary folder and rename it into place."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{key[:12]}.", dir=cache_dir))
    try:
        specs = {}
        for name, array in arrays.items():
            path = temporary / f"{name}.npy"
            np.save(path, np.ascontiguousarray(array), allow_pickle=False)
            specs[name] = {"shape": list(array.shape), "dtype": str(array.dtype), "sha256": file_sha256(path)}
        manifest = {"version": FORMAT_VERSION, "key": key, "arrays": specs, "meta": meta}
        (temporary / MANIFEST).write_text(json.dumps(manifest))
        entry = cache_dir / key
        if entry.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{key[:12]}.old.", dir=cache_dir))
            os.replace(entry, trash / key)
            shutil.rmtree(trash, ignore_errors=True)
        os.replace(temporary, entry)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def load_or_build(cache_dir, path, options, build):
    """The cached (arrays, meta) for the file ``path`` encoded with ``options``, memory-mapped; on a
    miss, ``build()`` -> (arrays: dict of name -> ndarray, meta: JSON-able dict) is called, stored
    and returned (in memory). Returns (arrays, meta, hit)."""
    cache_dir = Path(cache_dir)
    key = cache_key(path, options)
    entry = cache_dir / key
    if entry.exists():
        found, reason = _check(entry)
        if found is not None:
            return found[0], found[1], True
        warnings.warn(StructpercWarning(f"cache entry {entry} is unusable ({reason}); rebuilding it"), stacklevel=2)
    arrays, meta = build()
    _write(cache_dir, key, arrays, meta)
    return arrays, meta, False
