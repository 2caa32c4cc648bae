"""Corpus manifest and fetch (structperc.data.fetch), with fake mirrors and file:// URLs."""

import gzip
import hashlib
import json
import zipfile

import pytest

from structperc.data.fetch import MANIFEST_PATH, fetch, list_corpora
from structperc.errors import DataFetchError

TRAIN = b"He PRP B-NP\nran VBD B-VP\n\n"
TEST = b"It PRP B-NP\n\n"


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def make_manifest(urls=None, sums=None, compression=None):
    urls = urls or {}
    sums = sums or {}
    files = []
    for path, content in (("train.txt", TRAIN), ("sub/test.txt", TEST)):
        spec = {"path": path, "sha256": sums.get(path, sha(content)),
                "url": urls.get(path, f"https://example.invalid/{path}.gz")}
        if compression:
            spec["compression"] = compression
        files.append(spec)
    return {"version": 1, "corpora": [{"name": "toy", "format": "conll", "label": "chunk",
                                       "columns": ["word", "pos", "chunk"], "files": files}]}


@pytest.fixture(autouse=True)
def no_user_mirror(monkeypatch):
    """Each test states its own mirror: the user's STRUCTPERC_MIRROR must not leak in."""
    monkeypatch.delenv("STRUCTPERC_MIRROR", raising=False)
    monkeypatch.delenv("STRUCTPERC_CORPORA", raising=False)


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "mirror"
    (root / "toy" / "sub").mkdir(parents=True)
    (root / "toy" / "train.txt").write_bytes(TRAIN)
    (root / "toy" / "sub" / "test.txt").write_bytes(TEST)
    return root


def leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".part"))


def test_fetch_from_mirror(tmp_path, mirror):
    messages = []
    folder = fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=make_manifest(),
                   progress=messages.append)
    assert folder == tmp_path / "out" / "toy"
    assert (folder / "train.txt").read_bytes() == TRAIN
    assert (folder / "sub" / "test.txt").read_bytes() == TEST
    assert any("checksum ok" in m for m in messages)
    assert leftovers(tmp_path / "out") == []


def test_fetch_skips_present_files_unless_forced(tmp_path, mirror):
    manifest = make_manifest()
    fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=manifest)
    (mirror / "toy" / "train.txt").unlink()  # a second fetch must not need the mirror
    messages = []
    fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=manifest,
          progress=messages.append)
    assert sum("present" in m for m in messages) == 2
    with pytest.raises(DataFetchError, match="train.txt"):
        fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=manifest, force=True)


def test_checksum_mismatch_leaves_no_file(tmp_path, mirror):
    manifest = make_manifest(sums={"sub/test.txt": "0" * 64})
    with pytest.raises(DataFetchError, match="checksum mismatch"):
        fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=manifest)
    folder = tmp_path / "out" / "toy"
    assert not (folder / "sub" / "test.txt").exists()
    assert leftovers(tmp_path / "out") == []
    assert (folder / "train.txt").read_bytes() == TRAIN  # verified files stay


def test_corrupt_existing_file_is_replaced(tmp_path, mirror):
    folder = tmp_path / "out" / "toy"
    folder.mkdir(parents=True)
    (folder / "train.txt").write_bytes(b"garbage")
    fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=make_manifest())
    assert (folder / "train.txt").read_bytes() == TRAIN


def test_download_gzip_via_file_url(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (served / "train.txt.gz").write_bytes(gzip.compress(TRAIN))
    (served / "test.txt.gz").write_bytes(gzip.compress(TEST))
    manifest = make_manifest(
        urls={"train.txt": (served / "train.txt.gz").as_uri(),
              "sub/test.txt": (served / "test.txt.gz").as_uri()},
        compression="gzip")
    folder = fetch("toy", dest=tmp_path / "out", manifest=manifest)
    assert (folder / "train.txt").read_bytes() == TRAIN
    assert (folder / "sub" / "test.txt").read_bytes() == TEST


def test_download_bad_gzip(tmp_path):
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"this is not gzip")
    manifest = make_manifest(urls={"train.txt": bad.as_uri()}, compression="gzip")
    with pytest.raises(DataFetchError, match="gzip"):
        fetch("toy", dest=tmp_path / "out", manifest=manifest)
    assert not (tmp_path / "out" / "toy" / "train.txt").exists()


def test_download_zip_members(tmp_path):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("bundle/a.txt", TRAIN)
        bundle.writestr("bundle/b.txt", TEST)
    files = [{"path": "a.txt", "sha256": sha(TRAIN), "url": archive.as_uri(), "archive": "zip",
              "member": "bundle/a.txt"},
             {"path": "b.txt", "sha256": sha(TEST), "url": archive.as_uri(), "archive": "zip",
              "member": "bundle/b.txt"}]
    manifest = {"corpora": [{"name": "zipped", "files": files}]}
    folder = fetch("zipped", dest=tmp_path / "out", manifest=manifest)
    assert (folder / "a.txt").read_bytes() == TRAIN
    assert (folder / "b.txt").read_bytes() == TEST
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]


def test_unreachable_url_names_url_and_mirror(tmp_path):
    missing = (tmp_path / "nowhere.gz").as_uri()
    manifest = make_manifest(urls={"train.txt": missing})
    with pytest.raises(DataFetchError, match=r"nowhere\.gz.*mirror="):
        fetch("toy", dest=tmp_path / "out", manifest=manifest)


def test_env_mirror_and_dest(tmp_path, mirror, monkeypatch):
    monkeypatch.setenv("STRUCTPERC_MIRROR", str(mirror))
    monkeypatch.setenv("STRUCTPERC_CORPORA", str(tmp_path / "envdest"))
    folder = fetch("toy", manifest=make_manifest())
    assert folder == tmp_path / "envdest" / "toy"
    assert (folder / "train.txt").read_bytes() == TRAIN


def test_unknown_corpus_and_unsafe_path(tmp_path, mirror):
    with pytest.raises(DataFetchError, match="'nope'.*toy"):
        fetch("nope", mirror=mirror, dest=tmp_path, manifest=make_manifest())
    manifest = make_manifest()
    manifest["corpora"][0]["files"][0]["path"] = "../escape.txt"
    with pytest.raises(DataFetchError, match="unsafe"):
        fetch("toy", mirror=mirror, dest=tmp_path / "out", manifest=manifest)


def test_file_sha256_reads_in_blocks(tmp_path):
    from structperc.utils.digest import file_sha256

    path = tmp_path / "f.bin"
    content = bytes(range(256)) * 41 + b"tail"
    path.write_bytes(content)
    for block in (1, 7, 256, 1 << 20):
        assert file_sha256(path, block) == hashlib.sha256(content).hexdigest()


def test_manifest_from_path(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(make_manifest()))
    assert [entry["name"] for entry in list_corpora(path)] == ["toy"]


def test_shipped_manifest():
    entries = {entry["name"]: entry for entry in list_corpora()}
    assert set(entries) >= {"conll2000", "ud_english_ewt", "wsj_sample"}
    for entry in entries.values():
        for key in ("description", "format", "columns", "label", "licence", "urls", "files"):
            assert key in entry, (entry["name"], key)
        for spec in entry["files"]:
            assert len(spec["sha256"]) == 64 and int(spec["sha256"], 16) >= 0
            assert spec["url"].startswith("https://")
    assert entries["conll2000"]["columns"] == ["word", "pos", "chunk"]
    assert entries["ud_english_ewt"]["label"] == "xpos"
    assert len(entries["wsj_sample"]["files"]) == 199
    assert MANIFEST_PATH.name == "manifest.json" and MANIFEST_PATH.parent.name == "data"  # package data


def test_shipped_checksums_match_shared_mirror(tmp_path, corpus_mirror):
    """Every corpus of the manifest (conll2002_nl included) is fetched from the mirror, and each
    fetched file's sha256, computed here, is the manifest's."""
    entries = list_corpora()
    assert {"conll2000", "ud_english_ewt", "wsj_sample", "conll2002_nl"} <= {entry["name"] for entry in entries}
    for entry in entries:
        folder = fetch(entry["name"], mirror=corpus_mirror, dest=tmp_path)
        for spec in entry["files"]:
            assert hashlib.sha256((folder / spec["path"]).read_bytes()).hexdigest() == spec["sha256"], spec["path"]
