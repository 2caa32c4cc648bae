"""Collins' findings checked on the rows of one dataset, and the significance tests behind them."""
import numpy as np

from structperc.evaluate.metrics import mcnemar, paired_bootstrap, split

from .settings import SEED

# (claim, better row, worse row): the pairs behind the paper's pattern and the significance tests
PAIRS = (
    ("averaged beats non-averaged", "perc_avg_cc0", "perc_noavg_cc0"),
    ("averaged beats non-averaged", "perc_avg_cc5", "perc_noavg_cc5"),
    ("perceptron beats ME", "perc_avg_cc0", "me_cc0"),
    ("perceptron beats ME", "perc_avg_cc5", "me_cc5"),
)
HEADLINE = ("perc_avg_cc0", "me_cc0")
NEAR_BEST = 0.1  # points of F1 or error %


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
    for claim, a, b in PAIRS:
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
            reasons = ["holds on dev but not on test" if holds_dev else "fails on dev as well"]
            if not significant:
                reasons.append("the test difference is not significant at 0.05, so this is within what "
                               "resampling the test sentences moves")
            for r in (ra, rb):
                if r.get("capped"):
                    reasons.append(f"{r['method']} peaked at the epoch cap ({r['epochs_cap']}): more epochs "
                                   "might still improve it")
            text = "; ".join(reasons)
            detail += ". " + text[:1].upper() + text[1:]
        checks.append({"claim": claim, "a": a, "b": b, "holds": bool(holds_test), "holds_dev": bool(holds_dev),
                       "detail": detail})
    for cc in (0, 5):
        checks.append(_fewer_iterations_check(task, rows, f"perc_avg_cc{cc}", f"perc_noavg_cc{cc}", metric))
    return checks


def _fewer_iterations_check(task, rows, a, b, metric):
    """"Averaging needs fewer iterations": Numits of the averaged row a against the plain row b."""
    ra, rb = rows.get(a), rows.get(b)
    claim = "averaging needs fewer iterations"
    if not ra or not rb or ra.get("status") != "ok" or rb.get("status") != "ok":
        return {"claim": claim, "a": a, "b": b, "holds": None, "detail": "a row did not run"}
    holds = ra["best_epoch"] < rb["best_epoch"]
    detail = f"Numits {ra['best_epoch']} vs {rb['best_epoch']}"
    if rb.get("capped"):
        detail += f" (non-averaged peaked at the cap of {rb['epochs_cap']}: its Numits is a lower bound)"
        if not holds:
            # both at the cap: the non-averaged row might have peaked later
            return {"claim": claim, "a": a, "b": b, "holds": None,
                    "detail": detail + "; inconclusive, both rows peaked at the cap"}
    near_a, near_b = (near_best_epoch(r["dev_curve"], task) for r in (ra, rb))
    detail += f"; first epoch within {NEAR_BEST} points of the row's best: {near_a} vs {near_b}"
    if not holds:
        curve_a = ra["dev_curve"]
        tail_a = curve_a[near_a - 1:]
        detail += (f". The averaged row's dev {metric} stays within {max(tail_a) - min(tail_a):.2f} points from "
                   f"epoch {near_a} to {len(curve_a)}, so on that plateau its argmax epoch is arbitrary; ")
        detail += ("measured by reaching the plateau, averaging does need fewer iterations" if near_a < near_b
                   else "even by reaching the plateau, averaging does not need fewer iterations here")
    return {"claim": claim, "a": a, "b": b, "holds": bool(holds), "detail": detail}
