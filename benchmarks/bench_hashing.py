"""The F1 cost of feature hashing on CoNLL-2000 (all chunk types, `chunk` templates, averaged
perceptron, 10 epochs, seed 0), against the exact feature dictionary.

    python benchmarks/bench_hashing.py [--bits 18 20 22] [--corpus corpora/conll2000] [--epochs 10]
        [--sentences N] [--output benchmarks/hashing.md]

Each configuration trains in its own process (so peak RSS is its own) with
``Tagger(templates="chunk", hash_bits=B, epochs=E, seed=0, constrain="none").fit_file``, B = None
for the exact feature dictionary. Writes
benchmarks/hashing.md (or --output) and prints the table.

``--sentences N`` trains and tests on the first N sentences of each file only: the quick check of
``make test`` (tests/test_bench_rerun.py) reruns this script so on a slice and compares the output
with benchmarks/hashing_slice.md, which this command wrote:

    python benchmarks/bench_hashing.py --sentences 200 --bits 18 --epochs 3 --output benchmarks/hashing_slice.md
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "hashing.md"


def write_slice(corpus_dir, n_sentences, out_dir):
    """The first ``n_sentences`` sentences of train.txt and test.txt into ``out_dir``."""
    for name in ("train.txt", "test.txt"):
        text = (Path(corpus_dir) / name).read_text(encoding="utf-8")
        sentences = [block for block in text.split("\n\n") if block.strip()][:n_sentences]
        (Path(out_dir) / name).write_text("\n\n".join(s.strip("\n") for s in sentences) + "\n\n", encoding="utf-8")


def train_and_score(corpus_dir, bits, epochs):
    from structperc import Tagger

    start = time.perf_counter()
    tagger = Tagger(templates="chunk", hash_bits=bits, epochs=epochs, seed=0, constrain="none")
    tagger.fit_file(Path(corpus_dir) / "train.txt", format="conll", columns=["word", "pos", "chunk"])
    seconds = time.perf_counter() - start
    description = tagger.describe(top=0)
    features_trained = description["training"]["features_seen"]  # before pruning
    stats = description.get("hashing")
    result = tagger.evaluate_file(Path(corpus_dir) / "test.txt")
    return {
        "bits": bits, "f1": result["f1"], "seconds": seconds, "features_trained": features_trained,
        "features_kept": description["features"], "keys": stats["keys"] if stats else features_trained,
        "ids": stats["ids"] if stats else None, "collision_rate": stats["collision_rate"] if stats else 0.0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, nargs="*", default=[18, 20, 22])
    parser.add_argument("--corpus", default="corpora/conll2000")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=None, help="the first N sentences of each file only")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # "exact" or B: run one, print JSON
    args = parser.parse_args(argv)
    if args.one is not None:
        bits = None if args.one == "exact" else int(args.one)
        print(json.dumps(train_and_score(args.corpus, bits, args.epochs)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus
        if args.sentences:
            write_slice(corpus, args.sentences, tmp)
            corpus = tmp
        for one in ["exact"] + [str(b) for b in args.bits]:
            out = subprocess.run([sys.executable, __file__, "--one", one, "--corpus", corpus,
                                  "--epochs", str(args.epochs)], capture_output=True, text=True, env=os.environ,
                                 check=False)
            if out.returncode != 0:
                sys.exit(out.stderr)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    exact_f1 = rows[0]["f1"]
    lines = [
        (f"Feature hashing on CoNLL-2000 (all types, `chunk` templates, averaged perceptron, {args.epochs} epochs, "
         "no constraint, seed 0); each row is one process: reading, encoding, training and pruning timed, peak RSS "
         "of the process."),
        *([f"Slice: the first {args.sentences} sentences of train.txt and of test.txt."] if args.sentences else []),
        "",
        ("| feature ids | test F1 | ΔF1 | distinct keys | distinct ids | collision rate | ids in the weights "
         "(before → after pruning) | seconds | peak RSS MB |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = "exact dictionary" if r["bits"] is None else f"hashed, B = {r['bits']}"
        ids = r["keys"] if r["ids"] is None else r["ids"]
        lines.append(
            f"| {name} | {r['f1']:.2f} | {r['f1'] - exact_f1:+.2f} | {r['keys']:,} | {ids:,} | "
            f"{100 * r['collision_rate']:.2f} % | {r['features_trained']:,} → {r['features_kept']:,} | "
            f"{r['seconds']:.1f} | {r['peak_rss_mb']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    args.output.write_text(text, encoding="utf-8")
    if args.output.resolve() == DEFAULT_OUTPUT:
        from sections import refresh_figures  # benchmarks/sections.py (the script's folder is on sys.path)

        refresh_figures()  # docs/ quotes hashing.md between figures markers
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
