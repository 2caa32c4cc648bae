"""The probability of each chunk of a labeling under a first-order CRF, from one forward-backward of
its sentence.

Given x, a first-order CRF's labels form a Markov chain whose steps are its marginals:
P(y_t = c | y_{t-1} = p, x) = edge[t, p, c] / node[t-1, p]. A chunk is the labels ŷ_i..ŷ_j, and it
ends at j unless the next label continues it (``continues[ŷ_j, c]``), so

    P(chunk) = node[i, ŷ_i] * prod_{t=i+1..j} edge[t, ŷ_{t-1}, ŷ_t] / node[t-1, ŷ_{t-1}]
               * (1 - sum_{c continues} edge[j+1, ŷ_j, c] / node[j, ŷ_j]).

It is the same probability as the one ``estimator.text`` reaches by forcing each chunk's labels, at
the cost of one forward-backward per sentence that has a chunk instead of one per chunk.
"""
import numpy as np
from numba import njit

from ..borrow import borrowed
from .forward_backward import forward_backward_scaled
from ..score.scoring import sentence_scores
from ..threads import over_blocks


@njit(cache=True, nogil=True)
def span_block(w, layout, data, lo, hi, labels, spans, out):
    """``span_probabilities`` of the chunks of sentences lo..hi-1, into ``out``."""
    w, layout, data, labels, spans, out = borrowed((w, layout, data, labels, spans, out))
    ids, continues = labels
    span_offsets, first, last = spans
    sentence_offsets = data.sentence_offsets
    n_labels = layout.n_labels
    for s in range(lo, hi):
        if span_offsets[s] == span_offsets[s + 1]:
            continue
        a, b = sentence_offsets[s], sentence_offsets[s + 1]
        emission, transition, end = sentence_scores(w, layout, data, a, b)
        _, node, edge = forward_backward_scaled(emission, transition, end)
        for k in range(span_offsets[s], span_offsets[s + 1]):
            i, j = first[k] - a, last[k] - a
            p = node[i, ids[a + i]]
            for t in range(i + 1, j + 1):
                before = node[t - 1, ids[a + t - 1]]
                p = p * edge[t, ids[a + t - 1], ids[a + t]] / before if before > 0.0 else 0.0
            if j + 1 < b - a and p > 0.0:
                y = ids[a + j]
                going_on = 0.0
                for c in range(n_labels):
                    if continues[y, c]:
                        going_on += edge[j + 1, y, c]
                p *= max(0.0, 1.0 - going_on / node[j, y])
            out[k] = min(1.0, max(0.0, p))


def span_probabilities(w, layout, data, labels, spans, threads=None):
    """P(chunk | x) of every chunk (n_spans,) under a first-order CRF without a tag dictionary (the
    forward-backward runs over every label pair).

    labels : (ids, continues): the labeling's label ids (n_tokens,) int64, and continues (L, L) bool,
        whether label c continues a chunk that ends with label p
    spans : (span_offsets (n_sentences + 1,), first (n_spans,), last (n_spans,)): the chunks of each
        sentence, by their first and last token, flat over the corpus
    """
    out = np.zeros(spans[1].shape[0])
    over_blocks(lambda lo, hi: span_block(w, layout, data, lo, hi, labels, spans, out), data.sentence_offsets,
                threads)
    return out
