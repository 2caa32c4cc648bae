"""Exact k-best first-order Viterbi (lazy, after Huang & Chiang 2005, "Better k-best parsing", Alg. 3).

Node (t, c) owns the list of the best prefixes y_0..y_t with y_t = c, best first. A prefix ending
in c at t extends a prefix ending in some p at t-1, so the list of (t, c) is a k-way merge of the L
lists of (t-1, p), each shifted by transition[t', p, c] (a constant shift keeps each list sorted),
plus emission[t, c]. A virtual node (n, 0) merges the lists of (n-1, c) shifted by end[c]; its list
is the answer.

Entry 0 of every list is the first-order Viterbi recursion. Further entries are computed only on
demand: each node keeps a binary heap holding one entry per source list; its root is the entry it
emitted last. To emit the next entry the root is replaced by its successor in the same source list
(which may first have to be demanded from node (t-1, p)) and the heap is re-sifted. Only nodes on
the way to the k best labelings ever grow past one entry, so the cost is about one Viterbi pass
plus O(k n (L + log L)).

Tie rule (the same as ``viterbi``): equal scores are ordered by the reversed labeling
(y_{n-1}, y_{n-2}, ..., y_0), smallest first. Inside the list of (t-1, p) ties are already in that
order, so merging by (score desc, p asc, rank in p's list asc) keeps it for (t, c); the final merge
over the last label uses (score desc, c asc, rank asc). Because a source appears at most once in
the heap, (score, source) is a strict total order on heap entries.

Labelings with score -inf are never produced: a source whose shifted head is -inf is not merged,
and a label with emission -inf keeps an empty list.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def _before(score_a, source_a, score_b, source_b):
    """True if heap entry a comes first: higher score, then lower source index."""
    return score_a > score_b or (score_a == score_b and source_a < source_b)


@njit(cache=True)
def _sift_down(heap_score, heap_source, size, pos):
    score = heap_score[pos]
    source = heap_source[pos]
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
        pos = child
    heap_score[pos] = score
    heap_source[pos] = source


@njit(cache=True)
def _heapify(heap_score, heap_source, size):
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(heap_score, heap_source, size, pos)


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
    if k <= 0:
        return np.zeros((0, n), dtype=np.int64), np.zeros(0)
    if n == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(1)
    per_token = transition.shape[0] > 1
    # Layers 0..n-1 are tokens; layer n holds the single virtual final node (n, 0).
    # scores[r, t, c]: r-th best prefix score of node (t, c); it extends entry back_rank[r, t, c]
    # of node (t-1, back_label[r, t, c]). counts[t, c] entries are known; exhausted[t, c] says
    # there are no more. Rank comes first so that entries past 0, which few nodes ever reach, do
    # not share memory pages with entry 0 (large k stays cheap).
    scores = np.empty((k, n + 1, n_labels))
    back_label = np.empty((k, n + 1, n_labels), dtype=np.int64)
    back_rank = np.empty((k, n + 1, n_labels), dtype=np.int64)
    counts = np.zeros((n + 1, n_labels), dtype=np.int64)
    exhausted = np.zeros((n + 1, n_labels), dtype=np.bool_)
    # Heap of node (t, c): heap_score/heap_source[t, c, :heap_size[t, c]]; head[t, c, p] is the
    # rank of source p's entry currently in it. Built on the first demand past entry 0.
    built = np.zeros((n + 1, n_labels), dtype=np.bool_)
    heap_score = np.empty((n + 1, n_labels, n_labels))
    heap_source = np.empty((n + 1, n_labels, n_labels), dtype=np.int64)
    heap_size = np.zeros((n + 1, n_labels), dtype=np.int64)
    head = np.empty((n + 1, n_labels, n_labels), dtype=np.int64)

    # Entry 0 (Viterbi, ties to the lowest p):
    # scores[0, 0, c] = emission[0, c] + transition[0, L, c]; a one-token prefix has no other entry
    # scores[0, t, c] = emission[t, c] + max_p (scores[0, t-1, p] + transition[t', p, c])
    # scores[0, n, 0] = max_c (scores[0, n-1, c] + end[c])
    for c in range(n_labels):
        s = emission[0, c] + transition[0, n_labels, c]
        if s > -np.inf:
            scores[0, 0, c] = s
            counts[0, c] = 1
        exhausted[0, c] = True
    for t in range(1, n + 1):
        tt = t if per_token and t < n else 0
        n_nodes = n_labels if t < n else 1
        for c in range(n_nodes):
            best = -np.inf
            arg = 0
            for p in range(n_labels):
                if counts[t - 1, p] > 0:
                    shift = transition[tt, p, c] if t < n else end[p]
                    s = scores[0, t - 1, p] + shift
                    if s > best:
                        best = s
                        arg = p
            if t < n:
                best += emission[t, c]
            if best > -np.inf:
                scores[0, t, c] = best
                back_label[0, t, c] = arg
                back_rank[0, t, c] = 0
                counts[t, c] = 1
            else:
                exhausted[t, c] = True

    # Demands (t, c, j): "node (t, c) must know entry j or be exhausted". A node waits for at most
    # one demand on its predecessor layer, so the stack is a chain of depth <= n + 1.
    stack_t = np.empty(n + 2, dtype=np.int64)
    stack_c = np.empty(n + 2, dtype=np.int64)
    stack_j = np.empty(n + 2, dtype=np.int64)
    stack_t[0] = n
    stack_c[0] = 0
    stack_j[0] = k - 1
    depth = 1
    while depth > 0:
        t = stack_t[depth - 1]
        c = stack_c[depth - 1]
        j = stack_j[depth - 1]
        if counts[t, c] > j or exhausted[t, c]:
            depth -= 1
            continue
        tt = t if per_token and t < n else 0
        if not built[t, c]:
            size = 0
            for p in range(n_labels):
                if counts[t - 1, p] > 0:
                    shift = transition[tt, p, c] if t < n else end[p]
                    s = scores[0, t - 1, p] + shift
                    if s > -np.inf:
                        heap_score[t, c, size] = s
                        heap_source[t, c, size] = p
                        head[t, c, p] = 0
                        size += 1
            _heapify(heap_score[t, c], heap_source[t, c], size)
            heap_size[t, c] = size
            built[t, c] = True
        # The root is the entry emitted last; replace it by its successor in source p's list.
        p = heap_source[t, c, 0]
        r = head[t, c, p] + 1
        if counts[t - 1, p] <= r and not exhausted[t - 1, p]:
            stack_t[depth] = t - 1
            stack_c[depth] = p
            stack_j[depth] = r
            depth += 1
            continue
        size = heap_size[t, c]
        if counts[t - 1, p] > r:
            shift = transition[tt, p, c] if t < n else end[p]
            heap_score[t, c, 0] = scores[r, t - 1, p] + shift
            head[t, c, p] = r
        else:
            size -= 1
            heap_score[t, c, 0] = heap_score[t, c, size]
            heap_source[t, c, 0] = heap_source[t, c, size]
        heap_size[t, c] = size
        if size == 0:
            exhausted[t, c] = True
            continue
        _sift_down(heap_score[t, c], heap_source[t, c], size, 0)
        p = heap_source[t, c, 0]
        j = counts[t, c]
        scores[j, t, c] = heap_score[t, c, 0] + (emission[t, c] if t < n else 0.0)
        back_label[j, t, c] = p
        back_rank[j, t, c] = head[t, c, p]
        counts[t, c] = j + 1

    n_best = counts[n, 0]
    paths = np.empty((n_best, n), dtype=np.int64)
    for j in range(n_best):
        c = back_label[j, n, 0]
        r = back_rank[j, n, 0]
        paths[j, n - 1] = c
        for t in range(n - 1, 0, -1):
            p = back_label[r, t, c]
            r = back_rank[r, t, c]
            c = p
            paths[j, t - 1] = c
    return paths, scores[:n_best, n, 0].copy()
