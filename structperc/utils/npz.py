"""``.npz`` files with JSON metadata: the format of models and rerankers.

No pickle anywhere: arrays are plain numpy arrays, the metadata is one JSON string stored as the
array ``metadata``, and files are loaded with ``allow_pickle=False``. Writes go to a temporary
file in the same folder, renamed into place, so an interrupted write leaves no half-written file.

The array ``checksum`` holds the SHA-256 of the metadata and of every array (name, dtype, shape,
bytes, in name order); reading recomputes it, so a damaged file is reported as corrupt instead of
loading wrong weights. Files written before the checksum existed load without the check.
"""
import hashlib
import json
import struct
import tokenize
import zipfile
import zlib
from pathlib import Path

import numpy as np

from structperc.errors import ModelFileError
from structperc.utils.atomic import atomic_write


# the array that marks an ensemble model file (``ensembles.vote``): several models in one file
ENSEMBLE_MARKER = "ensemble_members"


def is_ensemble_file(path):
    """Whether ``path`` is an ensemble model file (looked up in the archive's names only)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return f"{ENSEMBLE_MARKER}.npy" in archive.namelist()
    except (OSError, ValueError, EOFError, NotImplementedError, zipfile.BadZipFile):
        return False  # not a readable archive: the model reader reports it


def write_npz(path, arrays, metadata, reproducible=False):
    """Write arrays plus the JSON-able dict ``metadata`` to ``path`` atomically; returns the path.

    reproducible : the same arrays and metadata give the same bytes (the archive's members in name
        order, each dated 1980-01-01, as ``np.savez`` writes them otherwise with the time of writing)."""
    path = Path(path)
    arrays = {**arrays, "metadata": np.array(json.dumps(metadata))}
    with atomic_write(path, "wb") as handle:
        if reproducible:
            _savez_dated(handle, {**arrays, "checksum": np.array(checksum(arrays))})
        else:
            np.savez(handle, **arrays, checksum=np.array(checksum(arrays)))
    return path


def _savez_dated(handle, arrays):
    """``np.savez`` with fixed member dates and order (``write_npz(reproducible=True)``)."""
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(arrays[name]), allow_pickle=False)


def checksum(arrays):
    """SHA-256 (hex) of the arrays: each one's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(memoryview(array).cast("B"))  # the bytes, without a copy
    return digest.hexdigest()


def read_npz(path, what="model"):
    """(arrays, metadata) of a file written by ``write_npz``; ModelFileError if it is not one."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such {what} file")
    if not _looks_like_npz(path):  # numpy would read it as .npy or pickle, and advise allow_pickle
        raise ModelFileError(f"{path}: not a structperc {what} file (a {what} file is a .npz archive, "
                             f"written by structperc)")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        stored = str(arrays.pop("checksum")) if "checksum" in arrays else None
        if stored is not None and stored != checksum(arrays):
            raise ModelFileError(f"{path}: corrupt {what} file (checksum mismatch)")
        metadata = json.loads(str(arrays.pop("metadata")))
    except (OSError, ValueError, KeyError, EOFError, NotImplementedError, zipfile.BadZipFile, zlib.error,
            struct.error, SyntaxError, tokenize.TokenError) as exc:  # numpy parsing a damaged array header
        if _looks_like_npz(path):  # an archive that fails inside: damaged, not foreign
            raise ModelFileError(f"{path}: corrupt {what} file ({exc})") from None
        raise ModelFileError(f"{path}: not a structperc {what} file ({exc})") from None
    if not isinstance(metadata, dict):
        raise ModelFileError(f"{path}: not a structperc {what} file (metadata is not an object)")
    return arrays, metadata


def _looks_like_npz(path):
    """Whether the file starts or ends like a zip archive (the container of .npz files)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - 1024))
        tail = handle.read()
    return head[:2] == b"PK" or b"PK\x05\x06" in tail
