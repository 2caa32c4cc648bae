"""Model file integrity: a damaged file is reported as corrupt, never loaded as wrong weights."""
import numpy as np
import pytest

from structperc.errors import ModelFileError
from structperc.model.linear_chain import LinearChainModel
from structperc.utils.npz import checksum, read_npz, write_npz
from structperc.estimator.tagger import Tagger

X = [[("the", "DT"), ("cat", "NN"), ("sat", "VBD")], [("a", "DT"), ("dog", "NN"), ("ran", "VBD")]]
Y = [["B-NP", "I-NP", "O"], ["B-NP", "I-NP", "O"]]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.npz"
    Tagger(templates="chunk", epochs=3).fit(X, Y).save(path)
    return path


def test_checksum_covers_names_dtypes_shapes_and_bytes():
    base = {"a": np.arange(4, dtype=np.int64), "b": np.zeros(2)}
    variants = [
        {"a": np.arange(4, dtype=np.int32), "b": np.zeros(2)},
        {"a": np.arange(4, dtype=np.int64).reshape(2, 2), "b": np.zeros(2)},
        {"a": np.array([0, 1, 2, 4]), "b": np.zeros(2)},
        {"c": np.arange(4, dtype=np.int64), "b": np.zeros(2)},
    ]
    assert len({checksum(base), *(checksum(v) for v in variants)}) == 5
    assert checksum(base) == checksum(dict(reversed(list(base.items()))))


def test_every_flipped_byte_is_corrupt_or_harmless(model_file, tmp_path):
    original = LinearChainModel.load(model_file)
    data = model_file.read_bytes()
    rng = np.random.default_rng(0)
    positions = rng.choice(len(data), size=min(len(data), 400), replace=False)
    damaged = tmp_path / "damaged.npz"
    loaded_anyway = 0
    for pos in positions:
        flipped = bytearray(data)
        flipped[pos] ^= 0x5A
        damaged.write_bytes(bytes(flipped))
        try:
            model = LinearChainModel.load(damaged)
        except ModelFileError as exc:
            assert "corrupt" in str(exc), f"byte {pos}: {exc}"
            continue
        # a byte the reader ignores (a zip timestamp, say): the model must be exactly the original
        loaded_anyway += 1
        assert np.array_equal(model.weights, original.weights), f"byte {pos} changed the weights silently"
        assert model.labels == original.labels
    assert loaded_anyway < len(positions) // 2  # most bytes are data, whose damage must be caught


def test_arrays_changed_inside_a_valid_archive_are_caught(model_file, tmp_path):
    # rewrite the archive with one weight changed but the old checksum kept: only the checksum can tell
    with np.load(model_file, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["weights"] = arrays["weights"].copy()
    arrays["weights"][0] += 1.0
    forged = tmp_path / "forged.npz"
    np.savez(forged, **arrays)
    with pytest.raises(ModelFileError, match="corrupt model file"):
        LinearChainModel.load(forged)


def test_files_without_a_checksum_still_load(tmp_path):
    path = write_npz(tmp_path / "x.npz", {"a": np.arange(3)}, {"k": 1})
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "checksum"}
    np.savez(path, **arrays)
    loaded, meta = read_npz(path)
    assert meta == {"k": 1} and np.array_equal(loaded["a"], np.arange(3))


def test_a_foreign_file_is_not_called_corrupt(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("just some text\n")
    with pytest.raises(ModelFileError, match="not a structperc model file"):
        read_npz(path)
