"""Scores: token accuracy, conlleval-compatible chunk P/R/F1 (through seqeval), the details of
``eval`` (per-tag scores and confusions, phrase counts and errors: ``evaluation_details``),
significance tests, and the comparison of two tagged outputs of the same input (``compare_tagged``)."""
import warnings

import numpy as np

from structperc.chunks import chunk_spans, is_bio
from structperc.readers import read_corpus
from structperc.errors import ConfigError, InputFormatError, StructpercWarning


def split(flat, sentence_offsets):
    """Flat per-token list -> list of per-sentence lists."""
    return [list(flat[sentence_offsets[i]: sentence_offsets[i + 1]]) for i in range(len(sentence_offsets) - 1)]


def chunk_scores(gold, predicted):
    """Chunk precision, recall and F1 in percent, overall and per type, as conlleval counts them.

    gold, predicted : lists of per-sentence label lists (IOB tags).
    """
    from seqeval.metrics.sequence_labeling import precision_recall_fscore_support

    p, r, f, support = precision_recall_fscore_support(gold, predicted, average=None, zero_division=0)
    p, r, f = (np.asarray(v, dtype=float).tolist() for v in (p, r, f))
    # seqeval reports the types present in gold or predicted chunks, in sorted order
    types = sorted({kind for sentence in (*gold, *predicted) for kind, _, _ in chunk_spans(sentence)})
    per_type = {
        kind: {"precision": 100 * p[i], "recall": 100 * r[i], "f1": 100 * f[i], "support": int(support[i])}
        for i, kind in enumerate(types)
    }
    mp, mr, mf, _ = precision_recall_fscore_support(gold, predicted, average="micro", zero_division=0)
    return {"precision": 100 * float(mp), "recall": 100 * float(mr), "f1": 100 * float(mf), "per_type": per_type}


def evaluate_labels(gold, predicted, sentence_offsets, chunks, details=False):
    """accuracy (percent), tokens, sentences, and with ``chunks`` precision/recall/f1/per_type;
    with ``details`` also what ``eval`` prints (``evaluation_details``).

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
    if details:
        result.update(evaluation_details(gold, predicted, sentence_offsets, chunks, result.get("per_type"))[0])
    return result


def chunk_type(label):
    """The chunk type of a label (``NP`` of ``B-NP``), ``O`` outside a chunk."""
    return label if label == "O" else label.split("-", 1)[-1]


def evaluation_details(gold, predicted, sentence_offsets, chunks, per_type=None):
    """What ``eval`` reports beyond ``evaluate_labels``, and the errors one by one.

    Token task (``chunks`` False): per_type holds each tag's precision, recall, F1 and support
    (``tags.tag_scores``); confusion the tag confusion matrix; confusions its off-diagonal cells,
    the largest first. Chunk task: per_type holds, beside precision, recall and F1, the gold,
    found (predicted) and correct phrases of each type, and its errors by kind
    (``phrases.phrase_errors``); phrases, found and correct the totals; errors the totals by kind;
    confusion and confusions those of the chunk types of the tokens (``chunk_type``).

    gold, predicted : flat sequences of label strings; sentence_offsets : int array (S + 1,).
    per_type : for a chunk task, ``chunk_scores``' per_type of the same labels when already computed
        (``evaluate_labels``), extended here; None: computed.

    Returns
    -------
    (details : dict, records : list of dict)
        records: one per error, in sentence order (``phrases.phrase_errors``' records; for a token
        task {sentence, kind "wrong_tag", type (gold tag), token (index in the sentence), predicted}).
    """
    from structperc.evaluate.phrases import KINDS, phrase_errors
    from structperc.evaluate.tags import tag_scores

    if not chunks:
        details = tag_scores(gold, predicted)
        offsets = np.asarray(sentence_offsets)
        wrong = np.flatnonzero(np.asarray(gold, dtype=object) != np.asarray(predicted, dtype=object))
        sentence_of = np.searchsorted(offsets, wrong, side="right") - 1
        records = [{"sentence": int(s), "kind": "wrong_tag", "type": gold[i], "token": int(i - offsets[s]),
                    "predicted": predicted[i]} for i, s in zip(wrong.tolist(), sentence_of.tolist())]
        return details, records
    found = phrase_errors(split(gold, sentence_offsets), split(predicted, sentence_offsets))
    if per_type is None:
        per_type = chunk_scores(split(gold, sentence_offsets), split(predicted, sentence_offsets))["per_type"]
    for kind, count in found["counts"].items():
        per_type[kind].update(count)
        per_type[kind]["errors"] = found["errors"][kind]
    types = tag_scores([chunk_type(x) for x in gold], [chunk_type(x) for x in predicted])
    details = {
        "per_type": per_type,
        **{field: sum(c[field] for c in found["counts"].values()) for field in ("gold", "found", "correct")},
        "errors": {kind: sum(e[kind] for e in found["errors"].values()) for kind in KINDS},
        "confusion": types["confusion"], "confusions": types["confusions"],
    }
    details["phrases"] = details.pop("gold")
    return details, found["records"]


def _some(labels, n=6):
    """At most n labels for a message, and how many there are in all."""
    labels = sorted(labels)
    shown = ", ".join(labels[:n])
    return shown + (f", ... ({len(labels)} in all)" if len(labels) > n else "")


def unknown_gold_labels(gold, model_labels, path="<memory>"):
    """The gold labels (sorted) that the model does not know: they can only be scored as errors.

    A ConfigError when the model knows none of them, as when a corpus is scored with a model of
    another task or the wrong label column is read: the score would be meaningless. ``O`` alone
    does not count as known, since chunk label sets of different types share it.

    gold : iterable of str, the gold label of every token; model_labels : the model's labels.
    """
    distinct = set(gold)
    known = set(model_labels)
    unknown = sorted(distinct - known)
    known_gold = distinct & known
    if distinct and (not known_gold or (known_gold == {"O"} and distinct != {"O"})):
        raise ConfigError(f"{path}: the model knows none of the gold labels ({_some(distinct)}); its labels are "
                          f"{_some(known)}: another model or another label column is needed")
    return unknown


def check_gold_labels(gold, model_labels, path):
    """``unknown_gold_labels``, with a StructpercWarning naming the unknown labels when there are some."""
    unknown = unknown_gold_labels(gold, model_labels, path)
    if unknown:
        shown = ", ".join(unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        warnings.warn(StructpercWarning(f"the model does not know {len(unknown)} of the gold labels ({shown}); "
                                        f"their tokens count as errors", path=path), stacklevel=3)
    return unknown


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
    counts = np.zeros((len(gold), 3), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, predicted)):
        gs, ps = set(chunk_spans(g)), set(chunk_spans(p))
        counts[i] = (len(gs & ps), len(ps), len(gs))
    return counts


def f1_from_counts(counts, empty=0.0):
    """Chunk F1 in percent from conlleval's counts: F1 = 2 P R / (P + R) = 200 c / (p + g).

    Parameters
    ----------
    counts : array-like of int, shape (..., 3)
        (correct chunks c, predicted chunks p, gold chunks g) along the last axis.
    empty : float
        The F1 where p + g = 0 (no chunk on either side): 0 for a corpus, 100 for an n-best
        candidate that rightly predicts no chunk.

    Returns
    -------
    float64 ndarray of shape (...), a numpy scalar for one triple.
    """
    counts = np.asarray(counts)
    correct, predicted, gold = counts[..., 0], counts[..., 1], counts[..., 2]
    denominator = predicted + gold
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 200.0 * correct / np.maximum(denominator, 1), empty)[()]


def paired_bootstrap(gold, predicted_a, predicted_b, samples=10000, seed=0):
    """Paired bootstrap over sentences on chunk F1 (Koehn 2004; Berg-Kirkpatrick et al. 2012).

    gold, predicted_a, predicted_b : lists of per-sentence label lists. Resamples sentences with
    replacement; the p-value is the share of samples where A's advantage over B is at least twice
    the observed one (the null-centred test). Returns dict(f1_a, f1_b, delta, p_value, samples).
    """
    a = _chunk_counts(gold, predicted_a)
    b = _chunk_counts(gold, predicted_b)
    f1_a, f1_b = float(f1_from_counts(a.sum(0))), float(f1_from_counts(b.sum(0)))
    delta = f1_a - f1_b
    rng = np.random.default_rng(seed)
    n = len(gold)
    exceed = 0
    for lo in range(0, samples, 1000):
        m = min(1000, samples - lo)
        idx = rng.integers(0, n, size=(m, n))
        weights = np.zeros((m, n))
        np.add.at(weights, (np.repeat(np.arange(m), n), idx.ravel()), 1.0)
        sample_delta = f1_from_counts(weights @ a) - f1_from_counts(weights @ b)
        exceed += int(np.sum(sample_delta >= 2 * delta)) if delta >= 0 else int(np.sum(sample_delta <= 2 * delta))
    return {"f1_a": f1_a, "f1_b": f1_b, "delta": delta, "p_value": (exceed + 1) / (samples + 1), "samples": samples}


# ------------------------------------------------------------------------ comparing two outputs
# tagged CoNLL-U: the 10 CoNLL-U fields, then the prediction
_CONLLU_TAGGED_WIDTH = 11
_CONLLU_GOLD = {"upos": 3, "xpos": 4}


def _read_tagged(path, gold=None):
    """(corpus, words, gold labels, predictions) of a tagged output.

    gold : None (the second-to-last column), a 1-based column number, or for tagged CoNLL-U
    ``upos`` / ``xpos``. Tagged CoNLL-U (11 columns, a numeric first column) has no default: its
    second-to-last column is MISC.
    """
    corpus = read_corpus(path, format="conll")
    names = list(corpus.columns)
    if len(names) < 3:
        raise InputFormatError(path, 1, f"expected at least 3 columns (word ... gold prediction), found {len(names)}")
    conllu = len(names) == _CONLLU_TAGGED_WIDTH and corpus.columns[names[0]][0].isdigit()
    if gold is None:
        if conllu:
            raise ConfigError(f"{path} looks like tagged CoNLL-U: name its gold column with gold='upos' "
                              "or gold='xpos'")
        index = len(names) - 2
    elif gold in _CONLLU_GOLD:
        if not conllu:
            raise ConfigError(f"gold={gold!r} needs tagged CoNLL-U (11 columns), {path} has {len(names)}")
        index = _CONLLU_GOLD[gold]
    elif gold.isdigit() and 1 <= int(gold) < len(names):
        index = int(gold) - 1
    else:
        raise ConfigError(f"gold takes upos, xpos or a column number from 1 to {len(names) - 1}, got {gold!r}")
    words = corpus.columns[names[1 if conllu else 0]]
    return corpus, words, corpus.columns[names[index]], corpus.columns[names[-1]]


def compare_tagged(path_a, path_b, samples=10000, seed=0, gold=None):
    """Compare two tagged outputs of the same labelled input (last column: prediction; gold: the
    column before it, or as ``gold`` says, see ``_read_tagged``). Returns a dict: tokens, sentences,
    accuracy_a/b, mcnemar, and for BIO label sets f1_a/b and the paired bootstrap on chunk F1.

    Raises InputFormatError (file:line) when the files differ in tokens, words or gold labels.
    """
    corpus_a, words_a, gold_a, pred_a = _read_tagged(path_a, gold)
    corpus_b, words_b, gold_b, pred_b = _read_tagged(path_b, gold)
    if corpus_a.n_tokens != corpus_b.n_tokens:
        n = min(corpus_a.n_tokens, corpus_b.n_tokens)
        longer, corpus = (path_a, corpus_a) if corpus_a.n_tokens > n else (path_b, corpus_b)
        raise InputFormatError(longer, corpus.where(n)[1],
                               f"{corpus_a.n_tokens} tokens in {path_a} but {corpus_b.n_tokens} in {path_b}; "
                               "compare outputs of the same input")
    for what, xs, ys in (("word", words_a, words_b), ("gold label", gold_a, gold_b)):
        differ = np.flatnonzero(np.asarray(xs, dtype=object) != np.asarray(ys, dtype=object))
        if differ.size:
            k = int(differ[0])
            raise InputFormatError(path_b, corpus_b.where(k)[1],
                                   f"{what} {ys[k]!r} differs from {xs[k]!r} at {path_a}:{corpus_a.where(k)[1]}")
    if not np.array_equal(corpus_a.sentence_offsets, corpus_b.sentence_offsets):
        s = int(np.flatnonzero(corpus_a.sentence_offsets != corpus_b.sentence_offsets)[0])
        k = int(min(corpus_a.sentence_offsets[s], corpus_b.sentence_offsets[s]))
        raise InputFormatError(path_b, corpus_b.where(k)[1], "sentence boundaries differ from those of " f"{path_a}")
    gold = np.asarray(gold_a, dtype=object)
    result = {
        "a": str(path_a), "b": str(path_b), "tokens": corpus_a.n_tokens, "sentences": corpus_a.n_sentences,
        "accuracy_a": 100.0 * float(np.mean(gold == np.asarray(pred_a, dtype=object))),
        "accuracy_b": 100.0 * float(np.mean(gold == np.asarray(pred_b, dtype=object))),
        "mcnemar": mcnemar(gold_a, pred_a, pred_b),
    }
    labels = sorted(set(gold_a) | set(pred_a) | set(pred_b))
    if is_bio(labels):
        offsets = corpus_a.sentence_offsets
        gold_s, a_s, b_s = split(gold_a, offsets), split(pred_a, offsets), split(pred_b, offsets)
        scores_a, scores_b = chunk_scores(gold_s, a_s), chunk_scores(gold_s, b_s)
        result["chunks"] = {
            "precision_a": scores_a["precision"], "recall_a": scores_a["recall"], "f1_a": scores_a["f1"],
            "precision_b": scores_b["precision"], "recall_b": scores_b["recall"], "f1_b": scores_b["f1"],
        }
        result["paired_bootstrap"] = paired_bootstrap(gold_s, a_s, b_s, samples=samples, seed=seed)
    return result


def format_comparison(result):
    """A small text table of ``compare_tagged``'s result."""
    width = max(len(result["a"]), len(result["b"]), 6)
    chunks = result.get("chunks")
    header = f"{'system':<{width}}  accuracy" + ("   chunk P   chunk R  chunk F1" if chunks else "")
    lines = [f"{result['tokens']:,} tokens in {result['sentences']:,} sentences", header]
    for side in ("a", "b"):
        line = f"{result[side]:<{width}}  {result['accuracy_' + side]:7.2f}%"
        if chunks:
            line += (f"  {chunks['precision_' + side]:7.2f}%  {chunks['recall_' + side]:7.2f}%  "
                     f"{chunks['f1_' + side]:8.2f}")
        lines.append(line)
    m = result["mcnemar"]
    lines.append(f"McNemar (token decisions): {m['a_only']:,} right only in A, {m['b_only']:,} right only in B, "
                 f"p = {m['p_value']:.4g}")
    if "paired_bootstrap" in result:
        b = result["paired_bootstrap"]
        lines.append(f"paired bootstrap (chunk F1, {b['samples']:,} samples): delta {b['delta']:+.2f}, "
                     f"p = {b['p_value']:.4g}")
    return "\n".join(lines)
