"""The sha256 of a file's bytes: corpus checksums (``data.fetch``), cache keys (``features.cache``),
template files recorded in a model (``estimator.files``)."""
import hashlib
import os

BLOCK = 1 << 20  # bytes read at a time: a large corpus is hashed in constant memory


def file_sha256(path: str | os.PathLike, block: int = BLOCK) -> str:
    """The hex sha256 of the file at ``path``, read ``block`` bytes at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(block), b""):
            digest.update(chunk)
    return digest.hexdigest()
