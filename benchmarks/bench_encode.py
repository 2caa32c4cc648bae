"""Encoding speed and memory in process: strings -> template keys -> feature ids (CSR built).

    python benchmarks/bench_encode.py [--corpus conll2000|ewt] [--templates chunk] [--repeat 3]

Reports, for ``fit_transform`` on the training file (vocabularies, feature index, min_count) and
``transform`` on the same file and on the test file, the median of `repeat` runs in tokens/s (wall
clock, and per CPU second of the process, steadier on a shared machine), the bytes per token of the
encoded corpus, and the process's peak RSS (resource.getrusage). Reading the files is not timed.
Corpora come from ``python -m structperc data fetch`` (corpora/ under the working directory).
"""
import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

from structperc.readers import read_corpus
from structperc.features.encode import FeatureEncoder

CORPORA = {
    "conll2000": ("corpora/conll2000/train.txt", "corpora/conll2000/test.txt", {"format": "conll"}, "chunk"),
    "ewt": ("corpora/ud_english_ewt/en_ewt-ud-train.conllu", "corpora/ud_english_ewt/en_ewt-ud-test.conllu",
            {"format": "conllu", "label": "upos"}, "pos-rich"),
}
ENCODED_ARRAYS = ("sentence_offsets", "feature_offsets", "feature_ids", "pair_offsets", "pair_ids", "labels",
                  "word_ids")


def encoded_bytes(encoded):
    """Bytes held by the arrays of an EncodedCorpus."""
    return sum(getattr(encoded, name).nbytes for name in ENCODED_ARRAYS if getattr(encoded, name) is not None)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def median_seconds(job, repeat):
    """(median, min, max wall seconds, median CPU seconds of the process, last result)."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = job()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), min(times), max(times), statistics.median(cpu), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="conll2000")
    parser.add_argument("--templates", default=None, help="preset or template file (default per corpus)")
    parser.add_argument("--min-count", type=int, default=0)
    parser.add_argument("--hash-bits", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    train_path, test_path, options, default_templates = CORPORA[args.corpus]
    templates = args.templates or default_templates
    for path in (train_path, test_path):
        if not Path(path).is_file():
            sys.exit(f"{path}: not found (python -m structperc data fetch ...)")
    train = read_corpus(train_path, **options)
    test = read_corpus(test_path, **options)
    labels = train.columns[train.label]
    rss_read = peak_rss_mb()

    def fit():
        hashing = {} if args.hash_bits is None else {"hash_bits": args.hash_bits}
        encoder = FeatureEncoder(templates, min_count=args.min_count, **hashing)
        return encoder, encoder.fit_transform(train, labels)

    fit()  # loads the kernels
    rows = []
    median, low, high, cpu, (encoder, encoded) = median_seconds(fit, args.repeat)
    rows.append(("fit_transform train", train.n_tokens, median, low, high, cpu, encoded))
    encoder.prepare()
    for name, corpus in (("transform train", train), ("transform test", test)):
        median, low, high, cpu, encoded = median_seconds(lambda c=corpus: encoder.transform(c), args.repeat)
        rows.append((name, corpus.n_tokens, median, low, high, cpu, encoded))
    print(f"corpus {args.corpus}, templates {templates}, min_count {args.min_count}, hash_bits {args.hash_bits}, "
          f"median of {args.repeat}")
    print(f"features {encoder.n_features_}, pair features {encoder.n_pair_features_}")
    print("| job | tokens | seconds (min-max) | tokens/s | CPU seconds | tokens/CPU s | encoded bytes/token |")
    print("|---|---|---|---|---|---|---|")
    for name, n_tokens, median, low, high, cpu, encoded in rows:
        print(f"| {name} | {n_tokens} | {median:.3f} ({low:.3f}-{high:.3f}) | {n_tokens / median:,.0f} | "
              f"{cpu:.3f} | {n_tokens / cpu:,.0f} | {encoded_bytes(encoded) / n_tokens:.1f} |")
    print(f"peak RSS: {rss_read:.0f} MB after reading, {peak_rss_mb():.0f} MB at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
