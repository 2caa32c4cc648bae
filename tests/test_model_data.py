"""A model file is data, never a pointer. A file whose metadata names where or how to run (a dask
scheduler's address, workers, a cache folder, the lexicons' paths, a CRF's model_filename), its checksum
recomputed as anyone can, gives none of it back on load; ``partial_fit`` on it opens no connection to
the address (a listening socket of the test's own, on 127.0.0.1, is never connected to)."""
import hashlib
import json
import socket

import numpy as np
import pytest

import structperc
from structperc import CRF, Tagger

X = [["the", "cat", "sat"], ["a", "dog", "ran", "home"], ["the", "dog", "sat"], ["a", "cat", "ran"]]
Y = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB", "NOUN"], ["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]


def recomputed_checksum(arrays):
    """The checksum as the file format states it (``utils/npz.py``): SHA-256 over each array's name,
    dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def craft(source, target, change):
    """Write ``target``: the model file ``source`` with its metadata changed by ``change(metadata)``
    and its checksum recomputed."""
    with np.load(source, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays.pop("checksum")
    metadata = json.loads(str(arrays["metadata"]))
    change(metadata)
    arrays["metadata"] = np.array(json.dumps(metadata))
    with open(target, "wb") as handle:
        np.savez(handle, **arrays, checksum=np.array(recomputed_checksum(arrays)))
    return target


@pytest.fixture
def listener():
    """A socket listening on 127.0.0.1 (a free port) that never accepts by itself: a client's
    connection waits in its backlog, where ``connected`` finds it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        yield server


def connected(server):
    """Whether a client connected to ``server`` (a connection is waiting to be accepted)."""
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.fixture
def model_file(tmp_path):
    tagger = Tagger(templates=["w[0]", "w[-1]"], epochs=2, seed=1).fit(X, Y)
    return tagger, tagger.save(tmp_path / "model.npz")


def test_the_listener_sees_a_connection(listener):
    """The check can fail: a client that connects is seen."""
    port = listener.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    assert connected(listener)
    assert not connected(listener)


def test_partial_fit_on_a_file_naming_a_scheduler_opens_no_connection(model_file, tmp_path, listener):
    original, path = model_file
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"

    def point_at_the_listener(metadata):
        metadata["training"]["scheduler"] = address

    crafted = craft(path, tmp_path / "crafted.npz", point_at_the_listener)
    loaded = structperc.load_model(crafted)  # the checksum holds: the file is read
    assert loaded.scheduler is None
    assert loaded.get_params() == original.get_params()
    loaded.partial_fit(X, Y)
    assert not connected(listener)
    assert loaded.predict(X) == original.predict(X)  # trained on, here
    assert "scheduler" not in loaded.model_.metadata["training"]


def test_workers_cache_dir_and_lexicon_paths_are_not_read_back(model_file, tmp_path):
    original, path = model_file
    cache = tmp_path / "someone-elses-cache"

    def where_to_run(metadata):
        metadata["training"].update(workers=3, mix="errors", cache_dir=str(cache),
                                    lexicons={"names": str(tmp_path / "elsewhere.txt")})

    loaded = Tagger.load(craft(path, tmp_path / "crafted.npz", where_to_run))
    params = loaded.get_params()
    assert (params["workers"], params["mix"], params["cache_dir"], params["lexicons"]) == (1, "uniform", None, None)
    assert params == original.get_params()
    loaded.partial_fit(X, Y)
    assert not cache.exists()
    assert "workers" not in loaded.model_.metadata["training"]  # trained serially


def test_the_parameters_that_describe_the_model_come_back(tmp_path):
    tagger = Tagger(templates=["w[0]", "w[1]"], trainer="hinge", epochs=2, constrain="none", min_count=1,
                    rare_threshold=2, seed=3, cost=2.0, average=False, missing_label="?")
    tagger.fit(X, Y).save(tmp_path / "m.npz")
    loaded = Tagger.load(tmp_path / "m.npz")
    for name in ("templates", "trainer", "epochs", "constrain", "min_count", "rare_threshold", "seed", "cost", "average",
                 "missing_label"):
        assert loaded.get_params()[name] == tagger.get_params()[name], name


def test_a_crf_file_naming_a_model_filename_writes_nothing_there(tmp_path):
    features = [[{"word": word} for word in sentence] for sentence in X]
    crf = CRF(algorithm="lbfgs", max_iterations=5).fit(features, Y)
    path = crf.save(tmp_path / "crf.npz")
    elsewhere = tmp_path / "elsewhere.npz"

    def write_elsewhere(metadata):
        metadata["crf"]["model_filename"] = str(elsewhere)

    loaded = CRF.load(craft(path, tmp_path / "crafted.npz", write_elsewhere))
    assert loaded.model_filename is None
    loaded.fit(features, Y)
    assert not elsewhere.exists()
