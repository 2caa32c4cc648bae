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
from numba import njit

from ..borrow import borrowed
from .kbest import kbest_candidates, kbest_viterbi
from ..score.scoring import decoder_tables, sentence_candidates, sentence_scores
from ..threads import over_blocks


@njit(cache=True)
def kbest_sentence(w, layout, data, a, b, k):
    """(paths (k', b - a), scores (k',)) of tokens [a, b), best first; first-order models only.
    With a tag dictionary only the labelings inside the candidate sets are ranked."""
    emission, transition, end = decoder_tables(layout.local, *sentence_scores(w, layout, data, a, b))
    return _kbest(data.dictionary, layout, data, a, b, k, (emission, transition, end))


@njit(cache=True, no_cpython_wrapper=True)
def _kbest(dictionary, layout, data, a, b, k, scores):
    """``kbest_sentence``'s ranking on the type of the data's flag: without a tag dictionary (None),
    numba compiles no candidate code. scores : (emission, transition, end)."""
    emission, transition, end = scores
    if dictionary is not None:
        if data.cand_offsets.shape[0] > 0:
            offsets, labels = sentence_candidates(layout, data, a, b)
            return kbest_candidates(emission, transition, end, k, offsets, labels)
    return kbest_viterbi(emission, transition, end, k)


@njit(cache=True, nogil=True)
def kbest_block(w, layout, data, k, lo, hi, slab):
    """The k best labelings of sentences lo..hi-1 into ``slab`` = (slab_paths, slab_scores, counts),
    with room for k candidates each: sentence s owns paths [k * a_s, k * b_s) (candidate j at
    k * a_s + j * n_s) and scores [k * s, k * (s + 1)); counts[s] is its number of candidates."""
    w, layout, data, slab = borrowed((w, layout, data, slab))
    slab_paths, slab_scores, counts = slab
    sentence_offsets = data.sentence_offsets
    for s in range(lo, hi):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        paths, scores = kbest_sentence(w, layout, data, a, b, k)
        n = b - a
        m = paths.shape[0]
        counts[s] = m
        for j in range(m):
            slab_scores[k * s + j] = scores[j]
            for t in range(n):
                slab_paths[k * a + j * n + t] = paths[j, t]


def kbest_corpus(w, layout, data, k, threads=None):
    """The k best labelings of every sentence: (candidate_offsets, path_offsets, paths, scores).

    Sentences are decoded into the slab of ``kbest_block`` (on ``threads`` threads, None: numba's
    count, from ``threads.PARALLEL_FROM`` sentences on), then compacted.
    """
    sentence_offsets = data.sentence_offsets
    n_sentences = sentence_offsets.shape[0] - 1
    slab_paths = np.empty(k * sentence_offsets[-1], dtype=np.int64)
    slab_scores = np.empty(k * n_sentences)
    counts = np.zeros(n_sentences, dtype=np.int64)
    slab = (slab_paths, slab_scores, counts)
    over_blocks(lambda lo, hi: kbest_block(w, layout, data, k, lo, hi, slab),
                sentence_offsets, threads)
    candidate_offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    np.cumsum(counts, out=candidate_offsets[1:])
    sentence = np.repeat(np.arange(n_sentences), counts)  # the sentence of each candidate
    rank = np.arange(len(sentence)) - candidate_offsets[sentence]
    lengths = np.diff(sentence_offsets)[sentence]
    path_offsets = np.zeros(len(sentence) + 1, dtype=np.int64)
    np.cumsum(lengths, out=path_offsets[1:])
    scores = slab_scores[k * sentence + rank]
    # candidate j of sentence s is slab_paths[k * a_s + j * n_s:][:n_s]
    starts = k * sentence_offsets[sentence] + rank * lengths
    paths = slab_paths[np.repeat(starts - path_offsets[:-1], lengths) + np.arange(path_offsets[-1])]
    return candidate_offsets, path_offsets, paths, scores
