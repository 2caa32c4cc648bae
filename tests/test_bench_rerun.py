"""A results file still comes out of its script: the cheapest one, benchmarks/bench_hashing.py, reruns
on a slice of CoNLL-2000 and its output is compared with the committed files, its format with
benchmarks/hashing.md (the full run) and its untimed figures, within a tolerance, with
benchmarks/hashing_slice.md (the same slice, committed). Seconds and peak RSS are compared as
formats only: nothing timed passes or fails here."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_hashing.py"
COMMITTED = ROOT / "benchmarks" / "hashing.md"
SLICE = ROOT / "benchmarks" / "hashing_slice.md"


def slice_command():
    """The command that wrote benchmarks/hashing_slice.md, as the script's docstring gives it."""
    line = next(line for line in SCRIPT.read_text(encoding="utf-8").splitlines()
                if "--output benchmarks/hashing_slice.md" in line)
    return line.split("bench_hashing.py", 1)[1].split("--output")[0].split()


def table(text):
    """The rows of the markdown table of ``text``: [header, separator, row, ...] as lists of cells."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]


def shape(cell):
    """A cell with every number replaced by N: what its format is."""
    return re.sub(r"[+-]?\d[\d,]*(?:\.\d+)?", "N", cell)


def prose(text):
    """The lines before the table, without the slice note, numbers masked."""
    lines = [line for line in text.split("\n|", 1)[0].splitlines() if line and not line.startswith("Slice:")]
    return [shape(line) for line in lines]


def number(cell):
    return float(re.sub(r"[^\d.+-]", "", cell.split("→")[-1]))


# untimed columns and how far a rerun may land from the committed figure (F1 points, counts, percent)
TOLERANCE = {"test F1": 0.5, "ΔF1": 0.5, "distinct keys": 0, "distinct ids": 0, "collision rate": 0.05,
             "ids in the weights (before → after pruning)": 0}


def compare(new_text, full_text, slice_text):
    """The differences between a rerun's output and the committed files, as messages (none: they agree)."""
    problems = []
    new, full, committed = table(new_text), table(full_text), table(slice_text)
    if prose(new_text) != prose(full_text):
        problems.append(f"prose: {prose(new_text)} against {prose(full_text)}")
    if new[0] != full[0] or new[1] != full[1]:
        problems.append(f"header: {new[0]} against {full[0]}")
    full_shapes = {shape(row[0]): [shape(c) for c in row[1:]] for row in full[2:]}
    for row in new[2:]:
        if [shape(c) for c in row[1:]] != full_shapes.get(shape(row[0])):
            problems.append(f"row format: {row} against {full_shapes.get(shape(row[0]))}")
    if [row[0] for row in new[2:]] != [row[0] for row in committed[2:]]:
        problems.append(f"rows: {[r[0] for r in new[2:]]} against {[r[0] for r in committed[2:]]}")
    for row, old in zip(new[2:], committed[2:]):
        for column, cell, old_cell in zip(new[0], row, old):
            if column in TOLERANCE:
                values = [number(part) for part in cell.split("→")]
                old_values = [number(part) for part in old_cell.split("→")]
                if any(abs(a - b) > TOLERANCE[column] for a, b in zip(values, old_values)):
                    problems.append(f"{row[0]}, {column}: {cell} against the committed {old_cell}")
    return problems


@pytest.fixture(scope="module")
def rerun(corpus_mirror, tmp_path_factory):
    output = tmp_path_factory.mktemp("hashing") / "hashing.md"
    subprocess.run([sys.executable, SCRIPT, *slice_command(), "--corpus", corpus_mirror / "conll2000",
                    "--output", output], check=True, capture_output=True, text=True, cwd=ROOT)
    return output.read_text(encoding="utf-8")


def test_the_cheapest_results_script_still_writes_its_committed_file(rerun):
    assert compare(rerun, COMMITTED.read_text(encoding="utf-8"), SLICE.read_text(encoding="utf-8")) == []


def test_the_comparison_catches_a_moved_figure_and_a_changed_format(rerun):
    full, committed = COMMITTED.read_text(encoding="utf-8"), SLICE.read_text(encoding="utf-8")
    moved = re.sub(r"\| exact dictionary \| (\d+)\.", lambda m: f"| exact dictionary | {int(m.group(1)) + 2}.",
                   rerun)
    assert moved != rerun and any("test F1" in p for p in compare(moved, full, committed))
    reformatted = rerun.replace(" % |", " |")
    assert any("row format" in p for p in compare(reformatted, full, committed))
    renamed = rerun.replace("| feature ids |", "| ids |")
    assert any("header" in p for p in compare(renamed, full, committed))
