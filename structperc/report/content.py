"""What the report shows, as plain data: the errors in their sentences, the explanation of each of
those sentences, and the model's weights (transitions, top features per label, training curve)."""
import numpy as np

from structperc.chunks import chunk_spans, is_bio
from structperc.errors import ConfigError
from structperc.evaluate.metrics import evaluation_details

# the labels a heat map shows at most (the most frequent in the test corpus)
MAX_HEAT_LABELS = 40
# the sentences with errors whose explanation the page holds (the first ones), and the features
# listed per token (the rest summed: the totals stay exact)
MAX_EXPLAINED = 2000
EXPLAIN_TOP = 6
# state features per label and sign
TOP_FEATURES = 10


def predictions(tagger, corpus):
    """(predicted labels, the encoded input or None, predicted label ids or None): an ensemble has
    no single model whose path could be explained."""
    from structperc.ensembles.base import EnsembleTagger

    if isinstance(tagger, EnsembleTagger):
        return list(tagger.predict_corpus(corpus)[0]), None, None
    encoded = tagger.encode_input(corpus)
    ids, _ = tagger.model_.decode(encoded)
    return tagger.model_.label_names(ids).tolist(), encoded, ids


def frequent(labels, counts, limit=MAX_HEAT_LABELS):
    """The indices of at most ``limit`` labels, the most frequent, in their own order."""
    if len(labels) <= limit:
        return np.arange(len(labels))
    return np.sort(np.argsort(-np.asarray(counts), kind="stable")[:limit])


def error_content(tagger, corpus, gold, predicted, encoded, ids):
    """The sentences with errors (words, gold and predicted labels or spans, where they are), the
    errors (``evaluation_details``' records) and the explanations of the first MAX_EXPLAINED sentences."""
    from structperc.model.explain import Explainer, corpus_words

    chunks = is_bio(tagger.model_.labels)
    offsets = corpus.sentence_offsets
    _, records = evaluation_details(gold, predicted, offsets, chunks)
    words = corpus_words(corpus)
    wanted = sorted({r["sentence"] for r in records})
    explainer = None
    if encoded is not None and tagger.model_.normalization == "global":
        explainer = Explainer(tagger.model_)
    index = {label: i for i, label in enumerate(tagger.model_.labels)}
    sentences, explanations, names = {}, {}, {}
    for k, s in enumerate(wanted):
        a, b = int(offsets[s]), int(offsets[s + 1])
        entry = {"words": words[a:b], "gold": list(gold[a:b]), "predicted": list(predicted[a:b]),
                 "where": f"{corpus.path}:{int(corpus.line_numbers[a])}" if len(corpus.line_numbers) else None}
        if chunks:
            entry["gold_spans"] = [list(x) for x in chunk_spans(entry["gold"])]
            entry["predicted_spans"] = [list(x) for x in chunk_spans(entry["predicted"])]
        sentences[s] = entry
        if explainer is not None and k < MAX_EXPLAINED:
            versus = np.array([index.get(g, -1) if g != p else -1 for g, p in zip(entry["gold"], entry["predicted"])])
            explanation = explainer.explain_path(encoded, s, ids[a:b], versus, top=EXPLAIN_TOP)
            explanations[s] = compact_explanation(explanation, names)
    note = None
    if explainer is None:
        note = ("an ensemble's labels come from several models: no explanation" if encoded is None
                else "a MEMM's scores are normalized per token: no explanation")
    elif len(wanted) > MAX_EXPLAINED:
        note = f"explanations for the first {MAX_EXPLAINED} of the {len(wanted)} sentences with errors"
    return {"chunks": chunks, "records": records, "sentences": sentences, "explanations": explanations,
            "names": list(names), "explain_note": note}


def _round(x):
    return None if x is None else round(x, 4)


def compact_explanation(explanation, names):
    """``explain_path``'s dict in a few lists, for a page that holds thousands of them: [score,
    emission, transition, end, tokens], a token [label, other, margin, emission, other emission,
    features, transition terms], a feature [name, value, weight, other weight] and a term [name,
    weight], each name an index into ``names`` (a dict name -> index, extended here); values rounded
    to 4 decimals (the page shows 3)."""
    def name(text):
        return names.setdefault(text, len(names))

    tokens = [[t["label"], t["other"], _round(t["margin"]), _round(t["emission"]), _round(t["other_emission"]),
               [[name(f["feature"]), _round(f["value"]), _round(f["weight"]), _round(f["other_weight"])]
                for f in t["features"]],
               [[name(term["term"]), _round(term["weight"])] for term in t["transitions"]]]
              for t in explanation["tokens"]]
    return [_round(explanation["score"]), _round(explanation["emission"]), _round(explanation["transition"]),
            _round(explanation["end"]), tokens]


def top_state_features(model, k=TOP_FEATURES):
    """{label: {"positive": [(feature, weight)], "negative": [...]}}: the k largest and k smallest
    emission weights of each label (what eli5 shows of a CRF's state features)."""
    layout = model.layout()
    block = model.weights[: layout.off_trans]
    L = model.n_labels
    describe = model.encoder.describe_feature
    out = {}
    pairs = model.emission_pairs
    if pairs is None:
        matrix = block.reshape(-1, L)
        for c, label in enumerate(model.labels):
            column = matrix[:, c]
            out[label] = _extremes(column, np.arange(len(column)), k, describe)
        return out
    offsets, labels = pairs
    features = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    order = np.lexsort((block, labels))
    bounds = np.searchsorted(labels[order], np.arange(L + 1))
    for c, label in enumerate(model.labels):
        chosen = order[bounds[c]: bounds[c + 1]]
        out[label] = _extremes(block[chosen], features[chosen], k, describe)
    return out


def _extremes(weights, features, k, describe):
    """The k largest positive and k smallest negative weights, with their features described."""
    if len(weights) == 0:
        return {"positive": [], "negative": []}
    top = np.argsort(-weights, kind="stable")[:k]
    bottom = np.argsort(weights, kind="stable")[:k]
    return {"positive": [(describe(int(features[i])), float(weights[i])) for i in top if weights[i] > 0],
            "negative": [(describe(int(features[i])), float(weights[i])) for i in bottom if weights[i] < 0]}


def model_content(tagger, gold, predicted):
    """The transition weights (the most frequent labels), the top state features per label and the
    training curve (the dev scores of each epoch, when the model recorded them)."""
    model = tagger.model_
    labels = model.labels
    counts = np.zeros(len(labels))
    index = {label: i for i, label in enumerate(labels)}
    for label in list(gold) + list(predicted):
        if label in index:
            counts[index[label]] += 1
    keep = frequent(labels, counts)
    transition = model.transition_weights() + np.where(np.isfinite(model.mask_penalty), 0.0, -np.inf)
    rows = np.concatenate([[len(labels)], keep])
    training = model.metadata.get("training", {})
    history = model.metadata.get("dev_history") or []
    curve = None
    if history:
        series = {"dev F1": [h.get("f1") for h in history]} if history[0].get("f1") is not None else {}
        series["dev accuracy"] = [h.get("accuracy") for h in history]
        curve = {"epochs": list(range(1, len(history) + 1)), "series": series,
                 "best_epoch": training.get("best_epoch")}
    return {
        "transition": {"rows": ["<start>"] + [labels[i] for i in keep], "columns": [labels[i] for i in keep],
                       "matrix": transition[np.ix_(rows, keep)], "shown": len(keep), "labels": len(labels)},
        "order": model.order,
        "top_features": top_state_features(model),
        "curve": curve,
        "trainer": training.get("trainer"), "epochs": training.get("epochs_done") or training.get("epochs"),
        "best_epoch": training.get("best_epoch"), "features": model.n_features,
    }


def report_content(tagger, corpus, result):
    """Everything the page shows, from a tagger, the labelled corpus and ``evaluate(details=True)``."""
    if corpus.label is None:
        raise ConfigError(f"{corpus.path}: the report needs gold labels")
    gold = list(corpus.columns[corpus.label])
    predicted, encoded, ids = predictions(tagger, corpus)
    errors = error_content(tagger, corpus, gold, predicted, encoded, ids)
    return {"result": result, "errors": errors, "model": model_content(tagger, gold, predicted)}
