"""The headline table of README.md: structperc beside python-crfsuite and sklearn-crfsuite.

    python benchmarks/headline.py

Reads the tables that `bench_conll2000.py` (benchmarks/results.md), `bench_dicts.py`
(benchmarks/dicts.md), `bench_crf.py` (benchmarks/crf.md) and `bench_labels.py` (benchmarks/bigtags.md)
wrote, measures nothing itself, and writes benchmarks/headline.md; then refreshes the figures blocks
of README.md and docs/ that quote it. `make bench` and `make bench-scale` run this at their end, so
the headline follows every rerun.
"""
import re
from pathlib import Path

from sections import refresh_figures, results_text  # benchmarks/sections.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "benchmarks" / "headline.md"


def table_rows(text):
    """{first cell: [cells]} of every row of the first markdown table in ``text``."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("|---"):
            continue
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
        elif rows:
            break
    return rows


def seconds(cell):
    """The median of a ``median (min-max)`` cell."""
    return float(re.match(r"[\d.]+", cell).group())


def table_after(text, heading):
    """{first cell: {column: cell}} of the markdown table that follows the line starting with ``heading``."""
    lines = text[text.index(heading):].splitlines()[1:]
    lines = [line for line in lines if line.strip()]
    table = []
    for line in lines:
        if not line.startswith("|"):
            break
        table.append(line)
    header = [cell.strip() for cell in table[0].strip().strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table[2:]]
    return {row[0]: dict(zip(header, row)) for row in rows}


SETTINGS_NAMES = {"averaged": "averaged", "c2": "c2", "constraint": "constraint", "epochs": "epochs",
                  "templates": "templates", "labels": "labels", "features": "features"}


def compare(ours, theirs, shown):
    """The settings two jobs share (those in ``shown``, as "name value") and those they do not
    ("name: structperc X, peer Y"), read from the results files' settings tables."""
    same, differ = [], []
    for key in shown:
        if ours[key] == theirs[key]:
            same.append(f"{SETTINGS_NAMES[key]} {ours[key]}")
        else:
            differ.append(f"{SETTINGS_NAMES[key]}: structperc {ours[key]}, peer {theirs[key]}")
    return same, differ


def build():
    """The text of benchmarks/headline.md from the results files as they are now."""
    conll_text = results_text("benchmarks/results.md#bench-conll2000")
    conll = table_rows(conll_text)
    settings = table_after(conll_text, "Settings of each training job")
    dicts = table_rows((ROOT / "benchmarks" / "dicts.md").read_text(encoding="utf-8"))
    pairs = [  # (task, structperc's job, the peer's job): ids of the settings table
        ("CoNLL-2000 chunking, all types, averaged perceptron: train", "sp_all_peer", "cs_all"),
        ("CoNLL-2000 NP chunking, CRF by SGD: train", "sp_crf_peer", "cs_sgd"),
    ]
    labels = {row["id"]: label for label, row in settings.items()}
    lines = ["| task (whole processes; medians) | structperc s | peer s | structperc / peer "
             "| score structperc | score peer |",
             "|---|---:|---:|---:|---:|---:|"]
    for task, ours, theirs in pairs:
        same, differ = compare(settings[labels[ours]], settings[labels[theirs]],
                               ("epochs", "templates", "c2", "averaged", "constraint"))
        same = [item for item in same if not item.endswith(" -")]  # a dash: neither rule has the setting
        what = "; ".join(same + ([f"differs: {', '.join(differ)}"] if differ else []))
        a, b = conll[labels[ours]], conll[labels[theirs]]
        lines.append(f"| {task}, {what} (peer: python-crfsuite) | {seconds(a[1]):.2f} | {seconds(b[1]):.2f} | "
                     f"{seconds(a[1]) / seconds(b[1]):.3f} | {a[4] or '-'} | {b[4] or '-'} |")
    tag_ours = next(label for label in conll if label.startswith("structperc tag"))
    tag_theirs = next(label for label in conll if label.startswith("python-crfsuite tag, all types"))
    a, b = conll[tag_ours], conll[tag_theirs]
    lines.append(f"| CoNLL-2000: tag the test file, the models of the first row (peer: python-crfsuite) | "
                 f"{seconds(a[1]):.2f} | {seconds(b[1]):.2f} | {seconds(a[1]) / seconds(b[1]):.3f} | - | - |")
    peer = dicts["sklearn-crfsuite"]
    for system in ("structperc crf", "structperc perceptron"):
        ours = dicts[system]
        lines.append(f"| CoNLL-2002 Dutch NER, the tutorial's feature dicts, `{system.split()[1]}`: "
                     f"read, extract, fit, predict (peer: sklearn-crfsuite) | "
                     f"{float(ours[2]):.2f} | {float(peer[2]):.2f} | "
                     f"{float(ours[2]) / float(peer[2]):.3f} | {ours[1]} | {peer[1]} |")
    crf = table_after((ROOT / "benchmarks" / "crf.md").read_text(encoding="utf-8"), "## The full ned.train")
    ours, peer = crf["structperc"], crf["sklearn-crfsuite"]
    lines.append(f"| CoNLL-2002 Dutch NER, the tutorial's feature dicts, `structperc.CRF` with sklearn-crfsuite's "
                 f"L-BFGS arguments: read, extract, fit, predict (peer: sklearn-crfsuite) | "
                 f"{float(ours['process (s)']):.2f} | {float(peer['process (s)']):.2f} | "
                 f"{ours['process / sklearn-crfsuite']} | {ours['F1']} | {peer['F1']} |")  # the ratio bench_crf.py took
    big_text = (ROOT / "benchmarks" / "bigtags.md").read_text(encoding="utf-8")
    big, big_settings = table_rows(big_text), table_after(big_text, "Settings of each system")
    ours, peer = big["structperc defaults"], big["python-crfsuite AP"]
    same, differ = compare(big_settings["structperc defaults"], big_settings["python-crfsuite AP"],
                           ("labels", "epochs", "averaged", "features"))
    what = "; ".join(same + ([f"differs: {', '.join(differ)}"] if differ else []))
    lines.append(f"| UD English EWT, UPOS+FEATS, structperc's defaults: train; {what}; peak RSS {ours[2]} MB "
                 f"against {peer[2]} MB (peer: python-crfsuite AP) | {seconds(ours[1]):.2f} | {seconds(peer[1]):.2f} | "
                 f"{seconds(ours[1]) / seconds(peer[1]):.3f} | {ours[3]} | {peer[3]} |")
    text = ("Generated by `python benchmarks/headline.py` from benchmarks/results.md (`bench_conll2000.py`), "
            "benchmarks/dicts.md (`bench_dicts.py`), benchmarks/crf.md (`bench_crf.py`) and benchmarks/bigtags.md "
            "(`bench_labels.py`); score: F1 on the test sets (CoNLL-2000 test, ned.testb), accuracy % on EWT "
            "test.\n\n"
            + "\n".join(lines) + "\n")
    return text


def main():
    text = build()
    OUTPUT.write_text(text, encoding="utf-8")
    refresh_figures()
    print(text)


if __name__ == "__main__":
    main()
