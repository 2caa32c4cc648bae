"""The decoders of a model, by name, and decoding a sentence or a corpus.

``DECODERS`` maps a decoder's name to the code that ``Layout.decoder`` stores; ``run_decoder`` is
the one dispatch on it, through the types of the layout's flags ``second_order`` and ``local`` (None
or True, from the code; ``flags.choose``): a kernel holds the code of its model's decoder only.
A decoder takes the first-order tables of ``scoring.sentence_scores`` (plus w, the layout and the
sentence, for second-order blocks and candidates) and returns (path int64 (n,), score). The
inference itself (``viterbi.py``, ``second_order.py``) sees scores only. A new decoder is its
inference file, a function here, a line in ``DECODERS``, and its case wherever the layout's flags are
read: ``records.layout_record`` (the flags), ``run_decoder`` here, and the k-best and marginal kernels
(``nbest.py``, ``marginals.py``), which dispatch on the same flags.
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..flags import choose
from ..score.scoring import (local_context_scores2, local_scores, second_order_scores, sentence_candidates,
                             sentence_scores)
from .second_order import viterbi2, viterbi2_context
from .viterbi import viterbi, viterbi_candidates
from ..threads import PARALLEL_FROM, over_blocks  # noqa: F401 (PARALLEL_FROM: the callers')

VITERBI, VITERBI2, MEMM, MEMM2 = range(4)
DECODERS = {"viterbi": VITERBI, "viterbi2": VITERBI2, "memm": MEMM, "memm2": MEMM2}


@njit(cache=True, inline="always")
def first_order_viterbi(layout, data, a, b, emission, transition, end):
    """First-order Viterbi of tokens [a, b) over their candidates when the data has a tag
    dictionary (|C_t| |C_{t-1}| per token), over every label pair otherwise."""
    return _first_order(data.dictionary, layout, data, a, b, emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def _first_order(dictionary, layout, data, a, b, emission, transition, end):
    """``first_order_viterbi`` on the type of the data's flag: without a tag dictionary (None),
    numba compiles no candidate code."""
    if dictionary is not None:
        if data.cand_offsets.shape[0] > 0:
            offsets, labels = sentence_candidates(layout, data, a, b)
            return viterbi_candidates(emission, transition, end, offsets, labels)
    return viterbi(emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def decode_viterbi(w, layout, data, a, b, scores):
    """First-order Viterbi (over the candidates of each token, with a tag dictionary)."""
    emission, transition, end = scores
    return first_order_viterbi(layout, data, a, b, emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def decode_viterbi2(w, layout, data, a, b, scores):
    """Second-order Viterbi over the candidates of each token."""
    emission, transition, end = scores
    transition2, offsets, labels = second_order_scores(w, layout, data, a, b, transition)
    return viterbi2(emission, transition2, end, offsets, labels)


@njit(cache=True, no_cpython_wrapper=True)
def decode_memm(w, layout, data, a, b, scores):
    """Best sum_t log P(y_t | y_{t-1}, x)."""
    emission, transition, end = local_scores(*scores)
    return first_order_viterbi(layout, data, a, b, emission, transition, end)


@njit(cache=True, no_cpython_wrapper=True)
def decode_memm2(w, layout, data, a, b, scores):
    """Best sum_t log P(y_t | y_{t-2}, y_{t-1}, x): each history normalized over the candidates of t."""
    emission, transition, end = scores
    transition2, offsets, labels = second_order_scores(w, layout, data, a, b, transition)
    context = local_context_scores2(emission, transition2, offsets, labels)
    return viterbi2_context(emission, transition2, context, np.zeros_like(end), offsets, labels)


@njit(cache=True, inline="always")
def run_decoder(w, layout, data, a, b, scores):
    """The decoder of ``layout.decoder`` on the tables ``scores`` = (emission, transition, end), chosen
    on the types of the layout's flags (None or True, ``flags.choose``) as numba compiles the caller:
    a kernel holds one decoder's code, and is compiled once per decoder that a model uses."""
    first_order = choose(layout.local, decode_viterbi, decode_memm)
    second_order = choose(layout.local, decode_viterbi2, decode_memm2)
    return choose(layout.second_order, first_order, second_order)(w, layout, data, a, b, scores)


@njit(cache=True)
def decode_sentence(w, layout, data, a, b, extra_emission):
    """Best labeling of tokens [a, b) and its score. ``extra_emission`` (n, L) or (0, L) is added
    to the emission scores (the Hamming cost of loss-augmented decoding)."""
    emission, transition, end = sentence_scores(w, layout, data, a, b)
    if extra_emission.shape[0] > 0:
        emission += extra_emission
    return run_decoder(w, layout, data, a, b, (emission, transition, end))


@njit(cache=True, nogil=True)
def decode_block(w, layout, data, lo, hi, labels, scores):
    """Decode sentences lo..hi-1 into ``labels`` (n_tokens,) and ``scores`` (n_sentences,)."""
    w, layout, data, labels, scores = borrowed((w, layout, data, labels, scores))
    sentence_offsets = data.sentence_offsets
    no_extra = np.zeros((0, layout.n_labels))
    for s in range(lo, hi):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        path, scores[s] = decode_sentence(w, layout, data, a, b, no_extra)
        for t in range(b - a):  # not labels[a:b] = path: its shape check compiles string code
            labels[a + t] = path[t]


def decode_corpus(w, layout, data, threads=None):
    """Best labels of every token (int64 (n_tokens,)) and score of every sentence, on ``threads``
    threads (None: numba's count) from ``threads.PARALLEL_FROM`` sentences on. Each sentence is
    decoded on its own, so the result does not depend on the threads."""
    sentence_offsets = data.sentence_offsets
    labels = np.zeros(sentence_offsets[-1], dtype=np.int64)
    scores = np.zeros(sentence_offsets.shape[0] - 1)
    over_blocks(lambda lo, hi: decode_block(w, layout, data, lo, hi, labels, scores), sentence_offsets, threads)
    return labels, scores
