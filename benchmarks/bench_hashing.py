"""The F1 cost of feature hashing on CoNLL-2000 (all chunk types, `chunk` templates, averaged
perceptron, 10 epochs, seed 0), against the exact feature dictionary.

    python benchmarks/bench_hashing.py [--bits 18 20 22] [--corpus corpora/conll2000]

Each configuration trains in its own process (so peak RSS is its own) exactly as ``Tagger.fit``
does, with ``FeatureEncoder(hash_bits=B)`` in place of the exact encoder. Writes
benchmarks/hashing.md and prints the table.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def train_and_score(corpus_dir, bits, epochs):
    import numpy as np

    from structperc.corpus import read_corpus
    from structperc.features.encode import FeatureEncoder
    from structperc.evaluate.metrics import evaluate_labels
    from structperc.model.linear_chain import LinearChainModel, is_bio
    from structperc.train import Problem, make_rule, train_online

    train = read_corpus(Path(corpus_dir) / "train.txt", format="conll")
    test = read_corpus(Path(corpus_dir) / "test.txt", format="conll")
    start = time.perf_counter()
    encoder = FeatureEncoder("chunk", hash_bits=bits)
    encoded = encoder.fit_transform(train, train.columns[train.label])
    model = LinearChainModel(encoder)
    empty = np.zeros(0, dtype=np.int64)
    train_online(make_rule("perceptron", average=True), Problem(model, encoded, empty, empty), epochs, seed=0)
    n_ids_trained = encoder.n_features_
    stats = getattr(encoder, "hash_stats_", None)
    n_keys = stats["keys"] if stats else encoder.n_features_
    model.prune()
    seconds = time.perf_counter() - start
    predicted, _ = model.decode(encoder.transform(test, with_labels=False))
    names = np.asarray(model.labels, dtype=object)[predicted]
    result = evaluate_labels(test.columns[test.label], names, test.sentence_offsets, is_bio(model.labels))
    return {
        "bits": bits, "f1": result["f1"], "seconds": seconds, "features_trained": n_ids_trained,
        "features_kept": encoder.n_features_, "keys": n_keys,
        "ids": stats["ids"] if stats else None, "collision_rate": stats["collision_rate"] if stats else 0.0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, nargs="*", default=[18, 20, 22])
    parser.add_argument("--corpus", default="corpora/conll2000")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # "exact" or B: run one, print JSON
    args = parser.parse_args(argv)
    if args.one is not None:
        bits = None if args.one == "exact" else int(args.one)
        print(json.dumps(train_and_score(args.corpus, bits, args.epochs)))
        return 0
    rows = []
    for one in ["exact"] + [str(b) for b in args.bits]:
        out = subprocess.run([sys.executable, __file__, "--one", one, "--corpus", args.corpus,
                              "--epochs", str(args.epochs)], capture_output=True, text=True, env=os.environ,
                             check=False)
        if out.returncode != 0:
            sys.exit(out.stderr)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    exact_f1 = rows[0]["f1"]
    lines = [
        (f"Feature hashing on CoNLL-2000 (all types, `chunk` templates, averaged perceptron, {args.epochs} epochs, "
         "seed 0); each row is one process: encoding, training and pruning timed, peak RSS of the process."),
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
    (ROOT / "benchmarks" / "hashing.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
