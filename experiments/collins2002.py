"""Reproduce the tables of Collins (2002); see structperc/reproduce.py and experiments/results/collins2002.md.

    python experiments/collins2002.py [--quick] [--ptb-root DIR] [--only np,ewt,wsj]

is the same as ``structperc reproduce collins2002``; results go to experiments/results/.
"""
import argparse
import sys
from pathlib import Path

from structperc.reproduce import run_collins2002

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="NP only, 3 epochs, 2,000 training sentences")
    parser.add_argument("--corpora", type=Path, default=ROOT / "corpora")
    parser.add_argument("--out", type=Path, default=ROOT / "experiments" / "results")
    parser.add_argument("--ptb-root", type=Path, default=None)
    parser.add_argument("--only", default=None, help="comma-separated datasets: np, ewt, wsj, ptb")
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.only.split(",") if d.strip()] if args.only else None
    results = run_collins2002(args.corpora, args.out, quick=args.quick, ptb_root=args.ptb_root, datasets=datasets,
                              progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"wrote {args.out / 'collins2002.md'} in {results['total_seconds'] / 60:.1f} min", file=sys.stderr)


if __name__ == "__main__":
    main()
