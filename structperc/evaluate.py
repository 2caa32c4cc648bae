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
    types = sorted({kind for kind, _, _ in get_entities(gold)} | {kind for kind, _, _ in get_entities(predicted)})
    per_type = {
        kind: {"precision": 100 * p[i], "recall": 100 * r[i], "f1": 100 * f[i], "support": int(support[i])}
        for i, kind in enumerate(types)
    }
    mp, mr, mf, _ = precision_recall_fscore_support(gold, predicted, average="micro", zero_division=0)
    return {"precision": 100 * mp, "recall": 100 * mr, "f1": 100 * mf, "per_type": per_type}


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
