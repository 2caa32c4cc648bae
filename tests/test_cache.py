"""--cache-dir: the encoded training corpus is stored once, memory-mapped later, rebuilt when corrupt."""
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import forked_cli

import structperc.readers as readers
from structperc.errors import StructpercWarning
from structperc.estimator.tagger import Tagger

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "tiny.conll"


def _fit(tmp_path, name, **options):
    tagger = Tagger(epochs=3, **options).fit_file(TINY)
    path = tmp_path / name
    tagger.save(path)
    return path.read_bytes()


def _entries(cache):
    return [p for p in cache.iterdir() if not p.name.startswith(".")]


def test_second_run_maps_the_cache_and_gives_the_same_model(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    plain = _fit(tmp_path, "plain.npz")
    first = _fit(tmp_path, "first.npz", cache_dir=cache)
    (entry,) = _entries(cache)
    manifest = json.loads((entry / "manifest.json").read_text())
    assert "encoded__feature_ids" in manifest["arrays"]

    def no_reading(*args, **kwargs):
        raise AssertionError("the training file was read again")

    monkeypatch.setattr(readers, "read_corpus", no_reading)
    loaded = {}
    real_load = np.load

    def spy(path, *args, **kwargs):
        loaded[Path(path).name] = kwargs.get("mmap_mode")
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(np, "load", spy)
    second = _fit(tmp_path, "second.npz", cache_dir=cache)
    assert first == plain and second == plain
    assert loaded and set(loaded.values()) == {"r"}


@pytest.mark.parametrize("damage", ["flip", "truncate", "manifest", "missing"])
def test_a_corrupt_cache_is_rebuilt_with_one_warning(tmp_path, damage):
    cache = tmp_path / "cache"
    plain = _fit(tmp_path, "plain.npz", cache_dir=cache)
    (entry,) = _entries(cache)
    target = entry / "encoded__feature_ids.npy"
    data = bytearray(target.read_bytes())
    if damage == "flip":
        data[-3] ^= 0xFF
        target.write_bytes(bytes(data))
    elif damage == "truncate":
        target.write_bytes(bytes(data[:-8]))
    elif damage == "manifest":
        (entry / "manifest.json").write_text("{")
    else:
        target.unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = _fit(tmp_path, "again.npz", cache_dir=cache)
    messages = [str(w.message.message) for w in caught if isinstance(w.message, StructpercWarning)]
    assert len(messages) == 1 and "rebuilding" in messages[0]
    assert again == plain
    (entry,) = _entries(cache)
    assert target.read_bytes() == bytes(data) if damage == "manifest" else target.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _fit(tmp_path, "third.npz", cache_dir=cache) == plain  # the rebuilt entry is used silently


def test_other_options_or_another_file_use_another_entry(tmp_path):
    cache = tmp_path / "cache"
    _fit(tmp_path, "a.npz", cache_dir=cache)
    _fit(tmp_path, "b.npz", cache_dir=cache, min_count=2)
    assert len(_entries(cache)) == 2
    changed = tmp_path / "changed.conll"
    changed.write_text(TINY.read_text().replace("NN", "NNS", 1))
    Tagger(epochs=1, cache_dir=cache).fit_file(changed)
    assert len(_entries(cache)) == 3


def test_cli_cache_dir(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for run in range(2):
        model = tmp_path / f"m{run}.npz"
        r = forked_cli.run(["train", str(TINY), "--model", str(model),
                            "--epochs", "2", "--cache-dir", str(tmp_path / "c"), "-q"], env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        outputs.append(model.read_bytes())
    assert outputs[0] == outputs[1]
