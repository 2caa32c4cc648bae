"""Hypothesis strategies shared by the kernel tests."""
import numpy as np
from hypothesis import strategies as st

import naive


def random_candidate_sets(rng, n, n_labels):
    """Random non-empty ascending candidate sets of n tokens: (sets, cand_offsets, cand_labels), each
    label kept with probability 1/2 and one drawn label always kept."""
    sets = []
    for _ in range(n):
        keep = rng.random(n_labels) < 0.5
        keep[rng.integers(n_labels)] = True
        sets.append(np.flatnonzero(keep))
    cand_offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
    return sets, cand_offsets, np.concatenate(sets).astype(np.int64)


@st.composite
def chains(draw, integer=None, scale=1.0):
    """A random first-order instance (emission, transition, end) with n 1..5 tokens, L 1..4 labels,
    a shared or per-token transition block.

    Integer weights in [-high, high] (high 1 or 2) make ties frequent and exact in float64; other
    weights are normal times ``scale``. ``integer`` None draws the kind. A mask sets random entries
    to -inf, then one random labeling is re-opened so that at least one score is finite.
    """
    n = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 4))
    per_token = draw(st.booleans())
    masked = draw(st.booleans())
    if integer is None:
        integer = draw(st.booleans())
    high = draw(st.sampled_from([1, 2]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = n if per_token else 1

    def weights(shape):
        if integer:
            return rng.integers(-high, high + 1, size=shape).astype(np.float64)
        return rng.normal(size=shape) * scale

    emission = weights((n, n_labels))
    transition = weights((m, n_labels + 1, n_labels))
    end = weights(n_labels)
    if masked:
        emission[rng.random(emission.shape) < 0.3] = -np.inf
        transition[rng.random(transition.shape) < 0.3] = -np.inf
        end[rng.random(end.shape) < 0.3] = -np.inf
        y = rng.integers(0, n_labels, size=n)
        prev = n_labels
        for t, c in enumerate(y):
            emission[t, c] = weights(())
            transition[t if per_token else 0, prev, c] = weights(())
            prev = c
        end[prev] = weights(())
    return emission, transition, end


@st.composite
def trigram_chains(draw, pruned=None):
    """A random second-order instance (n 1..5, L 1..4) with integer weights (ties are frequent
    and exact), optionally masked with -inf and optionally with random non-empty candidate sets.
    One random labeling inside the candidate sets is kept finite."""
    n = draw(st.integers(1, 5))
    n_labels = draw(st.integers(1, 4))
    per_token = draw(st.booleans())
    masked = draw(st.booleans())
    if pruned is None:
        pruned = draw(st.booleans())
    # weights in [-high, high]; high = 1 makes ties very frequent
    high = draw(st.sampled_from([1, 2]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = n if per_token else 1

    def weights(shape):
        return rng.integers(-high, high + 1, size=shape).astype(np.float64)

    emission = weights((n, n_labels))
    transition2 = weights((m, n_labels + 1, n_labels + 1, n_labels))
    end = weights(n_labels)
    if pruned:
        _, cand_offsets, cand_labels = random_candidate_sets(rng, n, n_labels)
    else:
        cand_offsets, cand_labels = naive.all_candidates(n, n_labels)
    if masked:
        emission[rng.random(emission.shape) < 0.3] = -np.inf
        transition2[rng.random(transition2.shape) < 0.3] = -np.inf
        end[rng.random(end.shape) < 0.3] = -np.inf
        y = [rng.choice(s) for s in naive.candidate_sets(cand_offsets, cand_labels)]
        prev2, prev = n_labels, n_labels
        for t, c in enumerate(y):
            emission[t, c] = weights(())
            transition2[t if per_token else 0, prev2, prev, c] = weights(())
            prev2, prev = prev, c
        end[prev] = weights(())
    return emission, transition2, end, cand_offsets, cand_labels


@st.composite
def pruned_chains(draw, integer=None, scale=1.0):
    """A ``chains`` instance (n 1..5, L 1..4) with random non-empty ascending candidate sets per
    token, (emission, transition, end, cand_offsets, cand_labels); one labeling inside the sets is
    re-opened (finite) when the instance is masked."""
    emission, transition, end = draw(chains(integer=integer, scale=scale))
    n, n_labels = emission.shape
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sets, cand_offsets, cand_labels = random_candidate_sets(rng, n, n_labels)
    y = [rng.choice(s) for s in sets]
    per_token = transition.shape[0] > 1
    prev = n_labels
    for t, c in enumerate(y):
        if not np.isfinite(emission[t, c]):
            emission[t, c] = 0.5
        if not np.isfinite(transition[t if per_token else 0, prev, c]):
            transition[t if per_token else 0, prev, c] = -0.5
        prev = c
    if not np.isfinite(end[prev]):
        end[prev] = 0.0
    return emission, transition, end, cand_offsets, cand_labels
