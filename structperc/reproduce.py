"""Reproductions of published experiments. ``run_collins2002`` re-runs the tables of Collins (2002).

Collins, "Discriminative Training Methods for Hidden Markov Models: Theory and Experiments with
Perceptron Algorithms", EMNLP 2002, compares six ways of training the same tagger (the averaged and
the plain perceptron, each with feature count cut-off cc = 0 and cc = 5, and a maximum-entropy
tagger with cc = 0 and cc = 5) on NP chunking and on POS tagging, reporting the development score
and Numits, the training iteration with the best development score.

Here each (dataset, method) pair is one ``Tagger`` fit with ``dev=`` (which keeps the weights of the
best dev epoch, Collins' Numits), followed by one evaluation of the kept model on the test part.
The library never prints: ``progress`` receives one line per finished row.
"""
import json
import math
import os
import platform
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .corpus import concatenate
from .readers import read_corpus, read_ptb_files
from .errors import ConfigError
from .evaluate import evaluate_labels, mcnemar, paired_bootstrap, split
from .tagger import Tagger
from .train import TRAINERS

PAPER = ("Collins (2002), Discriminative Training Methods for Hidden Markov Models: Theory and "
         "Experiments with Perceptron Algorithms, EMNLP")


@dataclass(frozen=True)
class Method:
    """One row of Collins' tables."""

    key: str
    name: str
    trainer: str
    average: bool
    min_count: int


METHODS = (
    Method("perc_avg_cc0", "Perc, avg, cc=0", "perceptron", True, 0),
    Method("perc_noavg_cc0", "Perc, noavg, cc=0", "perceptron", False, 0),
    Method("perc_avg_cc5", "Perc, avg, cc=5", "perceptron", True, 5),
    Method("perc_noavg_cc5", "Perc, noavg, cc=5", "perceptron", False, 5),
    # Collins' ME taggers were trained to (near) convergence, not averaged
    Method("me_cc0", "ME, cc=0", "memm", False, 0),
    Method("me_cc5", "ME, cc=5", "memm", False, 5),
)
METHOD_KEYS = [m.key for m in METHODS]
# Not in the paper: when the ME rows had to run first order on POS, this row measures the
# averaged perceptron at that same order, so "perceptron beats ME" can be checked at equal order.
CONTROL = Method("perc_avg_cc0_order1", "Perc, avg, cc=0, order 1 (control)", "perceptron", True, 0)

# Collins (2002), Tables: (development score, Numits). NP chunking: F-measure; POS: error %.
PUBLISHED = {
    "np": {
        "perc_avg_cc0": (93.53, 13), "perc_noavg_cc0": (93.04, 35), "perc_avg_cc5": (93.33, 9),
        "perc_noavg_cc5": (91.88, 39), "me_cc0": (92.34, 900), "me_cc5": (92.65, 200),
    },
    "pos": {
        "perc_avg_cc0": (2.93, 10), "perc_noavg_cc0": (3.68, 20), "perc_avg_cc5": (3.03, 6),
        "perc_noavg_cc5": (4.04, 17), "me_cc0": (3.4, 100), "me_cc5": (3.28, 200),
    },
}
PUBLISHED_WSJ_TEST_ACCURACY = 97.11  # averaged perceptron, WSJ sections 22-24

# ------------------------------------------------------------------------------ configuration
NP_DEV_SENTENCES = 1000  # the last 1,000 sentences of CoNLL-2000 train.txt are the NP dev set
WSJ_SAMPLE_SPLIT = {"train": (1, 159), "dev": (160, 179), "test": (180, 199)}  # wsj_NNNN file numbers
PTB_SPLIT = {"train": (0, 18), "dev": (19, 21), "test": (22, 24)}  # sections, inclusive
POS_ORDER = 2
# NP rows: Sha & Pereira's feature set (`chunk` on y[i] and on (y[i-1], y[i])). Measured with the
# averaged perceptron, cc=0, 40-epoch cap, dev-chosen epoch: `chunk` test F1 93.68 (dev 95.38),
# `chunk-pair` 93.97 (dev 95.43).
NP_TEMPLATES = "chunk-pair"
POS_TEMPLATES = "pos"
# Words seen at least TAG_DICT_K times may only take their seen tags. Measured on EWT dev
# (averaged perceptron, order 2, cc=0, best of 6 epochs): k=1 88.17%, k=2 93.62%, k=3 93.84%,
# k=5 93.94%, k=10 93.55% (order 1 without a dictionary: 93.22%). Without a dictionary order-2
# training runs at ~8k tokens/s against ~100-160k with k=5.
TAG_DICT_K = 5
SEED = 0

# epoch caps: (perceptron, memm) per task; the whole default run must fit in 30 minutes on 2 cores
# (measured: caps 50/30 and 30/30 took 7.4 min with a load average of ~3)
FULL_EPOCHS = {"np": {"perceptron": 80, "memm": 60}, "pos": {"perceptron": 50, "memm": 50}}
QUICK_EPOCHS = {"np": {"perceptron": 3, "memm": 3}, "pos": {"perceptron": 3, "memm": 3}}
QUICK_TRAIN_SENTENCES = 2000
DATASETS = ("np", "ewt", "wsj", "ptb")


@dataclass
class DatasetSplit:
    """Train/dev/test corpora of one dataset, with the task ("np" or "pos") and how they were cut."""

    name: str
    task: str
    title: str
    description: str
    train: object
    dev: object
    test: object


# ------------------------------------------------------------------------------ datasets
_WSJ_FILE = re.compile(r"^wsj_(\d\d)(\d\d)\.pos$", re.IGNORECASE)


def ptb_files_by_section(root):
    """Tagged WSJ files under ``root`` grouped by section: {section (int): [paths, sorted by name]}.

    The section is read from the file name wsj_SSNN.pos, so both a flat directory and one with
    SS/ subfolders (at any depth) work. Other files are ignored.
    """
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"--ptb-root {str(root)!r} is not a directory")
    sections = {}
    for path in root.rglob("*"):
        match = _WSJ_FILE.match(path.name)
        if match and path.is_file():
            sections.setdefault(int(match.group(1)), []).append(path)
    return {s: sorted(paths, key=lambda p: p.name.lower()) for s, paths in sorted(sections.items())}


def ptb_split_files(root, split_sections=PTB_SPLIT):
    """{"train": [...], "dev": [...], "test": [...]} files of the sections 0-18 / 19-21 / 22-24."""
    sections = ptb_files_by_section(root)
    out = {}
    for part, (lo, hi) in split_sections.items():
        out[part] = [p for s in range(lo, hi + 1) for p in sections.get(s, [])]
        if not out[part]:
            raise ConfigError(
                f"--ptb-root {str(root)!r}: no wsj_SSNN.pos files of sections {lo:02d}-{hi:02d} ({part}); "
                f"found sections {sorted(sections) or 'none'}")
    return out


def split_by_file_number(paths, ranges):
    """Files wsj_NNNN.pos into parts by the number NNNN: ranges {part: (first, last)} inclusive."""
    out = {part: [] for part in ranges}
    for path in sorted(paths, key=lambda p: Path(p).name.lower()):
        match = _WSJ_FILE.match(Path(path).name)
        if not match:
            continue
        number = int(match.group(1) + match.group(2))
        for part, (lo, hi) in ranges.items():
            if lo <= number <= hi:
                out[part].append(Path(path))
    return out


def _need(path, corpus_name):
    if not Path(path).is_file():
        raise ConfigError(f"{path}: not found; fetch it with `structperc data fetch {corpus_name}`")
    return path


def load_np(corpora_dir, quick=False):
    root = Path(corpora_dir) / "conll2000"
    read = dict(columns=["word", "pos", "chunk"], only_types=["NP"])
    full = read_corpus(_need(root / "train.txt", "conll2000"), **read)
    test = read_corpus(_need(root / "test.txt", "conll2000"), **read)
    n = full.n_sentences
    cut = n - NP_DEV_SENTENCES
    train = full.subset(range(QUICK_TRAIN_SENTENCES if quick else cut))
    dev = full.subset(range(cut, n))
    description = (
        f"CoNLL-2000 with every non-NP chunk mapped to O. train: sentences 1-{cut:,} of train.txt "
        f"(WSJ 15-18){f', of which the first {QUICK_TRAIN_SENTENCES:,} (quick run)' if quick else ''}; "
        f"dev: the last {NP_DEV_SENTENCES:,} sentences of train.txt ({cut + 1:,}-{n:,}; Collins' "
        "dev set, WSJ 21, is not part of CoNLL-2000; this dev slice comes from the same sections as the "
        f"training sentences); test: test.txt (WSJ 20). Templates `{NP_TEMPLATES}` "
        "(words and POS in a +-2 window and their conjunctions, each on the label and on the label "
        "pair), BIO constraint, first order.")
    return DatasetSplit("np", "np", "NP chunking, CoNLL-2000", description, train, dev, test)


def load_ewt(corpora_dir):
    root = Path(corpora_dir) / "ud_english_ewt"
    parts = {p: read_corpus(_need(root / f"en_ewt-ud-{p}.conllu", "ud_english_ewt"), label="xpos")
             for p in ("train", "dev", "test")}
    description = ("UD English EWT, PTB-style tags (xpos), its own train/dev/test files. Web text "
                   "(blogs, reviews, e-mail), not the WSJ: error rates are not comparable to Collins'.")
    return DatasetSplit("ewt", "pos", "POS tagging, UD English EWT (xpos)", description, **parts)


def load_wsj_sample(corpora_dir):
    root = Path(corpora_dir) / "wsj_sample" / "tagged"
    if not root.is_dir():
        raise ConfigError(f"{root}: not found; fetch it with `structperc data fetch wsj_sample`")
    files = split_by_file_number(root.glob("*.pos"), WSJ_SAMPLE_SPLIT)
    for part, paths in files.items():
        if not paths:
            raise ConfigError(f"{root}: no files for the {part} part {WSJ_SAMPLE_SPLIT[part]}")
    parts = {p: read_ptb_files(paths) for p, paths in files.items()}
    ranges = "; ".join(f"{p}: wsj_{lo:04d}-wsj_{hi:04d} ({len(files[p])} files)"
                       for p, (lo, hi) in WSJ_SAMPLE_SPLIT.items())
    description = f"The NLTK 10% sample of the Penn Treebank WSJ (section 00-01), split by file: {ranges}."
    return DatasetSplit("wsj", "pos", "POS tagging, WSJ sample", description, **parts)


def load_ptb(ptb_root):
    files = ptb_split_files(ptb_root)
    parts = {p: read_ptb_files(paths) for p, paths in files.items()}
    counts = ", ".join(f"{p} {len(v)} files" for p, v in files.items())
    description = (f"Penn Treebank WSJ tagged files under {ptb_root}: sections 00-18 train, 19-21 dev, "
                   f"22-24 test ({counts}), Collins' split.")
    return DatasetSplit("ptb", "pos", "POS tagging, Penn Treebank WSJ", description, **parts)


def load_dataset(name, corpora_dir, quick=False, ptb_root=None):
    if name == "np":
        return load_np(corpora_dir, quick)
    if name == "ewt":
        return load_ewt(corpora_dir)
    if name == "wsj":
        return load_wsj_sample(corpora_dir)
    if name == "ptb":
        if ptb_root is None:
            raise ConfigError("dataset 'ptb' needs --ptb-root DIR (a Penn Treebank tagged directory)")
        return load_ptb(ptb_root)
    raise ConfigError(f"unknown dataset {name!r}: choose from {', '.join(DATASETS)}")


# ------------------------------------------------------------------------------ one row
def _task_score(result, task):
    """The number of Collins' tables: F1 for NP chunking, error % for POS tagging."""
    return result["f1"] if task == "np" else 100.0 - result["accuracy"]


def run_row(data, method, epochs, order=None):
    """Fit one method with dev-based epoch selection, then score the kept weights on test.

    Returns (row dict for the results, test predictions as a flat list of label strings).
    """
    row = {"key": method.key, "method": method.name, "trainer": method.trainer, "average": method.average,
           "min_count": method.min_count, "epochs_cap": epochs}
    if method.trainer not in TRAINERS:
        row.update(status="skipped", note=(
            f"trainer {method.trainer!r} is not registered in structperc.train.TRAINERS "
            f"(have: {', '.join(TRAINERS)}); row not run"))
        return row, None
    pos = data.task == "pos"
    if order is None:
        order = POS_ORDER if pos else 1

    def make(order):
        return Tagger(
            templates=POS_TEMPLATES if pos else NP_TEMPLATES, trainer=method.trainer, epochs=epochs,
            average=method.average, min_count=method.min_count, constrain=None if pos else "bio", order=order,
            tag_dict=TAG_DICT_K if pos else None, seed=SEED,
        )

    start = time.perf_counter()
    try:
        tagger = make(order).fit(data.train, dev=data.dev)
    except ConfigError as exc:
        if order == 1:
            raise
        # a learning rule without second-order support: run it as a bigram tagger and say so
        # beside the row
        row["note"] = f"ran first order: {exc}"
        order = 1
        start = time.perf_counter()
        tagger = make(order).fit(data.train, dev=data.dev)
    train_seconds = time.perf_counter() - start
    predicted, _ = tagger.predict_corpus(data.test)
    gold = data.test.labels()
    test = evaluate_labels(gold, predicted, data.test.sentence_offsets, data.task == "np")
    best = tagger.n_iter_
    dev = tagger.history_[best - 1].dev
    training, encoder = tagger.model_.metadata["training"], tagger.model_.encoder
    row.update(
        status="ok",
        order=order,
        best_epoch=best,
        capped=best == epochs,
        dev_score=_task_score(dev, data.task),
        test_score=_task_score(test, data.task),
        dev_accuracy=dev["accuracy"],
        test_accuracy=test["accuracy"],
        dev_curve=[_task_score(r.dev, data.task) for r in tagger.history_],
        epoch_seconds=[r.seconds for r in tagger.history_],
        train_tokens=data.train.n_tokens,
        # attributes conjoined with the label, plus those conjoined with the label pair
        features_seen=int(training["features_seen"] + training["pair_features_seen"]),
        features=int(encoder.n_features_ + encoder.n_pair_features_),  # after pruning zero-weight features
        seconds=time.perf_counter() - start,
        train_seconds=train_seconds,
    )
    if data.task == "np":
        row.update(dev_precision=dev["precision"], dev_recall=dev["recall"],
                   test_precision=test["precision"], test_recall=test["recall"])
    # Once Numits is chosen on dev, train again on train + dev for Numits epochs, the way a held-out
    # choice is normally used (the NP dev slice is carved out of train.txt).
    refit = make(order)
    refit.epochs = best
    refit.fit(concatenate([data.train, data.dev]))
    refit_predicted, _ = refit.predict_corpus(data.test)
    refit_test = evaluate_labels(gold, refit_predicted, data.test.sentence_offsets, data.task == "np")
    row.update(refit_test_score=_task_score(refit_test, data.task), seconds=time.perf_counter() - start)
    return row, predicted


# ------------------------------------------------------------------------------ comparisons
# (claim, better row, worse row): the pairs behind the paper's pattern and the significance tests
PAIRS = (
    ("averaged beats non-averaged", "perc_avg_cc0", "perc_noavg_cc0"),
    ("averaged beats non-averaged", "perc_avg_cc5", "perc_noavg_cc5"),
    ("perceptron beats ME", "perc_avg_cc0", "me_cc0"),
    ("perceptron beats ME", "perc_avg_cc5", "me_cc5"),
)
CONTROL_PAIR = ("perceptron beats ME at equal label order", CONTROL.key, "me_cc0")
HEADLINE = ("perc_avg_cc0", "me_cc0")


def significance(task, data, predictions, a, b, samples=10000):
    """Test of row a against row b on the test part: McNemar on token decisions (POS) or the paired
    bootstrap on chunk F1 (NP). None when either row did not run."""
    if predictions.get(a) is None or predictions.get(b) is None:
        return None
    gold = data.test.labels()
    if task == "pos":
        result = mcnemar(gold, predictions[a], predictions[b])
        return {"a": a, "b": b, "test": "mcnemar", **result}
    offsets = data.test.sentence_offsets
    result = paired_bootstrap(split(gold, offsets), split(predictions[a], offsets), split(predictions[b], offsets),
                              samples=samples, seed=SEED)
    return {"a": a, "b": b, "test": "paired_bootstrap", **result}


NEAR_BEST = 0.1  # points of F1 or error %


def near_best_epoch(curve, task, tolerance=NEAR_BEST):
    """First epoch (1-based) whose dev score is within ``tolerance`` of the curve's best: a Numits
    that does not depend on tiny fluctuations along a plateau."""
    curve = np.asarray(curve, dtype=float)
    best = curve.max() if task == "np" else curve.min()
    close = np.abs(curve - best) <= tolerance + 1e-9
    return int(np.flatnonzero(close)[0]) + 1


def _better(task, x, y):
    """Is score x better than y (F1: higher; error %: lower)?"""
    return x > y if task == "np" else x < y


def check_patterns(task, rows, tests=None):
    """Collins' three findings checked on one dataset's rows (dicts keyed by method key).

    tests : optional {(a, b): significance dict}. Returns a list of dicts: claim, a, b, holds
    (True/False, or None when a row did not run) and detail, a sentence with the measured numbers.
    """
    tests = tests or {}
    metric = "F" if task == "np" else "error %"
    checks = []
    for claim, a, b in PAIRS + ((CONTROL_PAIR,) if CONTROL.key in rows else ()):
        ra, rb = rows.get(a), rows.get(b)
        if not ra or not rb or ra.get("status") != "ok" or rb.get("status") != "ok":
            checks.append({"claim": claim, "a": a, "b": b, "holds": None,
                           "detail": f"{b if ra and ra.get('status') == 'ok' else a} did not run"})
            continue
        holds_test = _better(task, ra["test_score"], rb["test_score"])
        holds_dev = _better(task, ra["dev_score"], rb["dev_score"])
        detail = (f"test {metric} {ra['test_score']:.2f} vs {rb['test_score']:.2f}, "
                  f"dev {ra['dev_score']:.2f} vs {rb['dev_score']:.2f}")
        test = tests.get((a, b))
        if test is not None:
            detail += f"; p = {test['p_value']:.3g} ({test['test'].replace('_', ' ')})"
        significant = test is None or test["p_value"] < 0.05
        if holds_test and not significant:
            detail += ", not significant at 0.05"
        if not holds_test:
            reasons = [f"holds on dev but not on test" if holds_dev else "fails on dev as well"]
            if not significant:
                reasons.append("the test difference is not significant at 0.05, so this is within what "
                               "resampling the test sentences moves")
            for r in (ra, rb):
                if r.get("capped"):
                    reasons.append(f"{r['method']} peaked at the epoch cap ({r['epochs_cap']}): more epochs "
                                   "might still improve it")
            text = "; ".join(reasons)
            detail += ". " + text[:1].upper() + text[1:]
        if ra.get("order") != rb.get("order"):
            detail += (f". {ra['method']} is order {ra.get('order')}, {rb['method']} order {rb.get('order')}, "
                       "so the difference also includes the label order")
        checks.append({"claim": claim, "a": a, "b": b, "holds": bool(holds_test), "holds_dev": bool(holds_dev),
                       "detail": detail})
    for cc in (0, 5):
        a, b = f"perc_avg_cc{cc}", f"perc_noavg_cc{cc}"
        ra, rb = rows.get(a), rows.get(b)
        claim = "averaging needs fewer iterations"
        if not ra or not rb or ra.get("status") != "ok" or rb.get("status") != "ok":
            checks.append({"claim": claim, "a": a, "b": b, "holds": None, "detail": "a row did not run"})
            continue
        holds = ra["best_epoch"] < rb["best_epoch"]
        detail = f"Numits {ra['best_epoch']} vs {rb['best_epoch']}"
        if rb.get("capped"):
            detail += f" (non-averaged peaked at the cap of {rb['epochs_cap']}: its Numits is a lower bound)"
            if not holds:
                # both at the cap: the non-averaged row might have peaked later
                checks.append({"claim": claim, "a": a, "b": b, "holds": None,
                               "detail": detail + "; inconclusive, both rows peaked at the cap"})
                continue
        near_a, near_b = (near_best_epoch(r["dev_curve"], task) for r in (ra, rb))
        detail += f"; first epoch within {NEAR_BEST} points of the row's best: {near_a} vs {near_b}"
        if not holds:
            curve_a, curve_b = ra["dev_curve"], rb["dev_curve"]
            tail_a = curve_a[near_a - 1:]
            detail += (f". The averaged row's dev {metric} stays within {max(tail_a) - min(tail_a):.2f} points from "
                       f"epoch {near_a} to {len(curve_a)}, so on that plateau its argmax epoch is arbitrary; ")
            detail += ("measured by reaching the plateau, averaging does need fewer iterations" if near_a < near_b
                       else "even by reaching the plateau, averaging does not need fewer iterations here")
        checks.append({"claim": claim, "a": a, "b": b, "holds": bool(holds), "detail": detail})
    return checks


# ------------------------------------------------------------------------------ the run
def run_collins2002(corpora_dir, out_dir, quick=False, ptb_root=None, datasets=None, progress=None):
    """Re-run Collins (2002) on the given datasets; write collins2002.md, collins2002.json and one
    PNG of dev curves per dataset into ``out_dir``. Returns the results dict (also the JSON).

    datasets : names from ``DATASETS`` (default: np, ewt, wsj, plus ptb when ptb_root is given;
        quick: np only). progress : callable(str) receiving one line per finished row, or None.
    """
    if datasets is None:
        datasets = ["np"] if quick else ["np", "ewt", "wsj"] + (["ptb"] if ptb_root else [])
    datasets = list(datasets)
    for name in datasets:
        if name not in DATASETS:
            raise ConfigError(f"unknown dataset {name!r}: choose from {', '.join(DATASETS)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    caps = QUICK_EPOCHS if quick else FULL_EPOCHS
    say = progress or (lambda line: None)
    start = time.perf_counter()
    results = {
        "paper": PAPER,
        "quick": quick,
        "settings": {
            "seed": SEED, "pos_order": POS_ORDER, "tag_dict": TAG_DICT_K, "epoch_caps": caps,
            "np_dev_sentences": NP_DEV_SENTENCES, "quick_train_sentences": QUICK_TRAIN_SENTENCES if quick else None,
            "trainers_available": sorted(TRAINERS),
        },
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
                    "python": platform.python_version(), "platform": platform.platform()},
        "published": {k: {m: list(v) for m, v in rows.items()} for k, rows in PUBLISHED.items()},
        "datasets": {},
    }
    for name in datasets:
        read_start = time.perf_counter()
        data = load_dataset(name, corpora_dir, quick=quick, ptb_root=ptb_root)
        entry = {
            "task": data.task, "title": data.title, "description": data.description,
            "sizes": {p: {"sentences": c.n_sentences, "tokens": c.n_tokens}
                      for p, c in (("train", data.train), ("dev", data.dev), ("test", data.test))},
            "read_seconds": time.perf_counter() - read_start,
            "rows": [],
        }
        predictions = {}
        for method in METHODS:
            row, predicted = run_row(data, method, caps[data.task][method.trainer] if method.trainer in caps[data.task]
                                     else caps[data.task]["memm"])
            entry["rows"].append(row)
            predictions[method.key] = predicted
            say(_progress_line(name, data.task, row))
        me_orders = {r.get("order") for r in entry["rows"] if r["trainer"] == "memm" and r["status"] == "ok"}
        pairs = PAIRS
        if data.task == "pos" and me_orders and me_orders != {POS_ORDER}:
            row, predicted = run_row(data, CONTROL, caps[data.task]["perceptron"], order=min(me_orders))
            entry["rows"].append(row)
            predictions[CONTROL.key] = predicted
            say(_progress_line(name, data.task, row))
            pairs = PAIRS + (CONTROL_PAIR,)
        tests = {}
        for _, a, b in pairs:
            result = significance(data.task, data, predictions, a, b, samples=1000 if quick else 10000)
            if result is not None:
                tests[(a, b)] = result
        entry["significance"] = [tests[k] for k in tests]
        entry["headline_test"] = tests.get(HEADLINE)
        entry["patterns"] = check_patterns(data.task, {r["key"]: r for r in entry["rows"]}, tests)
        entry["seconds"] = time.perf_counter() - read_start
        results["datasets"][name] = entry
    results["total_seconds"] = time.perf_counter() - start
    for name, entry in results["datasets"].items():
        entry["plot"] = plot_dev_curves(entry, out_dir / f"collins2002_{name}.png")
    _write_atomic(out_dir / "collins2002.json", json.dumps(results, indent=1, default=_json_default) + "\n")
    _write_atomic(out_dir / "collins2002.md", render_markdown(results))
    return results


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _progress_line(dataset, task, row):
    if row["status"] != "ok":
        return f"{dataset:4} {row['method']:18} skipped: {row['note']}"
    metric = "F" if task == "np" else "err%"
    cap = " (cap)" if row["capped"] else ""
    return (f"{dataset:4} {row['method']:18} dev {metric} {row['dev_score']:6.2f} at epoch "
            f"{row['best_epoch']}/{row['epochs_cap']}{cap}  test {metric} {row['test_score']:6.2f}  "
            f"{row['seconds']:7.1f}s")


def _write_atomic(path, text):
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------ plots
def plot_dev_curves(entry, path):
    """Dev score after each epoch for every row that ran; returns the file name, or a note string
    starting with "skipped" when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return "skipped: matplotlib is not installed (pip install structperc[plot])"
    rows = [r for r in entry["rows"] if r.get("status") == "ok"]
    if not rows:
        return "skipped: no row ran"
    task = entry["task"]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    styles = {"perc_avg": "-", "perc_noavg": "--", "me": ":"}
    colors = {0: "tab:blue", 5: "tab:orange"}
    for r in rows:
        epochs = np.arange(1, len(r["dev_curve"]) + 1)
        if r["key"] == CONTROL.key:
            style, color = "-.", "tab:purple"
        else:
            style = styles[r["key"].rsplit("_cc", 1)[0]]
            color = colors[r["min_count"]] if r["trainer"] == "perceptron" else (
                "tab:green" if r["min_count"] == 0 else "tab:red")
        line, = ax.plot(epochs, r["dev_curve"], style, color=color, label=r["method"], linewidth=1.6)
        ax.plot([r["best_epoch"]], [r["dev_score"]], "o", color=line.get_color())
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylabel("dev F1 (NP chunks)" if task == "np" else "dev error %")
    if task == "pos":
        best = min(min(r["dev_curve"]) for r in rows)
        worst = max(r["dev_score"] for r in rows)
        ax.set_ylim(best - 0.3, worst + 2.0)
    else:
        best = max(max(r["dev_curve"]) for r in rows)
        worst = min(r["dev_score"] for r in rows)
        ax.set_ylim(worst - 2.0, best + 0.3)
    ax.set_title(f"{entry['title']}: dev score per epoch (dot: kept epoch)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path).name


# ------------------------------------------------------------------------------ markdown
def _fmt(value, digits=2):
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def render_markdown(results):
    """The results file: one table per dataset beside Collins' numbers, tests, patterns, notes."""
    quick = results["quick"]
    lines = [
        "# Collins (2002) reproduced" + (" — QUICK run (reduced data and epochs, not comparable)" if quick else ""),
        "",
        f"Paper: {results['paper']}.",
        "",
        "Collins' tables report the development-set score at Numits, the iteration with the best "
        "development score. Here each row is one `Tagger.fit(train, dev=dev)` (the kept weights are "
        "those of the best dev epoch = our Numits), then one evaluation of those weights on the test "
        "part. Seed " f"{results['settings']['seed']}" " for the per-epoch shuffles.",
        "",
        f"Total wall time: {results['total_seconds'] / 60:.1f} min on {results['machine']['cpus']} CPUs "
        f"(load average at start {results['machine']['load_average_at_start'][0]:.2f}; the machine was "
        "shared, so times may be inflated).",
        "",
    ]
    for name, entry in results["datasets"].items():
        lines += _dataset_section(name, entry, results)
    lines += _notes(results)
    return "\n".join(lines) + "\n"


def _dataset_section(name, entry, results):
    task = entry["task"]
    published = results["published"][task]
    metric = "F" if task == "np" else "error %"
    sizes = entry["sizes"]
    out = [
        f"## {entry['title']}",
        "",
        entry["description"],
        "",
        "Sizes: " + ", ".join(f"{p} {s['sentences']:,} sentences / {s['tokens']:,} tokens" for p, s in sizes.items()) + ".",
        "",
        f"| Method | Collins {metric} (Numits) | ours dev {metric} | ours Numits (cap) | within {NEAR_BEST} of best from | ours test {metric} | features (nonzero) | time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in entry["rows"]:
        paper_score, paper_iters = published.get(r["key"], (None, None))
        paper = f"{paper_score:.2f} ({paper_iters})" if paper_score is not None else "not in the paper"
        if r["status"] != "ok":
            out.append(f"| {r['method']} | {paper} | — | — | — | — | — | skipped |")
            continue
        cap = f"{r['best_epoch']} ({r['epochs_cap']}){' **cap**' if r['capped'] else ''}"
        out.append(f"| {r['method']} | {paper} | {_fmt(r['dev_score'])} | {cap} | {near_best_epoch(r['dev_curve'], task)} | {_fmt(r['test_score'])} | "
                   f"{r.get('features_seen', r['features']):,} ({r['features']:,}) | {r['seconds']:.0f} s |")
    out.append("")
    out.append(f"Time for this dataset (reading included): {entry['seconds']:.0f} s.")
    ran = [r for r in entry["rows"] if r["status"] == "ok"]
    if ran:
        gaps = [(r["dev_score"] - r["test_score"]) * (1 if task == "np" else -1) for r in ran]
        out.append(f"Dev minus test {metric} (positive: dev is better), mean over rows: {np.mean(gaps):+.2f} "
                   f"(range {min(gaps):+.2f} to {max(gaps):+.2f}); the dev score is the maximum over epochs, "
                   "so it is optimistic.")
    if ran and all("refit_test_score" in r for r in ran):
        out.append(f"Test {metric} after training again on the train and dev sentences together for Numits "
                   "epochs: " + "; ".join(f"{r['method']} {r['refit_test_score']:.2f}" for r in ran) + ".")
    if task == "np":
        out.append("Precision/recall (test): " + "; ".join(
            f"{r['method']} {r['test_precision']:.2f}/{r['test_recall']:.2f}" for r in entry["rows"] if r["status"] == "ok") + ".")
    capped = [r["method"] for r in entry["rows"] if r.get("capped")]
    if capped:
        out.append(f"Best epoch at the cap (Numits is a lower bound; the row might improve with more epochs): "
                   f"{', '.join(capped)}.")
    for r in entry["rows"]:
        if r.get("note"):
            out.append(f"{r['method']}: {r['note']}.")
    out.append("")
    headline = entry.get("headline_test")
    out.append("**Significance of Perc avg cc=0 vs ME cc=0 on test:** " + (_describe_test(headline, task) if headline else
               "not computed (a row did not run)."))
    others = [t for t in entry.get("significance", []) if (t["a"], t["b"]) != HEADLINE]
    if others:
        out.append("")
        out.append("Other pairs on test: " + "; ".join(f"{t['a']} vs {t['b']}: p = {t['p_value']:.3g}" for t in others) + ".")
    out += ["", "**Collins' pattern on this dataset** (checked on test; dev in the detail):", ""]
    for check in entry["patterns"]:
        verdict = {True: "holds", False: "**does not hold**", None: "not decided"}[check["holds"]]
        out.append(f"- {check['claim']} ({check['a']} vs {check['b']}): {verdict} — {check['detail']}.")
    plot = entry.get("plot")
    out.append("")
    if plot and not str(plot).startswith("skipped"):
        out.append(f"![dev curves, {name}]({plot})")
    elif plot:
        out.append(f"Plot {plot}.")
    out.append("")
    return out


def _describe_test(test, task):
    if test["test"] == "mcnemar":
        return (f"McNemar on token decisions: {test['a_only']:,} tokens right only with Perc avg, "
                f"{test['b_only']:,} right only with ME; p = {test['p_value']:.3g}.")
    return (f"paired bootstrap over test sentences ({test['samples']:,} samples) on chunk F1: "
            f"{test['f1_a']:.2f} vs {test['f1_b']:.2f} (Δ {test['delta']:+.2f}); p = {test['p_value']:.3g}.")


def _notes(results):
    settings = results["settings"]
    caps = settings["epoch_caps"]
    return [
        "## Differences from the paper's setup",
        "",
        "- **cc counts something else.** Collins' cut-off keeps a feature when the (feature, tag) pair "
        "was seen at least cc times in training. `min_count` here counts occurrences of the attribute "
        "(the template instance, e.g. `w[0]=bank`) regardless of the tag, and then all its label "
        "weights exist. So cc=5 keeps more features here than in the paper.",
        "- **ME is not Collins' ME.** Collins' ME taggers were trained by iterative scaling for up to "
        "hundreds of iterations (Numits 100-900). The ME rows here use `trainer=\"memm\"` (on-line "
        f"training, capped at {caps['np']['memm']} epochs for NP and {caps['pos']['memm']} for POS, "
        "not averaged, default L2 and calibrated learning rate); where its best epoch is the cap the "
        "table says so. On POS the ME rows are trigram MEMMs, P(y_t | y_t-2, y_t-1, x), with the "
        "perceptron rows' templates and tag dictionary, as Ratnaparkhi's tagger had tag-bigram and "
        "tag-trigram features. When `memm` is not registered in "
        "`structperc.train.TRAINERS`, the ME rows are skipped and the perceptron-vs-ME checks are "
        "not made.",
        f"- **Epoch caps.** Perceptron rows stop after {caps['np']['perceptron']} epochs (NP) and "
        f"{caps['pos']['perceptron']} (POS), chosen so the default run fits in 30 minutes on 2 cores; "
        "Collins' largest perceptron Numits is 39.",
        "- **NP dev set.** Collins tuned Numits on WSJ section 21, which CoNLL-2000 does not contain; "
        f"here the last {settings['np_dev_sentences']:,} sentences of train.txt are held out as dev and "
        "not trained on, so NP models see ~11% less training data than Collins'.",
        f"- **POS tagger.** Templates `pos` (Ratnaparkhi's features as in Collins), a trigram (order "
        f"{settings['pos_order']}) model, and a tag dictionary: words seen at least {settings['tag_dict']} "
        "times may only take the tags they were seen with (Collins does not say he used one; "
        "without it order-2 training is ~20x slower). Collins' POS data is WSJ 0-18/19-21/22-24; "
        "that split is only run with `--ptb-root`. EWT and the WSJ sample are stand-ins, and their "
        f"error rates are not comparable to the paper's (the averaged perceptron scored "
        f"{PUBLISHED_WSJ_TEST_ACCURACY}% on WSJ 22-24 in the paper). Richer templates on EWT "
        "(`pos-rich`, `pos-ud`) are compared in `ewt_features.md` (`make ewt-features`).",
        "- **Significance.** POS: McNemar's test on test-token decisions; NP: paired bootstrap over test "
        "sentences on chunk F1 (p = share of resamples where the advantage is at least twice the "
        "observed one). The other pairs in the pattern checks use the same tests.",
        "",
    ]
