"""pytest runs the examples of README.md and docs/*.md too: tests/docs_examples.py says how."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "tests"))

from docs_examples import pytest_collect_file, pytest_collection_modifyitems  # noqa: E402, F401
