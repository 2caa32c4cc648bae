"""The examples of README.md and docs/ run in `make test` (``docs_examples.py``), named models included
(stand-ins over slices of the mirror): the only one marked slow is the reduced Collins (2002)
reproduction, which `make test-slow` pins (``test_reproduce.py``) and which takes half a minute."""
from pathlib import Path

from docs_examples import SLOW_MARK, _commands

ROOT = Path(__file__).resolve().parents[1]


def slow_blocks():
    """(page, the commands of the block) of each block marked slow."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() == SLOW_MARK:
                end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
                block = "\n".join(lines[i + 2:end])
                found.append((page.relative_to(ROOT).as_posix(), [command for command, _, _ in _commands(block)]
                              or [block.splitlines()[0]]))
    return found


def test_only_the_reduced_reproduction_is_left_to_make_test_slow():
    assert slow_blocks() == [("docs/collins2002.md", [
        "structperc data fetch conll2000 --mirror ../shared/corpora",
        "structperc reproduce collins2002 --quick --corpora corpora --output quick-results"])]
