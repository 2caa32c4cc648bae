"""Where the tests find the read-only corpora mirror: $STRUCTPERC_MIRROR as the session started, else
../shared/corpora beside the project root, as the Makefile finds it.

The suite clears the user's STRUCTPERC_ settings (``conftest.py``), and pytest-xdist starts its
workers from the cleared environment: the mirror's path is kept aside under ``KEPT`` (``keep``), so
that a worker finds the mirror that the session was given.
"""
import os
from pathlib import Path

KEPT = "TESTS_CORPORA_MIRROR"
BESIDE = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def keep() -> None:
    """Keep $STRUCTPERC_MIRROR aside before the settings are cleared."""
    if os.environ.get("STRUCTPERC_MIRROR"):
        os.environ[KEPT] = os.environ["STRUCTPERC_MIRROR"]


def mirror_folder() -> Path | None:
    """The mirror the session was given, or the one beside the project; None when neither is a folder."""
    for path in (os.environ.get("STRUCTPERC_MIRROR") or os.environ.get(KEPT), BESIDE):
        if path and Path(path).is_dir():
            return Path(path)
    return None
