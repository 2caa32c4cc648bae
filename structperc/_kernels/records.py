"""The two records every model kernel takes: the encoded data and the layout of the weights.

A numba kernel receives a named tuple as one struct of arrays and scalars, so ``Data`` and
``Layout`` replace the dozen positional arrays a kernel would otherwise take; a new per-token array
(feature values, label masks) is a new field here and in its builder, not a new parameter of every
kernel.

Data (N tokens in S sentences)::

    sentence_offsets  int64 (S + 1,)  sentence s is tokens [sentence_offsets[s], sentence_offsets[s + 1])
    feature_offsets   int64 (N + 1,)  emission features of token i:
    feature_ids       int32 (nnz,)        feature_ids[feature_offsets[i]: feature_offsets[i + 1]]
    feature_values    float32 (nnz,)  the real value of each feature occurrence (emission[t, c] gains
                                          value times the weight of (f, c)); empty: every value is 1.0
    pair_offsets      int64 (N + 1,)  pair features of token i (conjoined with the label transition),
    pair_ids          int32 (nnz_pair,)   the same CSR layout; both empty when no pair feature fires
    gold              int64 (N,)      gold label ids, or empty when decoding
    cand_offsets      int64 (N + 1,)  labels allowed at token i (the tag dictionary):
    cand_labels       int64               cand_labels[cand_offsets[i]: cand_offsets[i + 1]], ascending;
                                          an empty row: every label at that token;
                                          empty cand_offsets: every label everywhere
    dictionary        None or True: True runs the decoders and marginals over the candidate sets
                          (a tag dictionary); None over every label pair, the candidates (when
                          cand_offsets is not empty: labels forced at decoding) applied by the
                          -inf emission scores of ``scoring.emission_scores`` alone
    partial           None, or True when some gold label is -1 (unlabelled), for the kernels of the
                          CRF's likelihood (``with_partial_labels``)

``dictionary`` and ``partial`` are flags for numba, which compiles a kernel for their types (None or
bool): a branch for a tag dictionary or partial labels tested on a None flag is pruned before
compiling, so a corpus without them compiles none of that code. True means "look at the arrays".
``data_record`` leaves ``partial`` None: only the CRF's step counts (``crf.step_counts``) differ for
unlabelled tokens, and the flag's type would compile a second version of every other kernel that
takes the data (decoding, the other learners) for partially labelled data.

Layout of the flat weight vector w (L labels, F emission features, P pair features)::

    w[f * L + c]                              emission: feature f with label c (all pairs), or
    w[k] for k in [emission_offsets[f], emission_offsets[f + 1])   only the feature-label pairs of
                                              the model, labels ascending: a row with all L labels
                                              holds c at k = emission_offsets[f] + c; another row's
                                              labels are listed in emission_labels (see below)
    w[off_trans + p * L + c]                  transition p -> c; p == L is the start state
    w[off_end + c]                            finishing on c
    w[off_pair + (g * (L + 1) + p) * L + c]   pair feature g with the transition p -> c
    w[off_trans2 + (q * (L + 1) + p) * L + c] second order: q, p -> c (q or p == L: start)

Groups (the reranker's candidates: G groups, R rows)::

    group_offsets     int64 (G + 1,)  rows of group g: [group_offsets[g], group_offsets[g + 1])
    row_offsets       int64 (R + 1,)  features of row j: feature_ids / values[row_offsets[j]: row_offsets[j + 1]]
    feature_ids       int64
    values            float64
    targets           float64 (R,)    task score of each row (higher is better)
    best              int64 (G,)      the row of each group with the best target

``emission_offsets`` int64 (F + 1,) gives the pairs of each feature (CRFsuite's "possible states";
E = emission_offsets[F] weights). A row with every label stores no label list; the others list their
labels, ascending, one after the other in ``emission_labels`` int32, and feature f's list starts at
emission_offsets[f] - L * emission_full_before[f], where ``emission_full_before`` int32 (F + 1,)
counts the rows with every label before f. All three are empty when every feature has a weight for
every label (E = F L). ``emission.py`` holds the only code that reads them.
``size`` is the length of w, ``decoder`` the code of the decoder in ``decoders.DECODERS``,
``second_order`` and ``local`` True for a second-order or a locally normalized decoder and None
otherwise (their types select the decoder's code when numba compiles a kernel: ``decoders.run_decoder``), and
``mask_penalty`` (L + 1, L) is 0 for an allowed transition and -inf for a forbidden one.
"""
from collections import namedtuple

import numpy as np

Data = namedtuple("Data", "sentence_offsets feature_offsets feature_ids pair_offsets pair_ids gold "
                          "cand_offsets cand_labels feature_values dictionary partial")
Groups = namedtuple("Groups", "group_offsets row_offsets feature_ids values targets best")
Layout = namedtuple("Layout", "n_labels n_features n_pair order decoder off_trans off_end off_pair "
                              "off_trans2 size mask_penalty emission_offsets emission_labels "
                              "emission_full_before second_order local")

_EMPTY = np.zeros(0, dtype=np.int64)
_NO_IDS = np.zeros(0, dtype=np.int32)
ALL_PAIRS = (_EMPTY, _NO_IDS)
NO_VALUES = np.zeros(0, dtype=np.float32)


def data_record(encoded, candidates=(_EMPTY, _EMPTY), over_candidates=None):
    """The ``Data`` of an EncodedCorpus; ``candidates`` is (cand_offsets, cand_labels). An encoded
    corpus without ``feature_values`` (or with None) is all binary. over_candidates : None (when
    there are candidates), True or False: the ``dictionary`` flag."""
    gold = encoded.labels if encoded.labels is not None else _EMPTY
    cand_offsets, cand_labels = candidates
    pair_offsets, pair_ids = encoded.pair_offsets, encoded.pair_ids
    if len(pair_ids) == 0:
        pair_offsets, pair_ids = _EMPTY, _NO_IDS
    values = getattr(encoded, "feature_values", None)
    values = NO_VALUES if values is None else np.ascontiguousarray(values, dtype=np.float32)
    if over_candidates is None:
        over_candidates = len(cand_offsets) > 0
    return Data(encoded.sentence_offsets, encoded.feature_offsets, np.asarray(encoded.feature_ids, dtype=np.int32),
                pair_offsets, np.asarray(pair_ids, dtype=np.int32), gold, cand_offsets, cand_labels, values,
                True if over_candidates else None, None)


def with_partial_labels(data):
    """``data`` as the CRF's likelihood kernels take it: ``partial`` True when some gold label is -1
    (unlabelled), else None."""
    gold = data.gold
    return data._replace(partial=True if len(gold) and np.any(gold < 0) else None)


def layout_record(n_labels, n_features, n_pair, order, decoder, mask_penalty, emission_pairs=ALL_PAIRS):
    """The ``Layout`` of a model of ``order`` 1 or 2 decoded by the decoder of code ``decoder``;
    ``emission_pairs`` is (emission_offsets, emission_labels) with the label lists of the rows that
    lack some label only (``emission.compact_labels``), empty arrays for all pairs."""
    from .decode.decoders import MEMM, MEMM2, VITERBI2
    from .score.emission import full_rows_before

    emission_offsets, emission_labels = emission_pairs
    transition_size = (n_labels + 1) * n_labels
    off_trans = int(emission_offsets[-1]) if len(emission_offsets) else n_features * n_labels
    full_before = full_rows_before(emission_offsets, n_labels) if len(emission_offsets) else _NO_IDS
    off_end = off_trans + transition_size
    off_pair = off_end + n_labels
    off_trans2 = off_pair + n_pair * transition_size
    size = off_trans2 + ((n_labels + 1) * transition_size if order == 2 else 0)
    return Layout(int(n_labels), int(n_features), int(n_pair), int(order), int(decoder), int(off_trans),
                  int(off_end), int(off_pair), int(off_trans2), int(size), mask_penalty,
                  np.asarray(emission_offsets, dtype=np.int64), np.asarray(emission_labels, dtype=np.int32),
                  full_before, True if decoder in (VITERBI2, MEMM2) else None,
                  True if decoder in (MEMM, MEMM2) else None)
