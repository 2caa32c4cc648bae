"""Figures that cannot go stale: every measured figure of README.md and docs/ is a verbatim copy of a
results file that a script wrote (a ``figures:`` block, benchmarks/sections.py), and prose outside
those blocks quotes no measured number."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import headline  # noqa: E402  (benchmarks/headline.py)
from sections import documents, figure_blocks, results_text  # noqa: E402  (benchmarks/sections.py)

BLOCKS = [(path, reference, body) for path in documents() if path.is_file()
          for reference, body, _, _ in figure_blocks(path.read_text(encoding="utf-8"))]

# Numbers prose may hold outside figures blocks, each for a reason: none of them is a measurement
# of this code that a rerun could change.
ALLOWED = {
    "93.53", "93.04", "92.34",  # Collins' (2002) published NP chunking figures
    "97.07", "96.32", "96.60",  # Collins' (2002) published POS figures
    "77.05",  # the best CoNLL-2002 shared-task system, as published
    "321",  # the number of UPOS+FEATS labels in UD English EWT (a property of the corpus)
    "3.10",  # the oldest Python supported
    "130",  # the exit status of an interrupted command
}


def prose(text):
    """``text`` without what may hold numbers: figures blocks, code blocks, inline code, HTML
    comments, link targets and image paths."""
    for _, body, start, end in reversed(figure_blocks(text)):
        text = text[:start] + text[end:]
    text = re.sub(r"^( *)(```|~~~).*?^\1\2", "", text, flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return re.sub(r"\]\([^)]*\)", "]", text)


# units after which even a small integer is a measurement ("about 80 MB", "5 s", "3 points")
UNITS = r"(?:[KMGT]i?B|kB|ms|s|sec|seconds?|minutes?|min|hours?|h|points?|pp|tokens/s|sentences/s|words/s|x)"


def figures_in_prose(text):
    """The numbers of ``text``'s prose that look measured: a decimal, a percentage, a ratio (×), an
    integer of three digits or more that is not a year, or any number followed by a unit of size,
    time, speed or score (``UNITS``); digits inside a name (CoNLL-2000, F1, L2, utf-8, x86_64) are
    not numbers."""
    found = []
    pattern = rf"(?<![\w.\-/])\d[\d,]*(?:\.\d+)?(?![\w\-/])(?: ?[%×]| ?{UNITS}(?![\w\-]))?"
    for match in re.finditer(pattern, prose(text)):
        whole = match.group()
        number = re.match(r"[\d,]*(?:\.\d+)?", whole).group()
        unit = whole[len(number):].strip()
        digits = number.replace(",", "")
        is_year = digits.isdigit() and 1900 <= int(digits) <= 2030
        if ("." in number or unit or (digits.isdigit() and int(digits) >= 100 and not is_year)) \
                and number not in ALLOWED:
            found.append(whole.strip())
    return found


@pytest.mark.parametrize("path, reference, body", BLOCKS,
                         ids=[f"{p.relative_to(ROOT)}:{r}" for p, r, _ in BLOCKS])
def test_each_figures_block_equals_its_results_file(path, reference, body):
    assert body == results_text(reference), (
        f"{path.relative_to(ROOT)}: the block quoting {reference} differs from that file; "
        "run python benchmarks/sections.py, or rerun the script that writes it")


def test_the_documents_quote_results_files():
    references = {reference for _, reference, _ in BLOCKS}
    assert {"benchmarks/headline.md", "benchmarks/first_run.md", "benchmarks/crf_history.md",
            "benchmarks/ner.md"} <= references


def test_the_headline_table_is_what_its_script_makes_of_the_results_files():
    assert (ROOT / "benchmarks" / "headline.md").read_text(encoding="utf-8") == headline.build()


@pytest.mark.parametrize("path", [p for p in documents() if p.is_file()], ids=lambda p: str(p.relative_to(ROOT)))
def test_prose_quotes_no_measured_number_outside_figures_blocks(path):
    assert figures_in_prose(path.read_text(encoding="utf-8")) == []


def test_the_checks_catch_an_edited_figure_and_a_typed_one():
    reference, body = next((r, b) for _, r, b in BLOCKS if re.search(r"\d", b))
    edited = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), body, count=1)
    assert edited != body and edited != results_text(reference)
    assert figures_in_prose("Training takes 1.88 s, 0.222 × python-crfsuite, on 211,727 tokens.") == \
        ["1.88 s", "0.222 ×", "211,727"]
    assert figures_in_prose("CoNLL-2000, F1, Collins (2002), 10 epochs, `--epochs 20`, order 2.") == []
    assert figures_in_prose("It takes about 80 MB and 5 s, 3 points below; 2 cores, 4 workers, 12 labels.") == \
        ["80 MB", "5 s", "3 points"]


def test_the_readme_stays_short():
    words = len((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert words <= 1500, f"README.md has {words} words; move the detail into docs/"


def test_the_headline_labels_come_from_the_recorded_settings():
    ours = {"epochs": "20", "c2": "0.1", "averaged": "yes", "constraint": "none"}
    peer = {"epochs": "20", "c2": "1", "averaged": "no", "constraint": "none"}
    same, differ = headline.compare(ours, peer, ("epochs", "c2", "averaged", "constraint"))
    assert same == ["epochs 20", "constraint none"]
    assert differ == ["c2: structperc 0.1, peer 1", "averaged: structperc yes, peer no"]
    text = "intro\n\n| a | b |\n|---|---|\n| x | 1 |\n\nSettings of each job:\n\n| job | id | epochs |\n|---|---|---|\n" \
           "| x | k | 5 |\n"
    assert headline.table_rows(text) == {"a": ["a", "b"], "x": ["x", "1"]}  # the first table only
    assert headline.table_after(text, "Settings of each job") == {"x": {"job": "x", "id": "k", "epochs": "5"}}


def test_every_image_of_the_pages_is_committed_and_drawn_from_its_current_results(tmp_path):
    """The docs' images are shown where the pages are read in the repository: each is a file under
    version control, the copy of the results file it comes from (``docs_figures.COPIED``), or for
    peers.png, what ``docs_figures`` draws from benchmarks/headline.md now."""
    import subprocess

    import docs_figures  # noqa: E402  (benchmarks/docs_figures.py)

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = set(listed.stdout.split("\0"))
    images = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if "://" not in target:
                images.add((page.parent / target).resolve().relative_to(ROOT).as_posix())
    assert {"docs/peers.png", "docs/collins2002_np.png"} <= images
    assert sorted(images - tracked) == []
    for source in docs_figures.COPIED:
        assert (ROOT / "docs" / source.name).read_bytes() == source.read_bytes(), source.name
    docs_figures.peers_plot(tmp_path / "peers.png")
    assert (ROOT / "docs" / "peers.png").read_bytes() == (tmp_path / "peers.png").read_bytes()
