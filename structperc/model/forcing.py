"""Known labels: unlabelled training tokens and labels forced at prediction time.

A token of the missing symbol is unlabelled (gold id -1); a forced label is checked against the
model's labels and its transition constraint, with errors naming file:line.
"""
import numpy as np

from structperc.errors import DataError, InputFormatError


def drop_missing_label(encoder, encoded, missing_label):
    """Unlabelled tokens: remove ``missing_label`` from the encoder's labels and give its tokens
    the gold id -1 (the later labels move down by one; labels stay in sorted order)."""
    if missing_label not in encoder.labels_:
        return
    missing = encoder.labels_.index(missing_label)
    encoder.labels_.remove(missing_label)
    if not encoder.labels_:
        raise DataError(f"every training token has the missing label {missing_label!r}")
    gold = encoded.labels
    gold[gold == missing] = -1
    gold[gold > missing] -= 1


def forced_label_ids(model, forced, missing_label, path="<forced>", line_numbers=None):
    """int64 (n_tokens,) label ids of a forced-label column (flat list of str or None), -1 where the
    label is free (None or ``missing_label``).

    Raises InputFormatError naming path:line (or the token number) for a label the model does not
    know. The transition constraint is checked by ``check_forced``."""
    index = {label: i for i, label in enumerate(model.labels)}
    ids = np.full(len(forced), -1, dtype=np.int64)
    for i, label in enumerate(forced):
        if label is None or label == missing_label:
            continue
        if label not in index:
            raise _forced_error(path, line_numbers, i, f"forced label {label!r} is not a label of the model")
        ids[i] = index[label]
    return ids


def sentence_forced_ids(model, sentence_offsets, forced, missing_label):
    """Label ids (n_tokens,) of ``forced``: per sentence a list of labels, one per token, or None for
    a free sentence; a token's None or ``missing_label`` is free (-1). Checked against the sentence
    lengths and the model (``check_forced``)."""
    o = sentence_offsets
    if len(forced) != len(o) - 1:
        raise DataError(f"forced has {len(forced)} sentences, X has {len(o) - 1}")
    flat = []
    for i, labels in enumerate(forced):
        n = int(o[i + 1] - o[i])
        labels = [None] * n if labels is None else list(labels)
        if len(labels) != n:
            raise DataError(f"forced sentence {i} has {len(labels)} labels, X has {n} tokens")
        flat.extend(labels)
    ids = forced_label_ids(model, flat, missing_label)
    check_forced(model, ids, o)
    return ids


def check_forced(model, ids, sentence_offsets, path="<forced>", line_numbers=None):
    """InputFormatError when the transition constraint forbids a forced label after the start of
    its sentence or after the forced label of the token before it."""
    penalty = model.mask_penalty
    start = model.n_labels
    first = np.zeros(len(ids), dtype=bool)
    first[sentence_offsets[:-1][np.diff(sentence_offsets) > 0]] = True
    prev = np.concatenate([[start], ids[:-1]])
    prev[first] = start
    forbidden = penalty[np.where(prev < 0, start, prev), np.maximum(ids, 0)] == -np.inf
    bad = np.flatnonzero((ids >= 0) & (prev != -1) & forbidden)
    if len(bad):
        i = int(bad[0])
        after = "at the start of a sentence" if prev[i] == start else f"after {model.labels[prev[i]]!r}"
        raise _forced_error(path, line_numbers, i, f"forced label {model.labels[ids[i]]!r} is not allowed {after} "
                                                   f"(constraint {model.constrain!r})")


def _forced_error(path, line_numbers, i, message):
    if line_numbers is not None and len(line_numbers) > i and line_numbers[i] > 0:
        return InputFormatError(path, int(line_numbers[i]), message)
    return InputFormatError(path, None, f"token {i + 1}: {message}")
