"""Per-tag scores of a token task: precision, recall, F1 and support of every tag, and the confusion
matrix with its largest confusions first. scikit-learn computes them
(``precision_recall_fscore_support``, ``confusion_matrix``)."""
import numpy as np


def tag_scores(gold, predicted, labels=None):
    """Per-tag scores in percent and the confusion matrix of flat label sequences.

    Parameters
    ----------
    gold, predicted : sequences of str, one label per token
    labels : the rows and columns of the matrix, in order; None: every label of gold and predicted, sorted

    Returns
    -------
    dict with
        per_type : {tag: {precision, recall, f1, support}} (support: the gold tokens of the tag)
        confusion : {"labels": [...], "matrix": [[int]]}, matrix[i][j] the tokens of gold labels[i]
            predicted labels[j]
        confusions : [(gold, predicted, count)] of the off-diagonal cells that are not zero, the largest
            first (ties: in the order of labels)
    """
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    gold, predicted = list(gold), list(predicted)
    if labels is None:
        labels = sorted(set(gold) | set(predicted))
    labels = list(labels)
    if not gold:
        return {"per_type": {}, "confusion": {"labels": labels, "matrix": [[0] * len(labels) for _ in labels]},
                "confusions": []}
    p, r, f, support = precision_recall_fscore_support(gold, predicted, labels=labels, average=None,
                                                       zero_division=0)
    per_type = {label: {"precision": 100 * float(p[i]), "recall": 100 * float(r[i]), "f1": 100 * float(f[i]),
                        "support": int(support[i])} for i, label in enumerate(labels)}
    matrix = confusion_matrix(gold, predicted, labels=labels)
    return {"per_type": per_type, "confusion": {"labels": labels, "matrix": matrix.tolist()},
            "confusions": largest_confusions(matrix, labels)}


def largest_confusions(matrix, labels):
    """[(row label, column label, count)] of the nonzero off-diagonal cells, the largest first."""
    matrix = np.asarray(matrix)
    off = matrix.copy()
    np.fill_diagonal(off, 0)
    rows, cols = np.nonzero(off)
    order = np.lexsort((cols, rows, -off[rows, cols]))
    return [(labels[rows[k]], labels[cols[k]], int(off[rows[k], cols[k]])) for k in order]
