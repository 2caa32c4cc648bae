"""Exact k-best first-order Viterbi (lazy, after Huang & Chiang 2005, "Better k-best parsing", Alg. 3).

Node (t, c) owns the list of the best prefixes y_0..y_t with y_t = c, best first. A prefix ending
in c at t extends a prefix ending in some p at t-1, so the list of (t, c) is a k-way merge of the L
lists of (t-1, p), each shifted by transition[t', p, c] (a constant shift keeps each list sorted),
plus emission[t, c]. A virtual node (n, 0) merges the lists of (n-1, c) shifted by end[c]; its list
is the answer.

Entry 0 of every list is the first-order Viterbi recursion. Further entries are computed only on
demand: each node keeps a binary heap holding one entry per source list; its root is the entry it
emitted last. To emit the next entry the root is replaced by its successor in the same source list
(which may first have to be demanded from node (t-1, p)) and the heap is re-sifted. Each new final
entry creates at most one entry per layer, so the cost is about one Viterbi pass plus
O(k n (L + log L)).

With a candidate set per token (the tag dictionary), the nodes of layer t are its candidates and
the merge at (t, c) runs over the candidates of t-1 only; without one, every label is a candidate.

Entries live in one pool, in the order they are created: entry 0 of the node of candidate j of
token t at cand_offsets[t] + j, later ones appended. An entry records its score, its node's label,
the entry it extends and the next entry of the same node; so memory stays O(n (L + k)) plus the
heaps of the nodes that grew, and never the (n, L, k) block a dense layout would page in.

Tie rule (the same as ``viterbi``): equal scores are ordered by the reversed labeling
(y_{n-1}, y_{n-2}, ..., y_0), smallest first. Inside the list of (t-1, p) ties are already in that
order, so merging by (score desc, p asc, rank in p's list asc) keeps it for (t, c) (candidates
ascend, so a lower candidate index is a lower label); the final merge over the last label uses
(score desc, c asc, rank asc). Because a source appears at most once in the heap, (score, source)
is a strict total order on heap entries.

Labelings with score -inf are never produced: a source whose shifted head is -inf is not merged,
and a label with emission -inf keeps an empty list.
"""
import numpy as np
from numba import njit

from structperc._kernels.decode.viterbi import largest_set


@njit(cache=True, no_cpython_wrapper=True)
def _before(score_a, source_a, score_b, source_b):
    """True if heap item a comes first: higher score, then lower source label."""
    return score_a > score_b or (score_a == score_b and source_a < source_b)


@njit(cache=True, no_cpython_wrapper=True)
def _sift_down(heap_score, heap_source, heap_entry, size, pos):
    score = heap_score[pos]
    source = heap_source[pos]
    entry = heap_entry[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        right = child + 1
        if right < size and _before(
            heap_score[right], heap_source[right], heap_score[child], heap_source[child]
        ):
            child = right
        if not _before(heap_score[child], heap_source[child], score, source):
            break
        heap_score[pos] = heap_score[child]
        heap_source[pos] = heap_source[child]
        heap_entry[pos] = heap_entry[child]
        pos = child
    heap_score[pos] = score
    heap_source[pos] = source
    heap_entry[pos] = entry


@njit(cache=True)
def kbest_viterbi(emission, transition, end, k):
    """The k best labelings under the score conventions of ``structperc._kernels``.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    transition : ndarray of shape (m, L+1, L), m in {1, n}
    end : ndarray of shape (L,)
    k : int

    Returns
    -------
    paths : ndarray of shape (k', n), int64
    scores : ndarray of shape (k',)
        Best first, k' = min(k, number of labelings with finite score). Ties are ordered by the
        reversed labeling (y_{n-1}, ..., y_0), smallest first, so paths[0] is ``viterbi``'s path.
    """
    n, n_labels = emission.shape
    cand_offsets = np.arange(n + 1) * n_labels
    cand_labels = np.empty(n * n_labels, dtype=np.int64)
    for t in range(n):
        for c in range(n_labels):
            cand_labels[t * n_labels + c] = c
    return kbest_candidates(emission, transition, end, k, cand_offsets.astype(np.int64), cand_labels)


@njit(cache=True)
def kbest_candidates(emission, transition, end, k, cand_offsets, cand_labels):
    """``kbest_viterbi`` over the labelings inside per-token candidate sets: token t may take
    cand_labels[cand_offsets[t]: cand_offsets[t + 1]] (ascending, non-empty; cand_offsets[0] == 0).

    The nodes of layer t are its candidates, so the first pass costs sum_t |C_{t-1}| |C_t| and a
    node's heap holds |C_{t-1}| sources. Same returns and tie order as ``kbest_viterbi``; with every
    label at every token, the same computation.
    """
    n, n_labels = emission.shape
    if k <= 0:
        return np.zeros((0, n), dtype=np.int64), np.zeros(0)
    if n == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(1)
    per_token = transition.shape[0] > 1
    # Node v of layer t < n is candidate j = v - cand_offsets[t] of token t; the virtual final node
    # (layer n) is v = cand_offsets[n]. Entry pool: entry_score[e] is a prefix score of node
    # node_of[e] (label entry_label[e]); it extends entry entry_back[e] of layer t-1; entry_next[e]
    # is the next entry of the same node (-1: none yet). Entry 0 of node v is e = v (score -inf for
    # an empty list). Each of the at most k attempts at a new final entry adds at most one entry per
    # layer, hence the capacity.
    final = cand_offsets[n]
    n_nodes = final + 1
    max_count = largest_set(cand_offsets)
    capacity = n_nodes + k * (n + 1)
    entry_score = np.empty(capacity)
    entry_label = np.empty(capacity, dtype=np.int64)
    entry_back = np.empty(capacity, dtype=np.int64)
    entry_next = np.empty(capacity, dtype=np.int64)
    n_entries = n_nodes
    # Per node: counts[v] entries known, last[v] the newest one, exhausted[v] no more.
    counts = np.zeros(n_nodes, dtype=np.int64)
    last = np.empty(n_nodes, dtype=np.int64)
    exhausted = np.zeros(n_nodes, dtype=np.bool_)
    # Heap of node v, built on its first demand past entry 0 at heap_offset[v] in the heap pool:
    # items (score, source index i in C_{t-1}, entry of node cand_offsets[t-1] + i), heap_size[v]
    # of them. A demand builds at most one heap and each final attempt makes at most n + 1
    # demands, so at most min(n_nodes, k (n+1)) heaps are ever built.
    heap_capacity = min(n_nodes, k * (n + 1)) * max_count
    heap_score = np.empty(heap_capacity)
    heap_source = np.empty(heap_capacity, dtype=np.int64)
    heap_entry = np.empty(heap_capacity, dtype=np.int64)
    heap_offset = np.full(n_nodes, -1, dtype=np.int64)
    heap_size = np.zeros(n_nodes, dtype=np.int64)
    heaps_used = 0

    # Entry 0 (Viterbi, ties to the lowest source), with best(v) = score of entry v:
    # best(0, j) = emission[0, c_j] + transition[0, L, c_j]; a one-token prefix has no other entry
    # best(t, j) = emission[t, c_j] + max_i (best(t-1, i) + transition[t', c_i, c_j])
    # best(final) = max_i (best(n-1, i) + end[c_i])
    for j in range(cand_offsets[1]):
        c = cand_labels[j]
        s = emission[0, c] + transition[0, n_labels, c]
        entry_score[j] = s
        entry_label[j] = c
        entry_back[j] = -1
        entry_next[j] = -1
        if s > -np.inf:
            counts[j] = 1
            last[j] = j
        exhausted[j] = True
    for t in range(1, n + 1):
        tt = t if per_token and t < n else 0
        prev = cand_offsets[t - 1]
        n_prev = cand_offsets[t] - prev
        base = cand_offsets[t] if t < n else final
        n_here = cand_offsets[t + 1] - base if t < n else 1
        for j in range(n_here):
            best = -np.inf
            arg = 0
            c = 0
            if t < n:
                c = cand_labels[base + j]
                for i in range(n_prev):
                    s = entry_score[prev + i] + transition[tt, cand_labels[prev + i], c]
                    if s > best:
                        best = s
                        arg = i
                best += emission[t, c]
            else:
                for i in range(n_prev):
                    s = entry_score[prev + i] + end[cand_labels[prev + i]]
                    if s > best:
                        best = s
                        arg = i
            e = base + j
            entry_score[e] = best
            entry_label[e] = c
            entry_back[e] = prev + arg
            entry_next[e] = -1
            if best > -np.inf:
                counts[e] = 1
                last[e] = e
            else:
                exhausted[e] = True

    # Demands (t, v, j): "node v of layer t must know j entries or be exhausted". A node waits for
    # at most one demand on its predecessor layer, so the stack is a chain of depth <= n + 1.
    stack_t = np.empty(n + 2, dtype=np.int64)
    stack_v = np.empty(n + 2, dtype=np.int64)
    stack_j = np.empty(n + 2, dtype=np.int64)
    stack_t[0] = n
    stack_v[0] = final
    stack_j[0] = k
    depth = 1
    while depth > 0:
        t = stack_t[depth - 1]
        v = stack_v[depth - 1]
        if counts[v] >= stack_j[depth - 1] or exhausted[v]:
            depth -= 1
            continue
        tt = t if per_token and t < n else 0
        c = entry_label[v]
        prev = cand_offsets[t - 1]
        if heap_offset[v] < 0:
            # All source heads; the root is then entry 0, which the node already emitted.
            off = heaps_used
            heaps_used += cand_offsets[t] - prev
            heap_offset[v] = off
            size = 0
            for i in range(cand_offsets[t] - prev):
                if counts[prev + i] > 0:
                    p = cand_labels[prev + i]
                    shift = transition[tt, p, c] if t < n else end[p]
                    s = entry_score[prev + i] + shift
                    if s > -np.inf:
                        heap_score[off + size] = s
                        heap_source[off + size] = i
                        heap_entry[off + size] = prev + i
                        size += 1
            for pos in range(size // 2 - 1, -1, -1):
                _sift_down(heap_score[off:off + size], heap_source[off:off + size],
                           heap_entry[off:off + size], size, pos)
            heap_size[v] = size
        off = heap_offset[v]
        size = heap_size[v]
        # The root is the entry emitted last; replace it by its successor in source i's list.
        i = heap_source[off]
        successor = entry_next[heap_entry[off]]
        if successor < 0 and not exhausted[prev + i]:
            stack_t[depth] = t - 1
            stack_v[depth] = prev + i
            stack_j[depth] = counts[prev + i] + 1
            depth += 1
            continue
        if successor >= 0:
            p = cand_labels[prev + i]
            shift = transition[tt, p, c] if t < n else end[p]
            heap_score[off] = entry_score[successor] + shift
            heap_entry[off] = successor
        else:
            size -= 1
            heap_score[off] = heap_score[off + size]
            heap_source[off] = heap_source[off + size]
            heap_entry[off] = heap_entry[off + size]
        heap_size[v] = size
        if size == 0:
            exhausted[v] = True
            continue
        _sift_down(heap_score[off:off + size], heap_source[off:off + size],
                   heap_entry[off:off + size], size, 0)
        e = n_entries
        n_entries += 1
        entry_score[e] = heap_score[off] + (emission[t, c] if t < n else 0.0)
        entry_label[e] = c
        entry_back[e] = heap_entry[off]
        entry_next[e] = -1
        entry_next[last[v]] = e
        last[v] = e
        counts[v] += 1

    # Walk the final node's list; each entry's back chain spells the labeling from y_{n-1} down.
    n_best = counts[final]
    paths = np.empty((n_best, n), dtype=np.int64)
    scores = np.empty(n_best)
    e = final
    for j in range(n_best):
        scores[j] = entry_score[e]
        back = entry_back[e]
        for t in range(n - 1, -1, -1):
            paths[j, t] = entry_label[back]
            back = entry_back[back]
        e = entry_next[e]
    return paths, scores
