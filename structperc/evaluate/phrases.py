"""The phrases (chunks) of a chunk task, counted as conlleval counts them, and each error named.

conlleval prints, per type, precision, recall, F1 and the number of phrases *found* (predicted).
Each phrase that is not exactly right is one error of one kind:

- ``wrong_type``: a gold phrase predicted with the same first and last token but another type;
- ``wrong_boundary``: a gold phrase that overlaps predicted phrases, none with its span (the type
  may differ too);
- ``missed``: a gold phrase that no predicted phrase overlaps;
- ``spurious``: a predicted phrase that overlaps no gold phrase.

The first three are counted under the gold phrase's type, ``spurious`` under the predicted one's. A
predicted phrase that overlaps a gold phrase without matching it is the other side of that gold
phrase's error, and is not counted again. So per type, wrong_type + wrong_boundary + missed =
gold - correct.
"""
from structperc.chunks import chunk_spans

KINDS = ("wrong_type", "wrong_boundary", "missed", "spurious")


def phrase_errors(gold, predicted):
    """Phrase counts and errors of per-sentence label lists (IOB, IOBES: ``chunks.chunk_spans``).

    Returns
    -------
    dict with
        counts : {type: {"gold", "found", "correct"}}, the types sorted
        errors : {type: {kind: count}} for every type of counts and every kind of ``KINDS``
        records : one dict per error, in sentence order: sentence (index), kind, type, gold (the
            gold span [first, last] or None), predicted (a list of [type, first, last] spans: the
            overlapping predicted phrases; [] when missed)
    """
    counts, errors, records = {}, {}, []

    def count(kind_of_phrase, field):
        counts.setdefault(kind_of_phrase, {"gold": 0, "found": 0, "correct": 0})[field] += 1

    for s, (g, p) in enumerate(zip(gold, predicted)):
        gold_spans, predicted_spans = chunk_spans(g), chunk_spans(p)
        gold_set, predicted_set = set(gold_spans), set(predicted_spans)
        for span in gold_spans:
            count(span[0], "gold")
        for span in predicted_spans:
            count(span[0], "found")
            if span in gold_set:
                count(span[0], "correct")
        for kind_of_phrase, first, last in gold_spans:
            if (kind_of_phrase, first, last) in predicted_set:
                continue
            near = [q for q in predicted_spans if q[1] <= last and first <= q[2]]
            if not near:
                kind = "missed"
            elif any(q[1] == first and q[2] == last for q in near):
                kind = "wrong_type"
            else:
                kind = "wrong_boundary"
            records.append({"sentence": s, "kind": kind, "type": kind_of_phrase, "gold": [first, last],
                            "predicted": [list(q) for q in near]})
        for kind_of_phrase, first, last in predicted_spans:
            if not any(q[1] <= last and first <= q[2] for q in gold_spans):
                records.append({"sentence": s, "kind": "spurious", "type": kind_of_phrase, "gold": None,
                                "predicted": [[kind_of_phrase, first, last]]})
    types = sorted(counts)
    errors = {t: dict.fromkeys(KINDS, 0) for t in types}
    for record in records:
        errors[record["type"]][record["kind"]] += 1
    return {"counts": {t: counts[t] for t in types}, "errors": errors, "records": records}
