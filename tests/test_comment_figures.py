"""Figures in the package's comments and docstrings: a measured figure (a time, a size, a speed-up or
a score) lives in a results file that a script writes, never in a comment that no rerun updates.
Numbers that are not measurements (defaults, limits, published figures of others) stay."""
import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "structperc"

# a time or a size ("17 s", "0.3 s", "20 MB"), a speed-up ("1.8 times as long", "3.2x"), a score with
# two decimals ("94.77")
MEASURED = re.compile(r"(?<![\w.])(?:\d+(?:,\d{3})*(?:\.\d+)?(?: ?(?:ms|µs|[KMG]i?B|kB)| (?:s|sec|seconds?|minutes?|min|hours?))"
                      r"(?![\w])"
                      r"|\d+(?:\.\d+)? times (?:as|faster|slower|longer)"
                      r"|\d+\.\d+ ?x(?![\w])"
                      r"|(?<![\d.])\d{2}\.\d{2}(?![\d]))")
# what the package says that is no measurement of its own
ALLOWED = ("retries for 10 s",  # msvcrt.locking's documented behaviour
           "at most the first 64 KiB",  # a limit of what is read, not a measurement
           )


def _texts(path):
    """(line, text) of every comment and docstring of a module."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                first = node.body[0].lineno
                for k, line in enumerate(doc.splitlines()):
                    yield first + k, line


def test_no_measured_figure_in_comments_or_docstrings():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, text in _texts(path):
            if any(allowed in text for allowed in ALLOWED):
                continue
            for match in MEASURED.finditer(text):
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group()}  ({text.strip()[:80]})")
    assert found == []


def test_the_check_finds_a_figure():
    assert MEASURED.search("with the cores busy, a 1,000-sentence fit took 17 s instead of 2.8 s")
    assert MEASURED.search("about 20 MB to the resident set")
    assert MEASURED.search("ran 1.8 times as long")
    assert MEASURED.search("order 1 94.77, order 2 94.95")
    assert not MEASURED.search("epsilon 1e-5, period 10, CRFsuite's defaults")
