import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# The suite is hermetic: the user's settings for structperc (a corpus mirror, a corpora folder) and
# for numba (JIT disabled, thread counts, cache folder) would change what the tests read or run.
# They are cleared for the whole session, subprocesses included; a test that needs one sets it
# itself with monkeypatch.
_USER_SETTINGS = ("STRUCTPERC_", "NUMBA_")
for _name in [n for n in os.environ if n.startswith(_USER_SETTINGS)]:
    del os.environ[_name]

import builders  # noqa: E402


@pytest.fixture
def small_model():
    """builders.small_model: (model, encoded) over random sentences, random weights."""
    return builders.small_model


@pytest.fixture
def fitted_model():
    """builders.fitted_model: (model, encoded) with given templates, order and constraint."""
    return builders.fitted_model
