"""k-best labelings of every sentence of a corpus (exact, first-order), as flat arrays.

Per sentence the scores are built exactly as ``scoring.decode_sentence`` builds them (emission with
the tag dictionary, transitions plus pair features plus the mask penalty, end scores; MEMM models use
``local_log_probabilities``), then ``kbest.kbest_viterbi`` ranks the labelings.

Output layout (S sentences, C candidates in all)::

    candidate_offsets int64 (S + 1,)  candidates of sentence s are [candidate_offsets[s], candidate_offsets[s + 1]),
                                      best first; sentence s has min(k, #finite labelings) of them
    path_offsets      int64 (C + 1,)  labels of candidate j are paths[path_offsets[j]: path_offsets[j + 1]]
    paths             int64 (sum_j n_j,)  label ids
    scores            float64 (C,)    model score of each candidate (w · Φ for global models)
"""
import numpy as np
from numba import njit, prange

from .kbest import kbest_viterbi
from .scoring import LOCAL, emission_scores, end_scores, local_log_probabilities, transition_scores


@njit(cache=True)
def kbest_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids, a, b,
                   mask_penalty, cand_offsets, cand_labels, k):
    """(paths (k', b - a), scores (k',)) of tokens [a, b), best first; first-order models only."""
    emission = emission_scores(w, dims, feature_offsets, feature_ids, a, b, cand_offsets, cand_labels)
    transition = transition_scores(w, dims, pair_offsets, pair_ids, a, b, mask_penalty)
    end = end_scores(w, dims)
    if dims[LOCAL] == 1:
        transition = local_log_probabilities(emission, transition)
        emission = np.zeros_like(emission)
        end = np.zeros_like(end)
    return kbest_viterbi(emission, transition, end, k)


@njit(cache=True, parallel=True)
def kbest_corpus(w, dims, sentence_offsets, feature_offsets, feature_ids, pair_offsets, pair_ids,
                 mask_penalty, cand_offsets, cand_labels, k):
    """The k best labelings of every sentence: (candidate_offsets, path_offsets, paths, scores).

    Sentences are decoded in parallel into a slab with room for k candidates each (sentence s owns
    paths [k * a_s, k * b_s) and scores [k * s, k * (s + 1))), then compacted.
    """
    n_sentences = sentence_offsets.shape[0] - 1
    n_tokens = sentence_offsets[-1]
    slab_paths = np.empty(k * n_tokens, dtype=np.int64)
    slab_scores = np.empty(k * n_sentences)
    counts = np.zeros(n_sentences, dtype=np.int64)
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        paths, scores = kbest_sentence(w, dims, feature_offsets, feature_ids, pair_offsets, pair_ids,
                                       a, b, mask_penalty, cand_offsets, cand_labels, k)
        n = b - a
        m = paths.shape[0]
        counts[s] = m
        for j in range(m):
            slab_scores[k * s + j] = scores[j]
            for t in range(n):
                slab_paths[k * a + j * n + t] = paths[j, t]

    candidate_offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    for s in range(n_sentences):
        candidate_offsets[s + 1] = candidate_offsets[s] + counts[s]
    n_candidates = candidate_offsets[-1]
    path_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    for s in range(n_sentences):
        n = sentence_offsets[s + 1] - sentence_offsets[s]
        for j in range(candidate_offsets[s], candidate_offsets[s + 1]):
            path_offsets[j + 1] = path_offsets[j] + n
    paths = np.empty(path_offsets[-1], dtype=np.int64)
    scores = np.empty(n_candidates)
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        first = candidate_offsets[s]
        for j in range(counts[s]):
            scores[first + j] = slab_scores[k * s + j]
            start = path_offsets[first + j]
            for t in range(b - a):
                paths[start + t] = slab_paths[k * a + j * (b - a) + t]
    return candidate_offsets, path_offsets, paths, scores

