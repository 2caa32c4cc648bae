import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import builders  # noqa: E402


@pytest.fixture
def small_model():
    """builders.small_model: (model, encoded) over random sentences, random weights."""
    return builders.small_model


@pytest.fixture
def fitted_model():
    """builders.fitted_model: (model, encoded) with given templates, order and constraint."""
    return builders.fitted_model
