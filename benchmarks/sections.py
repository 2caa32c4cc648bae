"""Marked sections of the README and of benchmarks/results.md, which each benchmark rewrites in place.

A section is the text between the lines ``<!-- NAME -->`` and ``<!-- /NAME -->``. ``write_section``
replaces it, or appends it to the file when the file has no such section (creating the file), so
that the benchmarks sharing a file leave each other's sections alone.
"""
import re
from pathlib import Path


def write_section(path, name, text, append=True):
    """Put ``text`` between the markers of section ``name`` in the file ``path``. Without the
    markers: append the section when ``append``, else leave the file alone. Returns True if written."""
    path = Path(path)
    start_marker, end_marker = f"<!-- {name} -->", f"<!-- /{name} -->"
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    start, end = current.find(start_marker), current.find(end_marker)
    body = text.strip("\n") + "\n"
    if start >= 0 and end > start:
        updated = current[: start + len(start_marker)] + "\n" + body + current[end:]
    elif append:
        updated = current + ("\n" if current and not current.endswith("\n\n") else "") + \
            f"{start_marker}\n{body}{end_marker}\n"
    else:
        return False
    path.write_text(updated, encoding="utf-8")
    return True


# Figures in README.md and docs/: a block between ``<!-- figures: PATH -->`` (or ``PATH#SECTION``, a
# marked section of PATH) and ``<!-- /figures -->`` is a verbatim copy of that results file, which a
# script wrote. ``refresh_figures`` rewrites every block from its file; tests/test_figures.py checks
# that none differs, so a figure typed by hand, or left behind by a rerun, fails the tests.
ROOT = Path(__file__).resolve().parent.parent
FIGURES_START = "<!-- figures: "
FIGURES_END = "<!-- /figures -->"


def documents(root=ROOT):
    """The files whose figures are checked: README.md and every page of docs/."""
    root = Path(root)
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def results_text(reference, root=ROOT):
    """The text a ``figures:`` block must hold: the results file ``PATH``, or its marked section
    ``PATH#SECTION`` (without the section's own markers), ending in one newline."""
    path, _, section = reference.partition("#")
    text = (Path(root) / path).read_text(encoding="utf-8")
    if section:
        start_marker, end_marker = f"<!-- {section} -->", f"<!-- /{section} -->"
        start, end = text.find(start_marker), text.find(end_marker)
        if start < 0 or end < start:
            raise ValueError(f"{path} has no section {section!r}")
        text = text[start + len(start_marker): end]
    return text.strip("\n") + "\n"


def figure_blocks(text):
    """Each ``figures:`` block of ``text`` as (reference, body, start, end): ``body`` is
    ``text[start:end]``, the lines between the two markers, each marker alone on its line."""
    pattern = re.compile(rf"^{re.escape(FIGURES_START)}(.+?) -->\n(.*?)^{re.escape(FIGURES_END)}$", re.M | re.S)
    return [(m.group(1).strip(), m.group(2), m.start(2), m.end(2)) for m in pattern.finditer(text)]


def refresh_figures(root=ROOT):
    """Rewrite every ``figures:`` block of README.md and docs/ from its results file; returns the
    files changed."""
    changed = []
    for path in documents(root):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        updated = text
        for reference, _, start, end in reversed(figure_blocks(text)):
            updated = updated[:start] + results_text(reference, root) + updated[end:]
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    for changed_path in refresh_figures():
        print(f"refreshed {changed_path.relative_to(ROOT)}")
