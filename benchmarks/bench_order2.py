"""Second-order (trigram) POS tagging speed on UD English EWT, with and without the tag dictionary.

Averaged perceptron, `pos` templates, 3 epochs, in one process with the kernels compiled before
timing. Training speed is over the median epoch (training tokens per second of an epoch); tagging
speed over the median of 3 decodings of the test file (encoded already). Writes benchmarks/order2.md
and refreshes the figures blocks of README.md and docs/ that quote it.

usage: python benchmarks/bench_order2.py
"""
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from sections import refresh_figures  # benchmarks/sections.py (the script's folder is on sys.path)
from structperc.data.splits import load_ewt
from structperc.estimator.tagger import Tagger

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "order2.md"
EPOCHS = 3
DECODE_RUNS = 3
TAG_DICT_K = 5  # the tag dictionary of the Collins (2002) reproduction (experiments/collins2002)
CONFIGS = [(1, None), (1, TAG_DICT_K), (2, TAG_DICT_K), (2, None)]


def main():
    data = load_ewt(ROOT / "corpora")
    warm = data.train.subset(range(50))
    lines = [
        "# Trigram tagging speed on UD English EWT (xpos, 49 tags)",
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        f"Train {data.train.n_tokens:,} tokens, test {data.test.n_tokens:,} tokens; "
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs.",
        "",
        "| order | tag dictionary | training tokens/s | tagging tokens/s | test accuracy after 3 epochs |",
        "|---|---|---:|---:|---:|",
    ]
    speeds = {}
    for order, tag_dict in CONFIGS:
        settings = dict(templates="pos", order=order, tag_dict=tag_dict, seed=0)
        Tagger(epochs=1, **settings).fit(warm).evaluate(warm)  # compile outside the timing
        tagger = Tagger(epochs=EPOCHS, **settings).fit(data.train)
        train_speed = data.train.n_tokens / np.median([r.seconds for r in tagger.history_])
        encoded = tagger.model_.encoder.transform(data.test, with_labels=False)
        decode_seconds = []
        for _ in range(DECODE_RUNS):
            start = time.perf_counter()
            predicted, _ = tagger.model_.decode(encoded)
            decode_seconds.append(time.perf_counter() - start)
        tag_speed = data.test.n_tokens / np.median(decode_seconds)
        labels = np.asarray(tagger.model_.labels, dtype=object)[predicted]
        accuracy = 100 * np.mean(labels == np.asarray(data.test.labels(), dtype=object))
        dictionary = f"k = {tag_dict}" if tag_dict else "none"
        speeds[order, tag_dict] = train_speed, tag_speed
        row = f"| {order} | {dictionary} | {train_speed:,.0f} | {tag_speed:,.0f} | {accuracy:.2f} % |"
        print(row, file=sys.stderr, flush=True)
        lines.append(row)
    with_dict, without = speeds[2, TAG_DICT_K], speeds[2, None]
    lines += ["", f"The tag dictionary makes trigram training {with_dict[0] / without[0]:.1f} times faster and "
              f"trigram tagging {with_dict[1] / without[1]:.1f} times faster."]
    RESULT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refresh_figures()  # README.md and docs/ quote the results file between figures markers
    print(f"wrote {RESULT}", file=sys.stderr)


if __name__ == "__main__":
    main()
