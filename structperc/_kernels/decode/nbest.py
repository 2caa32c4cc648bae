"""k-best labelings of every sentence of a corpus (exact, first-order), as flat arrays.

Per sentence the tables are those of ``scoring.sentence_scores`` (normalized by ``scoring.local_scores``
for a first-order MEMM, as its decoder does), then ``kbest.kbest_viterbi`` ranks the labelings.

Output layout (S sentences, C candidates in all)::

    candidate_offsets int64 (S + 1,)  candidates of sentence s are [candidate_offsets[s], candidate_offsets[s + 1]),
                                      best first; sentence s has min(k, #finite labelings) of them
    path_offsets      int64 (C + 1,)  labels of candidate j are paths[path_offsets[j]: path_offsets[j + 1]]
    paths             int64 (sum_j n_j,)  label ids
    scores            float64 (C,)    model score of each candidate (w · Φ for global models)
"""
import numpy as np
from numba import njit, prange

from .decoders import MEMM
from .kbest import kbest_candidates, kbest_viterbi
from ..score.scoring import local_scores, sentence_candidates, sentence_scores


@njit(cache=True)
def kbest_sentence(w, layout, data, a, b, k):
    """(paths (k', b - a), scores (k',)) of tokens [a, b), best first; first-order models only.
    With a tag dictionary only the labelings inside the candidate sets are ranked."""
    emission, transition, end = sentence_scores(w, layout, data, a, b)
    if layout.decoder == MEMM:
        emission, transition, end = local_scores(emission, transition, end)
    if data.cand_offsets.shape[0] > 0:
        offsets, labels = sentence_candidates(layout, data, a, b)
        return kbest_candidates(emission, transition, end, k, offsets, labels)
    return kbest_viterbi(emission, transition, end, k)


@njit(cache=True, parallel=True)
def kbest_corpus(w, layout, data, k):
    """The k best labelings of every sentence: (candidate_offsets, path_offsets, paths, scores).

    Sentences are decoded in parallel into a slab with room for k candidates each (sentence s owns
    paths [k * a_s, k * b_s) and scores [k * s, k * (s + 1))), then compacted.
    """
    sentence_offsets = data.sentence_offsets
    n_sentences = sentence_offsets.shape[0] - 1
    n_tokens = sentence_offsets[-1]
    slab_paths = np.empty(k * n_tokens, dtype=np.int64)
    slab_scores = np.empty(k * n_sentences)
    counts = np.zeros(n_sentences, dtype=np.int64)
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        paths, scores = kbest_sentence(w, layout, data, a, b, k)
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

