"""Scores: token accuracy, conlleval-compatible chunk P/R/F1 (through seqeval), significance tests."""
import numpy as np


def split(flat, sentence_offsets):
    """Flat per-token list -> list of per-sentence lists."""
    return [list(flat[sentence_offsets[i]: sentence_offsets[i + 1]]) for i in range(len(sentence_offsets) - 1)]


def chunk_scores(gold, predicted):
    """Chunk precision, recall and F1 in percent, overall and per type, as conlleval counts them.

    gold, predicted : lists of per-sentence label lists (IOB tags).
    """
    from seqeval.metrics.sequence_labeling import get_entities, precision_recall_fscore_support

    p, r, f, support = precision_recall_fscore_support(gold, predicted, average=None, zero_division=0)
    p, r, f = (np.asarray(v, dtype=float).tolist() for v in (p, r, f))
    types = sorted({kind for kind, _, _ in get_entities(gold)} | {kind for kind, _, _ in get_entities(predicted)})
    per_type = {
        kind: {"precision": 100 * p[i], "recall": 100 * r[i], "f1": 100 * f[i], "support": int(support[i])}
        for i, kind in enumerate(types)
    }
    mp, mr, mf, _ = precision_recall_fscore_support(gold, predicted, average="micro", zero_division=0)
    return {"precision": 100 * float(mp), "recall": 100 * float(mr), "f1": 100 * float(mf), "per_type": per_type}


def evaluate_labels(gold, predicted, sentence_offsets, chunks):
    """accuracy (percent), tokens, sentences, and with ``chunks`` precision/recall/f1/per_type.

    gold, predicted : flat sequences of label strings.
    """
    gold_arr = np.asarray(gold, dtype=object)
    pred_arr = np.asarray(predicted, dtype=object)
    n = len(gold_arr)
    result = {
        "accuracy": 100.0 * float(np.mean(gold_arr == pred_arr)) if n else 0.0,
        "tokens": n,
        "sentences": len(sentence_offsets) - 1,
    }
    if chunks:
        result.update(chunk_scores(split(gold, sentence_offsets), split(predicted, sentence_offsets)))
    return result


# ------------------------------------------------------------------------ significance tests
def mcnemar(gold, predicted_a, predicted_b):
    """McNemar's test on token decisions (exact binomial when the discordant count is small).

    Returns dict(a_only, b_only, statistic, p_value): a_only counts tokens A gets right and B wrong.
    """
    from math import comb, erfc, sqrt

    gold = np.asarray(gold, dtype=object)
    right_a = np.asarray(predicted_a, dtype=object) == gold
    right_b = np.asarray(predicted_b, dtype=object) == gold
    a_only = int(np.sum(right_a & ~right_b))
    b_only = int(np.sum(~right_a & right_b))
    n = a_only + b_only
    if n == 0:
        return {"a_only": 0, "b_only": 0, "statistic": 0.0, "p_value": 1.0}
    if n <= 50:
        k = min(a_only, b_only)
        p = min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)
        return {"a_only": a_only, "b_only": b_only, "statistic": float(k), "p_value": p}
    # chi-square with continuity correction, one degree of freedom
    statistic = (abs(a_only - b_only) - 1) ** 2 / n
    return {"a_only": a_only, "b_only": b_only, "statistic": statistic, "p_value": erfc(sqrt(statistic / 2))}


def _chunk_counts(gold, predicted):
    """Per sentence (correct chunks, predicted chunks, gold chunks), conlleval's counting."""
    from seqeval.metrics.sequence_labeling import get_entities

    counts = np.zeros((len(gold), 3), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, predicted)):
        gs, ps = set(get_entities(list(g))), set(get_entities(list(p)))
        counts[i] = (len(gs & ps), len(ps), len(gs))
    return counts


def _f1_from_counts(totals):
    correct, guessed, true = totals[..., 0], totals[..., 1], totals[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(guessed + true > 0, 200.0 * correct / (guessed + true), 0.0)
    return f1


def paired_bootstrap(gold, predicted_a, predicted_b, samples=10000, seed=0):
    """Paired bootstrap over sentences on chunk F1 (Koehn 2004; Berg-Kirkpatrick et al. 2012).

    gold, predicted_a, predicted_b : lists of per-sentence label lists. Resamples sentences with
    replacement; the p-value is the share of samples where A's advantage over B is at least twice
    the observed one (the null-centred test). Returns dict(f1_a, f1_b, delta, p_value, samples).
    """
    a = _chunk_counts(gold, predicted_a)
    b = _chunk_counts(gold, predicted_b)
    f1_a, f1_b = float(_f1_from_counts(a.sum(0))), float(_f1_from_counts(b.sum(0)))
    delta = f1_a - f1_b
    rng = np.random.default_rng(seed)
    n = len(gold)
    exceed = 0
    for lo in range(0, samples, 1000):
        m = min(1000, samples - lo)
        idx = rng.integers(0, n, size=(m, n))
        weights = np.zeros((m, n))
        np.add.at(weights, (np.repeat(np.arange(m), n), idx.ravel()), 1.0)
        sample_delta = _f1_from_counts(weights @ a) - _f1_from_counts(weights @ b)
        exceed += int(np.sum(sample_delta >= 2 * delta)) if delta >= 0 else int(np.sum(sample_delta <= 2 * delta))
    return {"f1_a": f1_a, "f1_b": f1_b, "delta": delta, "p_value": (exceed + 1) / (samples + 1), "samples": samples}
