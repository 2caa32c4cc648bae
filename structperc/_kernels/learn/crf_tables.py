"""What the CRF objective in probability space (``crf_scaled``) reads beside the weights: the
tables built once per fit from the data alone (the blocks of sentences, the usable sentences, the
gold counts, the feature occurrences by range of features) and the room its evaluations overwrite.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..score.emission import emission_index
from ..threads import token_blocks

# what scaled_objective reads beside the weights and the data: block_offsets int64 (B + 1,)
# (``sentence_blocks``), usable bool (S,) (``usable_sentences``), observed float64 (size,)
# (``observed_counts``), occurrence_offsets, occurrence_tokens, occurrence_features,
# occurrence_values (``feature_occurrences``), feature_ranges int64 (R + 1,) (``feature_ranges``);
# and what it overwrites: node float64 (n_tokens, L), block_sums float64 (B, (L + 2) L + 1),
# log_space bool (S,) (the sentences whose rescaling failed at this w), and the tables every sentence
# shares (``crf_scaled.boundary_tables``): transition float64 (1, L + 1, L) with the mask, exp_transition
# (L + 1, L), end (L,), exp_end (L,), tops (2,)
ScaledTables = namedtuple("ScaledTables", "block_offsets usable observed occurrence_offsets occurrence_tokens "
                                          "occurrence_features occurrence_values feature_ranges node block_sums "
                                          "log_space transition exp_transition end exp_end tops")


def scaled_tables_for(layout, data, usable, observed, tokens=None):
    """The ``ScaledTables`` of ``data``, from the tables of ``scaled_tables``; its blocks of about
    ``tokens`` tokens (``sentence_blocks``)."""
    n_tokens, n_labels = int(data.sentence_offsets[-1]), layout.n_labels
    blocks = sentence_blocks(data.sentence_offsets, tokens)
    counts = np.bincount(data.feature_ids, minlength=layout.n_features)
    ranges = feature_ranges(np.concatenate([[0], np.cumsum(counts)]))
    return ScaledTables(blocks, usable, observed, *feature_occurrences(data, ranges), ranges,
                        np.empty((n_tokens, n_labels)), np.empty((len(blocks) - 1, (n_labels + 2) * n_labels + 1)),
                        np.zeros(len(usable), dtype=np.bool_), np.empty((1, n_labels + 1, n_labels)),
                        np.empty((n_labels + 1, n_labels)), np.empty(n_labels), np.empty(n_labels), np.empty(2))


def feature_ranges(occurrence_offsets, ranges=None):
    """int64 (R + 1,): the features cut into ``ranges`` (None: ``FEATURE_RANGES``) consecutive
    ranges of about equal occurrences, the tasks of the emission gradient; from the data alone."""
    return token_blocks(occurrence_offsets, FEATURE_RANGES if ranges is None else ranges)


BLOCK_TOKENS = 1024  # tokens per block of sentences of ``scaled_objective`` (about)
FEATURE_RANGES = 8  # ranges of features of the emission gradient, one task each (any count gives the same sums)


def sentence_blocks(sentence_offsets, tokens=None):
    """int64 (B + 1,): consecutive sentences cut into blocks of about ``tokens`` tokens each
    (None: ``BLOCK_TOKENS``; a sentence is never split), from the data alone."""
    tokens = BLOCK_TOKENS if tokens is None else tokens
    offsets = np.asarray(sentence_offsets, dtype=np.int64)
    return token_blocks(offsets, -(-int(offsets[-1]) // tokens))


def scaled_applies(layout, data):
    """True when ``scaled_objective`` computes the objective of ``data``: first order, every label
    allowed at every token (no tag dictionary), no pair feature, every gold label known."""
    gold = data.gold
    return (layout.order == 1 and data.cand_offsets.shape[0] == 0 and data.pair_ids.shape[0] == 0
            and gold.shape[0] == data.feature_offsets.shape[0] - 1 and not (gold < 0).any())


@njit(cache=True)
def scaled_tables(layout, data):
    """(usable, observed): what ``scaled_objective`` reads beside the weights and the data, the
    same at every w (``usable_sentences``, ``observed_counts``)."""
    usable = usable_sentences(layout, data)
    return usable, observed_counts(layout, data, usable)


@njit(cache=True, inline="always")
def usable_sentences(layout, data):
    """bool (S,): the sentences with tokens whose gold labeling the transition mask allows (the
    others are skipped at every w, as their log P is -inf)."""
    n_labels = layout.n_labels
    mask = layout.mask_penalty
    offsets, gold = data.sentence_offsets, data.gold
    n_sentences = offsets.shape[0] - 1
    usable = np.zeros(n_sentences, dtype=np.bool_)
    for s in range(n_sentences):
        if offsets[s + 1] == offsets[s]:
            continue
        allowed = True
        prev = n_labels
        for i in range(offsets[s], offsets[s + 1]):
            if mask[prev, gold[i]] == -np.inf:
                allowed = False
                break
            prev = gold[i]
        usable[s] = allowed
    return usable


@njit(cache=True, inline="always")
def observed_counts(layout, data, usable):
    """float64 (size,): O = sum over the usable sentences of Φ(x_i, y_i), the gold counts."""
    n_labels = layout.n_labels
    observed = np.zeros(layout.size)
    offsets, gold = data.sentence_offsets, data.gold
    feature_offsets, feature_ids, values = data.feature_offsets, data.feature_ids, data.feature_values
    has_values = values.shape[0] > 0
    for s in range(offsets.shape[0] - 1):
        if not usable[s]:
            continue
        prev = n_labels
        for i in range(offsets[s], offsets[s + 1]):
            c = gold[i]
            for k in range(feature_offsets[i], feature_offsets[i + 1]):
                index = emission_index(layout, feature_ids[k], c)
                if index >= 0:
                    observed[index] += np.float64(values[k]) if has_values else 1.0
            observed[layout.off_trans + prev * n_labels + c] += 1.0
            prev = c
        observed[layout.off_end + prev] += 1.0
    return observed


@njit(cache=True)
def feature_occurrences(data, ranges):
    """(offsets int64 (R + 1,), tokens int32 (K,), features int32 (K,), values float32 (K,) or (0,)):
    the feature occurrences of ``data`` grouped by range of features (``ranges``, int64 (R + 1,)),
    each range's in token order: the task of a range reads its own occurrences only."""
    feature_offsets, feature_ids, values = data.feature_offsets, data.feature_ids, data.feature_values
    has_values = values.shape[0] > 0
    n_ranges = ranges.shape[0] - 1
    range_of = np.empty(ranges[-1], dtype=np.int32)
    for r in range(n_ranges):
        range_of[ranges[r]: ranges[r + 1]] = r
    offsets = np.zeros(n_ranges + 1, dtype=np.int64)
    for k in range(feature_ids.shape[0]):
        offsets[range_of[feature_ids[k]] + 1] += 1
    for r in range(n_ranges):
        offsets[r + 1] += offsets[r]
    filled = offsets[:-1].copy()
    tokens = np.empty(feature_ids.shape[0], dtype=np.int32)
    features = np.empty(feature_ids.shape[0], dtype=np.int32)
    sorted_values = np.empty(feature_ids.shape[0] if has_values else 0, dtype=np.float32)
    for t in range(feature_offsets.shape[0] - 1):
        for k in range(feature_offsets[t], feature_offsets[t + 1]):
            f = feature_ids[k]
            at = filled[range_of[f]]
            tokens[at], features[at] = t, f
            if has_values:
                sorted_values[at] = values[k]
            filled[range_of[f]] = at + 1
    return offsets, tokens, features, sorted_values
