"""The ``posterior`` feature family: each chunk's probability under the base model, estimated from
its n-best list, and the candidate's expected merit under it.

A sentence's candidates get the probabilities softmax(score / temperature) over its list (for an
MEMM or a CRF, whose path scores are log-probabilities, at temperature 1 the list renormalised). A
distinct chunk (type, first, last) of the sentence gets the sum of the probabilities of the candidates
that have it: the spans' marginals of the list. Then for every candidate:

- ``pp=T:b`` for each of its chunks of type T, b the bucket of the chunk's probability
  (``BUCKETS``);
- ``pp:merit``, valued sum over its chunks of (2 p - 1): the expected correct minus wrong chunks under
  the list's probabilities, the merit the learners rank by (``context.candidate_merits``), so that a
  weight on it makes the learner a minimum-Bayes-risk reranker.

The temperature of a base whose scores are not log-probabilities (a perceptron's path scores) is
``fit_temperature``'s, which makes the training lists' best candidates likeliest.
"""
import numpy as np
from scipy.optimize import minimize_scalar

from structperc._kernels.rank.ranking import group_argmax

BUCKETS = np.array([0.1, 0.25, 0.5, 0.75, 0.9, 0.99])
MERIT_FEATURE = "pp:merit"


def candidate_probabilities(scores, candidate_offsets, temperature=1.0):
    """float64 (C,): softmax(scores / temperature) within each sentence's candidates."""
    counts = np.diff(candidate_offsets)
    has = counts > 0
    starts = candidate_offsets[:-1][has]
    scaled = np.asarray(scores, dtype=np.float64) / float(temperature)
    top = np.maximum.reduceat(scaled, starts) if len(scaled) else scaled
    shifted = np.exp(scaled - np.repeat(top, counts[has]))
    totals = np.add.reduceat(shifted, starts) if len(shifted) else shifted
    return shifted / np.repeat(totals, counts[has])


def chunk_probabilities(nb, spans, temperature=1.0):
    """float64 (S,): the probability of every chunk of every candidate (``spans.CandidateSpans``'s
    rows), the summed probabilities of its sentence's candidates that have it."""
    probabilities = candidate_probabilities(nb.scores, nb.candidate_offsets, temperature)
    distinct = np.bincount(spans.distinct_of, weights=probabilities[spans.candidate], minlength=spans.n_distinct)
    return np.minimum(distinct[spans.distinct_of], 1.0)


def fit_temperature(nb, merits, bounds=(0.05, 100.0)):
    """The temperature that maximises the training lists' log-probability of each sentence's best
    candidate by ``merits`` (float64 (C,)), searched on a log scale within ``bounds``."""
    best = group_argmax(np.asarray(merits, dtype=np.float64), nb.candidate_offsets.astype(np.int64))
    best = best[best >= 0]
    if len(best) == 0:
        return 1.0

    def loss(log_t):
        return -np.log(candidate_probabilities(nb.scores, nb.candidate_offsets, np.exp(log_t))[best] + 1e-300).sum()

    found = minimize_scalar(loss, bounds=tuple(np.log(bounds)), method="bounded")
    return float(np.exp(found.x))


def posterior_parts(nb, spans, feature_id, temperature=1.0):
    """(candidates, ids, values) entries of the ``posterior`` family; ``feature_id(string)`` gives a
    feature's id (-1: unknown, dropped later)."""
    p = chunk_probabilities(nb, spans, temperature)
    buckets = np.searchsorted(BUCKETS, p, side="right")
    width = len(BUCKETS) + 1
    codes = spans.type * width + buckets
    ids = np.full(len(spans.type_names) * width, -1, dtype=np.int64)
    for code in np.unique(codes).tolist():
        ids[code] = feature_id(f"pp={spans.type_names[code // width]}:{code % width}")
    n_candidates = nb.n_candidates
    merit = np.bincount(spans.candidate, weights=2.0 * p - 1.0, minlength=n_candidates)
    everyone = np.arange(n_candidates, dtype=np.int64)
    return [(spans.candidate, ids[codes], np.ones(len(codes))),
            (everyone, np.full(n_candidates, feature_id(MERIT_FEATURE), dtype=np.int64), merit)]
