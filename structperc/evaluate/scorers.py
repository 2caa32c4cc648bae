"""Scores of label sequences for scikit-learn's model selection (``make_scorer``).

``cross_val_score``, ``GridSearchCV`` and ``RandomizedSearchCV`` call a metric with lists of label
lists; these flatten them, as sklearn-crfsuite's ``metrics`` do, or score chunks with seqeval.
"""
from structperc.errors import DataError


def _flat(sequences):
    return [label for labels in sequences for label in labels]


def flat_accuracy_score(y_true, y_pred):
    """Token accuracy (a fraction) over all tokens of all sentences."""
    true, pred = _flat(y_true), _flat(y_pred)
    if len(true) != len(pred):
        raise DataError(f"y_true has {len(true)} tokens, y_pred {len(pred)}")
    return sum(a == b for a, b in zip(true, pred)) / len(true) if true else 0.0


def flat_f1_score(y_true, y_pred, average="weighted", labels=None):
    """scikit-learn's ``f1_score`` over the flattened tokens (labels: None, all of y_true and y_pred)."""
    from sklearn.metrics import f1_score

    return f1_score(_flat(y_true), _flat(y_pred), average=average, labels=labels, zero_division=0)


def chunk_f1_score(y_true, y_pred):
    """Chunk (entity) F1 of BIO label sequences, as conlleval counts it (seqeval), a fraction."""
    from seqeval.metrics import f1_score

    return f1_score([list(s) for s in y_true], [list(s) for s in y_pred])
