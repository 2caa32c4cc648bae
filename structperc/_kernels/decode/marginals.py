"""Label marginals of a probabilistic model over a corpus: the CRF's forward-backward or the
MEMM's forward recursion over its local distributions, picked by the model's decoder."""
import numpy as np
from numba import njit, prange

from ..learn.crf import crf_sentence_marginals
from .decoders import MEMM, MEMM2, decode_sentence
from ..learn.memm import memm_sentence_marginals


@njit(cache=True, parallel=True)
def corpus_marginals(w, layout, data):
    """Node marginals P(y_t = c | x) of every token (n_tokens, L) and log P(ŷ | x) of each
    sentence's Viterbi labeling ŷ (n_sentences,).

    A locally normalized model (the memm decoders) scores ŷ by sum_t log P(y_t | history, x), which
    is log P(ŷ | x) already; a CRF's Viterbi score is w · Φ(x, ŷ), from which log Z(x) is taken."""
    n_labels = layout.n_labels
    local = layout.decoder == MEMM or layout.decoder == MEMM2
    sentence_offsets = data.sentence_offsets
    n_sentences = sentence_offsets.shape[0] - 1
    node_all = np.zeros((sentence_offsets[-1], n_labels))
    best_log_probability = np.zeros(n_sentences)
    no_extra = np.zeros((0, n_labels))
    for s in prange(n_sentences):
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        if b == a:
            continue
        _, best = decode_sentence(w, layout, data, a, b, no_extra)
        if local:
            node_all[a:b] = memm_sentence_marginals(w, layout, data, a, b)
            best_log_probability[s] = best
        else:
            node, log_z = crf_sentence_marginals(w, layout, data, a, b)
            node_all[a:b] = node
            best_log_probability[s] = best - log_z if log_z > -np.inf else -np.inf
    return node_all, best_log_probability
