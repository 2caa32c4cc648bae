"""The pictures of the documentation site, into docs/ as *.png; `make docs` runs this. They are
committed, so that the pages show them where most readers read them, in the repository;
tests/test_figures.py checks that each is the copy or the drawing of its current results file.

    python benchmarks/docs_figures.py

- peers.png: structperc's time as a fraction of its peer's, per task, drawn from
  benchmarks/headline.md (which `headline.py` builds from the benchmarks' results files);
- scale.png (`bench_scale.py`) and the Collins (2002) learning curves
  (experiments/results/collins2002_*.png, `structperc reproduce collins2002`) are copied as the
  scripts wrote them.
Nothing here is measured or drawn by hand, so a picture is as current as its results file.
"""
import shutil
import textwrap
from pathlib import Path

from headline import table_rows  # benchmarks/headline.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs"  # beside the pages: the Collins results file links its plots by bare name
COPIED = [ROOT / "benchmarks" / "scale.png", *sorted((ROOT / "experiments" / "results").glob("collins2002_*.png"))]


def peers_plot(path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [cells for name, cells in table_rows((ROOT / "benchmarks" / "headline.md").read_text(encoding="utf-8"))
            .items() if not name.startswith("task")]
    labels = [textwrap.fill(cells[0], 70) for cells in rows]  # the labels carry the settings: long
    ratios = [float(cells[3]) for cells in rows]
    label_lines = sum(label.count("\n") + 1 for label in labels)
    figure, axes = plt.subplots(figsize=(11, 0.25 * label_lines + 0.5 * len(rows) + 1.2))
    axes.barh(range(len(rows)), ratios, color="tab:blue")
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_yticks(range(len(rows)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("structperc time / peer time (1 = as fast)")
    for i, ratio in enumerate(ratios):
        axes.text(ratio, i, f" {ratio:.3f}", va="center", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main():
    FIGURES.mkdir(parents=True, exist_ok=True)
    for source in COPIED:
        shutil.copyfile(source, FIGURES / source.name)
    peers_plot(FIGURES / "peers.png")
    print(f"wrote {len(COPIED) + 1} figures into {FIGURES.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
