"""``.npz`` files with JSON metadata: the format of models and rerankers.

No pickle anywhere: arrays are plain numpy arrays, the metadata is one JSON string stored as the
array ``metadata``, and files are loaded with ``allow_pickle=False``. Writes go to a temporary
file in the same folder, renamed into place, so an interrupted write leaves no half-written file.
"""
import json
import zipfile
from pathlib import Path

import numpy as np

from .errors import ModelFileError
from .files import atomic_write


def write_npz(path, arrays, metadata):
    """Write arrays plus the JSON-able dict ``metadata`` to ``path`` atomically; returns the path."""
    path = Path(path)
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **arrays, metadata=np.array(json.dumps(metadata)))
    return path


def read_npz(path, what="model"):
    """(arrays, metadata) of a file written by ``write_npz``; ModelFileError if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such {what} file")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        metadata = json.loads(str(arrays.pop("metadata")))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, EOFError) as exc:
        raise ModelFileError(f"{path}: not a structperc {what} file ({exc})") from None
    if not isinstance(metadata, dict):
        raise ModelFileError(f"{path}: not a structperc {what} file (metadata is not an object)")
    return arrays, metadata
