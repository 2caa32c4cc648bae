"""The layout a model takes when its user names none: which (feature, label) pairs get a weight,
and whether a tag dictionary restricts each word's labels.

A small label set (chunking, NER, the 17 UPOS tags, the ~50 PTB tags) keeps today's layout: a
weight for every pair and no tag dictionary. From ``MANY_LABELS`` labels on, every-pair weights
cost F x L memory, so the model keeps only the pairs seen in training plus every label for the
frequent features (the dense count), and words seen at least ``TAG_DICT`` times take only the
labels they were seen with: decoding visits |C_t| |C_t-1| label pairs instead of L². On
en_ewt-ud-dev (321 labels) a low threshold loses accuracy (k = 1: -5.2 points: a word seen once is
then never a training mistake, so the affix features of rare words never learn; k = 5: -0.37),
k = 20 loses 0.08 and k = 50 0.10 against no dictionary. ``benchmarks/layouts.md`` gives the
measurements behind the numbers below.
"""
from collections import namedtuple

import numpy as np

# labels from which the layout is chosen for the data: above every POS or chunk tag set
MANY_LABELS = 100
# a feature seen at least this many times per DENSE_TOKENS training tokens keeps every label
# (50 chosen on en_ewt-ud-dev for a model trained on en_ewt-ud-train: benchmarks/labels.md); it scales with the
# corpus so that the same share of features stays dense
DENSE_COUNT = 50
DENSE_TOKENS = 204_577  # en_ewt-ud-train, where 50 was chosen
# words seen at least this many times may take only the labels they were seen with (see above)
TAG_DICT = 20

Layout = namedtuple("Layout", "all_pairs dense_count tag_dict auto n_labels")
Layout.__doc__ = """The layout chosen for a run: all_pairs (bool), dense_count (None or K), tag_dict (None or K),
auto (the names chosen here rather than given) and the n_labels it was chosen for."""


def choose_layout(n_labels, n_tokens, given, words=True):
    """The layout of a model of ``n_labels`` labels trained on ``n_tokens`` tokens.

    Parameters
    ----------
    n_labels, n_tokens : int
    given : dict with all_pairs (None, True or False), dense_count (None or K >= 1) and tag_dict
        (None, 0 for none, or K >= 1) as the user set them; None is "not set".
    words : False when the features read no word column (feature dicts): no tag dictionary then.

    Returns
    -------
    Layout
        The given values where set; the choice for the data elsewhere. A dense count alone implies
        gold pairs; gold or all pairs given without a dense count keep none.
    """
    all_pairs, dense_count, tag_dict = given.get("all_pairs"), given.get("dense_count"), given.get("tag_dict")
    many = n_labels >= MANY_LABELS
    auto = []
    if all_pairs is None and dense_count is None:
        all_pairs = not many
        if many:
            dense_count = max(DENSE_COUNT, round(DENSE_COUNT * n_tokens / DENSE_TOKENS))
        auto += ["all_pairs", "dense_count"]
    elif all_pairs is None:
        all_pairs = False
    if tag_dict is None:
        tag_dict = TAG_DICT if many and words else None
        auto.append("tag_dict")
    return Layout(bool(all_pairs), dense_count, tag_dict or None, tuple(auto), int(n_labels))


def describe_layout(layout):
    """One line: "gold pairs, dense count 50, tag dict 1 (auto: 321 labels)"."""
    if layout.all_pairs:
        parts = ["all pairs"]
    else:
        parts = ["gold pairs"] + ([f"dense count {layout.dense_count}"] if layout.dense_count else [])
    parts.append(f"tag dict {layout.tag_dict}" if layout.tag_dict else "no tag dict")
    text = ", ".join(parts)
    if layout.auto:
        text += f" (auto: {layout.n_labels} labels)"
    return text


def layout_metadata(layout):
    """The JSON record of a chosen layout kept in the model's metadata (``info`` shows its text)."""
    return {"all_pairs": layout.all_pairs, "dense_count": layout.dense_count, "tag_dict": layout.tag_dict,
            "auto": list(layout.auto), "text": describe_layout(layout)}


def build_tag_dict(word_ids, labels, n_words, n_labels, threshold):
    """Allowed labels per word id: words seen at least ``threshold`` times may only take the labels
    they were seen with; every other word id may take all labels, written as an empty row (so that
    a high threshold costs no memory per rare word). Returns CSR (offsets, labels)."""
    counts = np.bincount(word_ids, minlength=n_words)
    allowed = np.zeros((n_words, n_labels), dtype=bool)
    allowed[word_ids, labels] = True
    allowed[counts < threshold] = False
    offsets = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(allowed.sum(axis=1), out=offsets[1:])
    return offsets, np.nonzero(allowed)[1].astype(np.int64)
