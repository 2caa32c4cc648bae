"""The linear voted perceptron's vote: by the dot products with the 2M support rows (``dual_predict``)
against the mistakes' difference rows (``linear_vote``), on the Collins (2002) table's lists.

The inputs are made once (``--prepare``, which the default run does first, in a process of its own):
ned.testa's 20-best lists featurized with the table's chosen families, and the voted perceptron the
table chose (5 epochs, score weight 10, seed 0) trained on the jackknifed ned.train lists; the first
GROUPS testa groups are kept. Each timed job is a whole process that loads them and votes once (``--vote dots`` or
``--vote differences``); RUNS of each, interleaved, after one untimed run of each (numba's cache).
Both must choose the same rows.

Writes benchmarks/vote.md. Run: ``.venv/bin/python benchmarks/bench_vote.py`` (after
``make reproduce-ner``, whose cached lists and results it reads).
"""
import hashlib
import json
import platform
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from process import run_process  # noqa: E402  benchmarks/process.py

INPUTS = ROOT / "experiments" / "cache" / "vote_bench.npz"
GROUPS = 600
RUNS = 3


def prepare():
    sys.path.insert(0, str(ROOT / "experiments"))
    import collins2002_ner as table

    from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE
    from structperc.rerank.pipeline import DualReranker

    chosen = json.loads((table.RESULTS / "collins2002_ner.json").read_text())
    parts, lists = table.build_lists(held=("testa",))
    train, dev, _, vocabulary = table.featurized(lists, chosen["settings"]["features"],
                                                 table.contexts(parts, lists))
    settings = chosen["rows"]["voted"]["settings"]
    model = DualReranker(kernel="linear", vote="voted", seed=table.SEED, **settings).fit_ranking(train, vocabulary)
    dev = dev.take_groups(np.arange(min(GROUPS, dev.n_groups)))
    # what the learner's vote passes its kernel: the base score's weight, and feature 1 scaled
    w0 = np.zeros(FIRST_FEATURE_ID)
    w0[SCORE_FEATURE] = model.score_weight
    values = np.where(dev.feature_ids == SCORE_FEATURE, dev.values / model.score_scale_, dev.values)
    np.savez(INPUTS, w0=w0, support_offsets=model.support_offsets_, support_ids=model.support_ids_,
             support_values=model.support_values_, survival=model.survival_, group_offsets=dev.group_offsets,
             row_offsets=dev.row_offsets, feature_ids=dev.feature_ids, values=values,
             settings=json.dumps(settings))


def vote(how):
    from structperc._kernels.rank.dual_ranking import Rows, dual_predict, linear_vote

    z = np.load(INPUTS)
    support = Rows(z["support_offsets"], z["support_ids"], z["support_values"])
    rows = Rows(z["row_offsets"], z["feature_ids"], z["values"])
    if how == "dots":
        voted, _ = dual_predict(z["w0"], support, z["survival"], z["group_offsets"], rows, 1)
    else:
        voted, _ = linear_vote(z["w0"], support, z["survival"], z["group_offsets"], rows)
    print(hashlib.sha256(voted.tobytes()).hexdigest())


def main():
    # in a process of its own, which this one never holds the lists of: a child forked from a large
    # parent would count the parent's pages in its peak RSS
    run_process([sys.executable, __file__, "--prepare"])
    z = np.load(INPUTS)
    ways = ("dots", "differences")
    runs = {how: [] for how in ways}
    for round_ in range(RUNS + 1):
        for how in ways:
            run = run_process([sys.executable, __file__, "--vote", how])
            if round_:  # the first round fills numba's cache
                runs[how].append(run)
    digests = {how: {r.stdout.strip() for r in runs[how]} for how in ways}
    assert len(set.union(*digests.values())) == 1, f"the two votes chose differently: {digests}"
    median = {how: statistics.median(r.seconds for r in runs[how]) for how in ways}
    lines = [
        "# The linear voted perceptron's vote: dot products against difference rows",
        "",
        f"Produced by `benchmarks/bench_vote.py` on {platform.machine()}. The first {len(z['group_offsets']) - 1} "
        f"groups of ned.testa's 20-best lists ({len(z['row_offsets']) - 1:,} candidates), the Collins table's voted "
        f"perceptron ({json.loads(str(z['settings']))}; {len(z['survival']) - 1:,} mistakes). Wall seconds of "
        f"whole processes that load the inputs and vote once; median (lowest-highest) of {RUNS} runs each, "
        "interleaved, after one untimed run of each. Both choose the same candidates.",
        "",
        "| vote | seconds | CPU seconds | peak RSS (MB) |",
        "|---|---|---|---|",
    ]
    for how, name in zip(ways, ("dot products with the support rows (`dual_predict`)",
                                "difference rows (`linear_vote`)")):
        seconds = [r.seconds for r in runs[how]]
        lines.append(f"| {name} | {median[how]:.1f} ({min(seconds):.1f}-{max(seconds):.1f}) | "
                     f"{statistics.median(r.cpu for r in runs[how]):.1f} | "
                     f"{statistics.median(r.rss_mb for r in runs[how]):.0f} |")
    lines += ["", f"Ratio of the medians: {median['dots'] / median['differences']:.1f}x.", ""]
    (HERE / "vote.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    if "--vote" in sys.argv:
        vote(sys.argv[sys.argv.index("--vote") + 1])
    elif "--prepare" in sys.argv:
        prepare()
    else:
        main()
