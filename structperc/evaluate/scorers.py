"""Scores of label sequences: sklearn-crfsuite's ``metrics`` on today's scikit-learn, seqeval's
entity-level scores beside them, and scorers for scikit-learn's model selection (``make_scorer``).

Every argument is a list of sentences, each a list of labels. The ``flat_*`` scores flatten them
into one token list and call scikit-learn's function of the same name, passing the options by
keyword (scikit-learn's are keyword-only since 1.0). The ``entity_*`` scores count chunks (BIO,
IOB1, BIOES labels) with seqeval, conlleval's way by default. scikit-learn and seqeval are
imported inside the functions: importing this module costs nothing.
"""
from structperc.errors import DataError


def _flat(sequences):
    return [label for labels in sequences for label in labels]


def _flat_pair(y_true, y_pred):
    """(flat gold labels, flat predicted labels); DataError (a ValueError) when the token counts differ."""
    true, pred = _flat(y_true), _flat(y_pred)
    if len(true) != len(pred):
        raise DataError(f"y_true has {len(true)} tokens, y_pred {len(pred)}")
    return true, pred


def _sentences(y):
    return [list(labels) for labels in y]


def flat_accuracy_score(y_true, y_pred):
    """Token accuracy (a fraction) over all tokens of all sentences; 0.0 without tokens."""
    true, pred = _flat_pair(y_true, y_pred)
    return sum(a == b for a, b in zip(true, pred)) / len(true) if true else 0.0


def flat_precision_score(y_true, y_pred, *, average="weighted", **options):
    """scikit-learn's ``precision_score`` over the tokens; ``options`` are its keywords (labels,
    zero_division, ...). ``average`` is "weighted" unless given (scikit-learn's "binary" does not
    apply to a tag set)."""
    from sklearn.metrics import precision_score

    return precision_score(*_flat_pair(y_true, y_pred), average=average, **options)


def flat_recall_score(y_true, y_pred, *, average="weighted", **options):
    """scikit-learn's ``recall_score`` over the tokens (options as ``flat_precision_score``)."""
    from sklearn.metrics import recall_score

    return recall_score(*_flat_pair(y_true, y_pred), average=average, **options)


def flat_f1_score(y_true, y_pred, *, average="weighted", **options):
    """scikit-learn's ``f1_score`` over the tokens (options as ``flat_precision_score``)."""
    from sklearn.metrics import f1_score

    return f1_score(*_flat_pair(y_true, y_pred), average=average, **options)


def flat_fbeta_score(y_true, y_pred, beta, *, average="weighted", **options):
    """scikit-learn's ``fbeta_score`` over the tokens (options as ``flat_precision_score``)."""
    from sklearn.metrics import fbeta_score

    return fbeta_score(*_flat_pair(y_true, y_pred), beta=beta, average=average, **options)


def flat_classification_report(y_true, y_pred, labels=None, **options):
    """scikit-learn's ``classification_report`` over the tokens: per label precision, recall, F1
    and support (a str, or a dict with ``output_dict=True``); ``options`` are its keywords
    (digits, target_names, zero_division, ...)."""
    from sklearn.metrics import classification_report

    return classification_report(*_flat_pair(y_true, y_pred), labels=labels, **options)


def sequence_accuracy_score(y_true, y_pred):
    """The fraction of sentences whose every label is right; 0.0 without sentences."""
    if len(y_true) != len(y_pred):
        raise DataError(f"y_true has {len(y_true)} sentences, y_pred {len(y_pred)}")
    if not len(y_true):
        return 0.0
    return sum(list(a) == list(b) for a, b in zip(y_true, y_pred)) / len(y_true)


def entity_precision_score(y_true, y_pred, **options):
    """Chunk (entity) precision, a fraction: seqeval's ``precision_score`` (options: average, mode,
    scheme, ...)."""
    from seqeval.metrics import precision_score

    return precision_score(_sentences(y_true), _sentences(y_pred), **options)


def entity_recall_score(y_true, y_pred, **options):
    """Chunk (entity) recall, a fraction: seqeval's ``recall_score``."""
    from seqeval.metrics import recall_score

    return recall_score(_sentences(y_true), _sentences(y_pred), **options)


def entity_f1_score(y_true, y_pred, **options):
    """Chunk (entity) F1, a fraction: seqeval's ``f1_score`` (conlleval's counts by default)."""
    from seqeval.metrics import f1_score

    return f1_score(_sentences(y_true), _sentences(y_pred), **options)


def entity_classification_report(y_true, y_pred, **options):
    """Per entity type precision, recall, F1 and support: seqeval's ``classification_report``
    (a str, or a dict with ``output_dict=True``; options: digits, mode, scheme, ...)."""
    from seqeval.metrics import classification_report

    return classification_report(_sentences(y_true), _sentences(y_pred), **options)


def chunk_f1_score(y_true, y_pred):
    """Chunk (entity) F1 of BIO label sequences, as conlleval counts it (seqeval), a fraction:
    ``entity_f1_score`` with seqeval's defaults, for ``make_scorer``."""
    return entity_f1_score(y_true, y_pred)
