import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import mirror  # noqa: E402

# The suite is hermetic: the user's settings for structperc (a corpus mirror, a corpora folder) and
# for numba (JIT disabled, thread counts, cache folder) would change what the tests read or run.
# They are cleared for the whole session, subprocesses included; a test that needs one sets it
# itself with monkeypatch.
_USER_SETTINGS = ("STRUCTPERC_", "NUMBA_")
# the corpora mirror is read (by the tests that ask for ``corpus_mirror``), never written: kept aside
mirror.keep()
_MIRROR = mirror.mirror_folder()
for _name in [n for n in os.environ if n.startswith(_USER_SETTINGS)]:
    del os.environ[_name]

import builders  # noqa: E402
from chromium import browser  # noqa: E402, F401  (the fixture of the browser tests)
from hypothesis import settings  # noqa: E402

# Property tests draw their examples from a fixed seed, so that the suite's verdict on a commit does
# not change from run to run; `pytest --hypothesis-profile explore` searches with fresh random examples
# (and hypothesis' example database) for new failures.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("fixed")


@pytest.fixture(autouse=True)
def _hash_seed_as_the_session_had_it():
    """A test that starts a dask cluster of processes leaves PYTHONHASHSEED set in this process's
    environment (dask sets it for its workers); the processes later tests start would then share one
    hash seed, which hides what a determinism test compares. Put back as it was after each test."""
    before = os.environ.get("PYTHONHASHSEED")
    yield
    if before is None:
        os.environ.pop("PYTHONHASHSEED", None)
    else:
        os.environ["PYTHONHASHSEED"] = before


@pytest.fixture
def small_model():
    """builders.small_model: (model, encoded) over random sentences, random weights."""
    return builders.small_model


@pytest.fixture
def fitted_model():
    """builders.fitted_model: (model, encoded) with given templates, order and constraint."""
    return builders.fitted_model


@pytest.fixture(scope="session")
def corpus_mirror():
    """The read-only corpora mirror: $STRUCTPERC_MIRROR (as the session started), else
    ../shared/corpora beside the project root, as the Makefile finds it. Skips the test when
    neither is a folder."""
    if _MIRROR is None:
        pytest.skip(f"no corpora mirror: STRUCTPERC_MIRROR is not set to a folder and {mirror.BESIDE} does not exist")
    return _MIRROR


@pytest.fixture(scope="session")
def warm_cli_kernels(tmp_path_factory):
    """Train and tag a tiny corpus once through the command line, so that the kernels of the default
    training and tagging paths are in numba's cache: tests that compare a command's stderr line for
    line must not see the compile notice (make install compiles nothing ahead)."""
    import subprocess

    folder = tmp_path_factory.mktemp("warm")
    corpus = folder / "train.txt"
    corpus.write_text("the DT B-NP\ncat NN I-NP\nsat VBD O\n\na DT B-NP\ndog NN I-NP\n\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for args in (["train", corpus, "--model", folder / "m.npz", "--epochs", "1", "--quiet"],
                 ["tag", corpus, "--model", folder / "m.npz", "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "structperc", *map(str, args)], env=env, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, done.stderr
