"""The decoders of a model, by name, and decoding a sentence or a corpus.

``DECODERS`` maps a decoder's name to the code that ``Layout.decoder`` stores; ``run_decoder`` is
the one dispatch on that code. A decoder takes the first-order tables of ``scoring.sentence_scores``
(plus w, the layout and the sentence, for second-order blocks and candidates) and returns
(path int64 (n,), score). The inference itself (``viterbi.py``, ``second_order.py``) sees scores
only. A new decoder is its inference file, a function here and a line in ``DECODERS``.
"""
import numpy as np
from numba import njit, prange

from ..score.scoring import (local_context_scores2, local_scores, second_order_scores, sentence_candidates,
                             sentence_scores)
from .second_order import viterbi2, viterbi2_context
from .viterbi import viterbi, viterbi_candidates

VITERBI, VITERBI2, MEMM, MEMM2 = range(4)
DECODERS = {"viterbi": VITERBI, "viterbi2": VITERBI2, "memm": MEMM, "memm2": MEMM2}


@njit(cache=True)
def first_order_viterbi(layout, data, a, b, emission, transition, end):
    """First-order Viterbi of tokens [a, b) over their candidates when the data has a tag
    dictionary (|C_t| |C_{t-1}| per token), over every label pair otherwise."""
    if data.cand_offsets.shape[0] > 0:
        offsets, labels = sentence_candidates(layout, data, a, b)
        return viterbi_candidates(emission, transition, end, offsets, labels)
    return viterbi(emission, transition, end)


@njit(cache=True)
def decode_viterbi(w, layout, data, a, b, scores):
    """First-order Viterbi (over the candidates of each token, with a tag dictionary)."""
    emission, transition, end = scores
    return first_order_viterbi(layout, data, a, b, emission, transition, end)


@njit(cache=True)
def decode_viterbi2(w, layout, data, a, b, scores):
    """Second-order Viterbi over the candidates of each token."""
    emission, transition, end = scores
    transition2, offsets, labels = second_order_scores(w, layout, data, a, b, transition)
    return viterbi2(emission, transition2, end, offsets, labels)


@njit(cache=True)
def decode_memm(w, layout, data, a, b, scores):
    """Best sum_t log P(y_t | y_{t-1}, x)."""
    emission, transition, end = local_scores(*scores)
    return first_order_viterbi(layout, data, a, b, emission, transition, end)


@njit(cache=True)
def decode_memm2(w, layout, data, a, b, scores):
    """Best sum_t log P(y_t | y_{t-2}, y_{t-1}, x): each history normalized over the candidates of t."""
    emission, transition, end = scores
    transition2, offsets, labels = second_order_scores(w, layout, data, a, b, transition)
    context = local_context_scores2(emission, transition2, offsets, labels)
    return viterbi2_context(emission, transition2, context, np.zeros_like(end), offsets, labels)


@njit(cache=True)
def run_decoder(w, layout, data, a, b, scores):
    """The decoder of ``layout.decoder`` on the tables ``scores`` = (emission, transition, end)."""
    decoder = layout.decoder
    if decoder == VITERBI2:
        return decode_viterbi2(w, layout, data, a, b, scores)
    if decoder == MEMM:
        return decode_memm(w, layout, data, a, b, scores)
    if decoder == MEMM2:
        return decode_memm2(w, layout, data, a, b, scores)
    return decode_viterbi(w, layout, data, a, b, scores)


@njit(cache=True)
def decode_sentence(w, layout, data, a, b, extra_emission):
    """Best labeling of tokens [a, b) and its score. ``extra_emission`` (n, L) or (0, L) is added
    to the emission scores (the Hamming cost of loss-augmented decoding)."""
    emission, transition, end = sentence_scores(w, layout, data, a, b)
    if extra_emission.shape[0] > 0:
        emission += extra_emission
    return run_decoder(w, layout, data, a, b, (emission, transition, end))


@njit(cache=True)
def decode_range(w, layout, data, lo, hi, labels, scores):
    """Decode sentences lo..hi-1 into ``labels`` (n_tokens,) and ``scores`` (n_sentences,)."""
    sentence_offsets = data.sentence_offsets
    no_extra = np.zeros((0, layout.n_labels))
    for s in range(lo, hi):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        path, score = decode_sentence(w, layout, data, a, b, no_extra)
        labels[a:b] = path
        scores[s] = score


@njit(cache=True)
def decode_corpus_serial(w, layout, data):
    """``decode_corpus`` in the calling thread."""
    n_sentences = data.sentence_offsets.shape[0] - 1
    labels = np.zeros(data.sentence_offsets[-1], dtype=np.int64)
    scores = np.zeros(n_sentences)
    decode_range(w, layout, data, 0, n_sentences, labels, scores)
    return labels, scores


@njit(cache=True)
def decode_corpus_first_order(w, layout, data):
    """``decode_corpus_serial`` of a first-order Viterbi model (``layout.decoder`` VITERBI) only.
    The other decoders' code stays out of this kernel, so that it loads from numba's cache in a
    fraction of the time: most of the start-up of tagging a small file."""
    sentence_offsets = data.sentence_offsets
    n_sentences = sentence_offsets.shape[0] - 1
    labels = np.zeros(sentence_offsets[-1], dtype=np.int64)
    scores = np.zeros(n_sentences)
    for s in range(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        path, scores[s] = decode_viterbi(w, layout, data, a, b, sentence_scores(w, layout, data, a, b))
        labels[a:b] = path
    return labels, scores


@njit(cache=True, parallel=True)
def decode_corpus_parallel(w, layout, data):
    """``decode_corpus`` on numba's threads, one sentence at a time."""
    n_sentences = data.sentence_offsets.shape[0] - 1
    labels = np.zeros(data.sentence_offsets[-1], dtype=np.int64)
    scores = np.zeros(n_sentences)
    for s in prange(n_sentences):
        decode_range(w, layout, data, s, s + 1, labels, scores)
    return labels, scores


# Below this many sentences, decoding runs in the calling thread: starting numba's thread pool
# (loading its threading layer) costs more than a small batch takes to decode.
PARALLEL_FROM = 64


def decode_corpus(w, layout, data):
    """Best labels of every token (int64 (n_tokens,)) and score of every sentence. Each sentence is
    decoded on its own, so the serial and the parallel kernel give the same result."""
    if data.sentence_offsets.shape[0] - 1 < PARALLEL_FROM:
        if layout.decoder == VITERBI:
            return decode_corpus_first_order(w, layout, data)
        return decode_corpus_serial(w, layout, data)
    return decode_corpus_parallel(w, layout, data)
