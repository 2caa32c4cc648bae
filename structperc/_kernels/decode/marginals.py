"""Label marginals of a probabilistic model over a corpus: the CRF's forward-backward or the
MEMM's forward recursion over its local distributions, picked by the model's decoder."""
import numpy as np
from numba import njit

from ..borrow import borrowed
from ..learn.crf import crf_sentence_marginals
from .decoders import decode_sentence
from ..learn.memm import memm_sentence_marginals
from ..threads import over_blocks


@njit(cache=True, no_cpython_wrapper=True)
def sentence_marginals(local, w, layout, data, a, b, best):
    """Node marginals (n, L) of tokens [a, b) and log P(ŷ | x) of the labeling ŷ of score ``best``.

    A locally normalized model (``local`` True, the layout's flag: numba compiles one branch) scores
    ŷ by sum_t log P(y_t | history, x), which is log P(ŷ | x) already; a CRF's score is w · Φ(x, ŷ),
    from which log Z(x) is taken."""
    if local is None:
        node, log_z = crf_sentence_marginals(w, layout, data, a, b)
        return node, best - log_z if log_z > -np.inf else -np.inf
    return memm_sentence_marginals(w, layout, data, a, b), best


@njit(cache=True, nogil=True)
def marginals_block(w, layout, data, lo, hi, node_all, best_log_probability):
    """``corpus_marginals`` of sentences lo..hi-1, into its outputs."""
    w, layout, data, node_all, best_log_probability = borrowed((w, layout, data, node_all, best_log_probability))
    sentence_offsets = data.sentence_offsets
    no_extra = np.zeros((0, layout.n_labels))
    for s in range(lo, hi):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        if b == a:
            continue
        _, best = decode_sentence(w, layout, data, a, b, no_extra)
        node, best_log_probability[s] = sentence_marginals(layout.local, w, layout, data, a, b, best)
        for t in range(b - a):  # not node_all[a:b] = node: its shape check compiles string code
            for c in range(layout.n_labels):
                node_all[a + t, c] = node[t, c]


def corpus_marginals(w, layout, data, threads=None):
    """Node marginals P(y_t = c | x) of every token (n_tokens, L) and log P(ŷ | x) of each
    sentence's Viterbi labeling ŷ (n_sentences,), on ``threads`` threads (None: numba's count)
    from ``threads.PARALLEL_FROM`` sentences on."""
    sentence_offsets = data.sentence_offsets
    node_all = np.zeros((sentence_offsets[-1], layout.n_labels))
    best_log_probability = np.zeros(sentence_offsets.shape[0] - 1)
    over_blocks(lambda lo, hi: marginals_block(w, layout, data, lo, hi, node_all, best_log_probability),
                sentence_offsets, threads)
    return node_all, best_log_probability
