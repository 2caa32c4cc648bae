"""Known corpora: the manifest (``manifest.json``, package data beside this module) and `fetch`,
which copies or downloads a corpus and verifies every file's sha256.

Files are written to a temporary name next to their destination and renamed into place only
after their checksum matches, so a failed or corrupt fetch never leaves a bad file behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from importlib.resources import files
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from structperc.errors import DataFetchError
from structperc.utils.atomic import atomic_write
from structperc.utils.digest import BLOCK, file_sha256

# read with importlib.resources, so that an installed package (a wheel) finds it as a checkout does
MANIFEST_PATH = files("structperc.data").joinpath("manifest.json")
COMPRESSIONS = ("gzip",)
ARCHIVES = ("zip",)


def load_manifest(manifest: dict | str | os.PathLike | None = None) -> dict:
    """The manifest as a dict: the given dict, the JSON file at the given path, or the default."""
    if isinstance(manifest, dict):
        return manifest
    path = Path(manifest) if manifest is not None else MANIFEST_PATH
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise DataFetchError(f"{path}: cannot read corpus manifest: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise DataFetchError(f"{path}:{error.lineno}: invalid JSON in corpus manifest: "
                             f"{error.msg}") from None


def list_corpora(manifest: dict | str | os.PathLike | None = None) -> list[dict]:
    """Manifest entries, one dict per corpus (name, description, format, columns, label,
    licence, urls, files)."""
    return list(load_manifest(manifest).get("corpora", []))


def corpus_entry(name: str, manifest: dict | str | os.PathLike | None = None) -> dict:
    """The manifest entry of corpus `name`."""
    entries = list_corpora(manifest)
    for entry in entries:
        if entry["name"] == name:
            return entry
    known = ", ".join(entry["name"] for entry in entries)
    raise DataFetchError(f"unknown corpus {name!r}; known corpora: {known}")


def default_corpora_dir() -> Path:
    """Where fetched corpora go: $STRUCTPERC_CORPORA, else the folder ``corpora`` in the current
    directory (in a checkout, run from its root as the Makefile does: the checkout's corpora/)."""
    return Path(os.environ.get("STRUCTPERC_CORPORA") or Path.cwd() / "corpora")


def fetch(name: str, mirror: str | os.PathLike | None = None,
          dest: str | os.PathLike | None = None, force: bool = False,
          progress: Callable[[str], None] | None = None,
          manifest: dict | str | os.PathLike | None = None) -> Path:
    """Fetch corpus `name` into ``dest/name`` and verify its checksums.

    Parameters
    ----------
    name : str
        A corpus in the manifest.
    mirror : str or path, optional
        A folder (or URL) holding ``NAME/<file path>`` for each file; default $STRUCTPERC_MIRROR.
        Without a mirror, files are downloaded from their manifest URLs.
    dest : str or path, optional
        Root folder for corpora; default `default_corpora_dir()`.
    force : bool
        Fetch again even when a file is present with the right checksum.
    progress : callable(str), optional
        Receives one line per step.
    manifest : dict or path, optional
        Manifest to use instead of the package's (``MANIFEST_PATH``).

    Returns
    -------
    Path
        The corpus folder ``dest/name``.

    Raises
    ------
    DataFetchError
        Unknown corpus, unreachable source, or checksum mismatch.
    """
    entry = corpus_entry(name, manifest)
    report = progress or (lambda message: None)
    folder = Path(dest) if dest is not None else default_corpora_dir()
    folder = folder / name
    if mirror is None:
        mirror = os.environ.get("STRUCTPERC_MIRROR") or None
    archives: dict[str, Path] = {}  # archive URL -> downloaded copy, shared by its members
    try:
        for spec in entry["files"]:
            relative = _safe_relative_path(name, spec["path"])
            target = folder / relative
            if not force and target.is_file() and file_sha256(target) == spec["sha256"]:
                report(f"{name}/{relative}: present, checksum ok")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if mirror is not None:
                source = _mirror_location(mirror, name, relative)
                report(f"{name}/{relative}: copying from {source}")
                blocks = _read_source(source, mirror=True)
            else:
                source = spec["url"]
                report(f"{name}/{relative}: downloading {source}")
                blocks = _download_blocks(spec, folder, archives)
            _write_verified(target, blocks, spec["sha256"], f"{name}/{relative}", source)
            report(f"{name}/{relative}: checksum ok")
    finally:
        for path in archives.values():
            path.unlink(missing_ok=True)
    return folder


def _safe_relative_path(name: str, path: str) -> str:
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        raise DataFetchError(f"corpus {name!r}: unsafe file path {path!r} in manifest")
    return str(PurePosixPath(*parts))


def _mirror_location(mirror, name: str, relative: str) -> str:
    mirror = str(mirror)
    if "://" in mirror:
        return f"{mirror.rstrip('/')}/{name}/{relative}"
    return str(Path(mirror) / name / relative)


def _read_source(source: str, mirror: bool) -> Iterator[bytes]:
    """Blocks of bytes from a local path or URL."""
    hint = "" if mirror else "; no network? copy the corpus from a local mirror with mirror=DIR " \
                             "(or set STRUCTPERC_MIRROR)"
    if "://" not in source:
        try:
            handle = open(source, "rb")
        except OSError as error:
            raise DataFetchError(f"cannot read {source}: {error.strerror}{hint}") from None
    else:
        try:
            handle = urllib.request.urlopen(source, timeout=60)
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise DataFetchError(f"cannot download {source}: {reason}{hint}") from None
    with handle:
        try:
            yield from iter(lambda: handle.read(BLOCK), b"")
        except OSError as error:
            raise DataFetchError(f"reading {source} failed: {error}{hint}") from None


def _download_blocks(spec: dict, folder: Path, archives: dict[str, Path]) -> Iterator[bytes]:
    """Blocks of the file described by `spec`, decompressed or extracted as it says."""
    url = spec["url"]
    archive = spec.get("archive")
    compression = spec.get("compression")
    if archive is not None:
        if archive not in ARCHIVES:
            raise DataFetchError(f"{url}: unknown archive type {archive!r}; known: "
                                 f"{', '.join(ARCHIVES)}")
        if url not in archives:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".archive-", suffix=".part",
                                             delete=False) as handle:
                archives[url] = Path(handle.name)
                for block in _read_source(url, mirror=False):
                    handle.write(block)
        return _zip_member_blocks(archives[url], spec["member"], url)
    blocks = _read_source(url, mirror=False)
    if compression is None:
        return blocks
    if compression not in COMPRESSIONS:
        raise DataFetchError(f"{url}: unknown compression {compression!r}; known: "
                             f"{', '.join(COMPRESSIONS)}")
    return _gunzip_blocks(blocks, url)


def _gunzip_blocks(blocks: Iterator[bytes], url: str) -> Iterator[bytes]:
    # wbits = 16 + MAX_WBITS: expect a gzip header and trailer
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        for block in blocks:
            yield decompressor.decompress(block)
        yield decompressor.flush()
    except zlib.error as error:
        raise DataFetchError(f"{url}: not valid gzip data ({error})") from None
    if not decompressor.eof:
        raise DataFetchError(f"{url}: gzip data is truncated")


def _zip_member_blocks(archive: Path, member: str, url: str) -> Iterator[bytes]:
    try:
        with zipfile.ZipFile(archive) as bundle, bundle.open(member) as handle:
            yield from iter(lambda: handle.read(BLOCK), b"")
    except KeyError:
        raise DataFetchError(f"{url}: archive has no member {member!r}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise DataFetchError(f"{url}: not a valid zip archive ({error})") from None


def _write_verified(target: Path, blocks: Iterator[bytes], expected_sha256: str, label: str,
                    source: str) -> None:
    """Write blocks to a temporary file beside `target`; rename it into place if the sha256
    matches, otherwise delete it and raise."""
    digest = hashlib.sha256()
    with atomic_write(target, "wb", suffix=".part") as handle:
        for block in blocks:
            digest.update(block)
            handle.write(block)
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise DataFetchError(f"{label}: checksum mismatch for the copy from {source}: "
                                 f"expected sha256 {expected_sha256}, got {actual}")


__all__ = ["fetch", "list_corpora", "load_manifest", "corpus_entry", "default_corpora_dir",
           "MANIFEST_PATH"]
