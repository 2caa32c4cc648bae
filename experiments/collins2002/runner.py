"""One row (a method on a dataset) and the whole run, which writes the JSON, markdown and plots."""
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from structperc.corpus import concatenate
from structperc.data.splits import DATASETS, NP_DEV_SENTENCES
from structperc.data.splits import load_dataset as load_split
from structperc.errors import ConfigError
from structperc.evaluate.metrics import evaluate_labels
from structperc.estimator.tagger import Tagger
from structperc.train import TRAINERS
from structperc.train.sgd import l2_of_c2

from .checks import HEADLINE, PAIRS, check_patterns, significance
from .report import plot_dev_curves, render_markdown
from .settings import (FULL_EPOCHS, METHODS, NP_SETUP, NP_TEMPLATES, PAPER, POS_ORDER, POS_TEMPLATES,
                       PUBLISHED, QUICK_EPOCHS, QUICK_TRAIN_SENTENCES, SEED, TAG_DICT_K)


def load_dataset(name, corpora_dir, quick=False, ptb_root=None):
    """The dataset's split (``structperc.data.splits``); quick runs train NP on fewer sentences."""
    data = load_split(name, corpora_dir, ptb_root=ptb_root,
                      train_sentences=QUICK_TRAIN_SENTENCES if quick else None)
    if data.task == "np":
        data.description += " " + NP_SETUP
    return data


def _task_score(result, task):
    """The number of Collins' tables: F1 for NP chunking, error % for POS tagging."""
    return result["f1"] if task == "np" else 100.0 - result["accuracy"]


def run_row(data, method, epochs):
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
    order = POS_ORDER if pos else 1

    def make(epochs, corpus):
        """The row's Tagger for training on ``corpus`` (the L2 strength is per example: λ = 2 c2 / N)."""
        return Tagger(
            templates=POS_TEMPLATES if pos else NP_TEMPLATES, trainer=method.trainer, epochs=epochs,
            average=method.average, min_count=method.min_count, constrain=None if pos else "bio", order=order,
            tag_dict=TAG_DICT_K if pos else None, seed=SEED,
            # the pinned numbers were run with CRFsuite's c2 = 1, the L2 default of that time
            **({"l2": l2_of_c2(1.0, corpus.n_sentences)} if method.trainer == "memm" else {}),
        )

    start = time.perf_counter()
    tagger = make(epochs, data.train).fit(data.train, dev=data.dev)
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
    both = concatenate([data.train, data.dev])
    refit = make(best, both).fit(both)
    refit_predicted, _ = refit.predict_corpus(data.test)
    refit_test = evaluate_labels(gold, refit_predicted, data.test.sentence_offsets, data.task == "np")
    row.update(refit_test_score=_task_score(refit_test, data.task), seconds=time.perf_counter() - start)
    return row, predicted


def run_collins2002(corpora_dir, out_dir, quick=False, ptb_root=None, datasets=None, progress=None):
    """Re-run Collins (2002) on the given datasets; write collins2002.md, collins2002.json and one
    PNG of dev curves per dataset into ``out_dir``. Returns the results dict (also the JSON).

    datasets : names from ``structperc.data.splits.DATASETS`` (default: np, ewt, wsj, plus ptb when
        ptb_root is given; quick: np only). progress : callable(str) receiving one line per finished
        row, or None.
    """
    names = _dataset_names(datasets, quick, ptb_root)
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
    for name in names:
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
            task_caps = caps[data.task]
            row, predicted = run_row(data, method, task_caps.get(method.trainer, task_caps["memm"]))
            entry["rows"].append(row)
            predictions[method.key] = predicted
            say(_progress_line(name, data.task, row))
        tests = {}
        for _, a, b in PAIRS:
            result = significance(data.task, data, predictions, a, b, samples=1000 if quick else 10000)
            if result is not None:
                tests[(a, b)] = result
        entry["significance"] = list(tests.values())
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


def _dataset_names(names, quick, ptb_root):
    if names is None:
        return ["np"] if quick else ["np", "ewt", "wsj"] + (["ptb"] if ptb_root else [])
    names = list(names)
    for name in names:
        if name not in DATASETS:
            raise ConfigError(f"unknown dataset {name!r}: choose from {', '.join(DATASETS)}")
    return names


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
