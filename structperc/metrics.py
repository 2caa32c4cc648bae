"""Scores of predicted label sequences, under sklearn-crfsuite's names.

``from structperc import metrics`` stands in for ``from sklearn_crfsuite import metrics``:

- token level, scikit-learn's scores over the flattened tokens: ``flat_accuracy_score``,
  ``flat_precision_score``, ``flat_recall_score``, ``flat_f1_score``, ``flat_fbeta_score``,
  ``flat_classification_report``;
- sentence level: ``sequence_accuracy_score``;
- entity (chunk) level, seqeval's: ``entity_precision_score``, ``entity_recall_score``,
  ``entity_f1_score``, ``entity_classification_report``.

The functions live in ``structperc.evaluate.scorers``; scikit-learn and seqeval load on first call.
"""
from structperc.evaluate.scorers import (entity_classification_report, entity_f1_score, entity_precision_score,
                                         entity_recall_score, flat_accuracy_score, flat_classification_report,
                                         flat_f1_score, flat_fbeta_score, flat_precision_score, flat_recall_score,
                                         sequence_accuracy_score)

__all__ = [
    "entity_classification_report", "entity_f1_score", "entity_precision_score", "entity_recall_score",
    "flat_accuracy_score", "flat_classification_report", "flat_f1_score", "flat_fbeta_score",
    "flat_precision_score", "flat_recall_score", "sequence_accuracy_score",
]
