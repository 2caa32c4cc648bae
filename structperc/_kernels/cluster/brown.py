"""Windowed agglomerative Brown clustering (Brown et al. 1992; Liang 2005), incremental bookkeeping.

The model
---------
Words are ranked by frequency (rank 0 = most frequent). The text gives directed bigram counts
n(u, v) between kept words (adjacent tokens of one sentence). N = sum n(u, v). For a word u,
l(u) = sum_v n(u, v) and r(v) = sum_u n(u, v) are its left and right marginal counts over ALL kept
words, so they never change while words are added. A cluster's l, r and n(c, d) are sums over its
words. At any time only the words added so far belong to clusters; the average mutual information
of the class bigram model is

    AMI = sum_{c, d active} p(c, d) log p(c, d) / (p_l(c) p_r(d)),   p = n / N, p_l = l / N, p_r = r / N

and the kernels work in count units, N * AMI = sum_{c,d} Q(n(c,d), l(c), r(d)) with

    Q(n, l, r) = n log(n N / (l r)) = g(n) + n (log N - log l - log r),    g(n) = n log n, g(0) = 0.

Loss of merging i and j (L(i, j) = N * (AMI before - AMI after))
----------------------------------------------------------------
Every term of the sum that involves i or j is replaced. Write f(x, y) = g(x) + g(y) - g(x + y)
(zero when x or y is zero). For a third cluster y the log N and log r(y) parts cancel:

    Q(n_iy, l_i, r_y) + Q(n_jy, l_j, r_y) - Q(n_iy + n_jy, l_i + l_j, r_y)
        = f(n_iy, n_jy) + n_iy alpha_i + n_jy alpha_j,     alpha_i = log(l_i + l_j) - log l_i

and the same with n_yi, n_yj, beta_i = log(r_i + r_j) - log r_i for the right direction. With
R_i = sum_{y active} n_iy and C_i = sum_{y active} n_yi (row and column sums over active clusters):

    L(i, j) = sum_{y != i, j} [f(n_iy, n_jy) + f(n_yi, n_yj)]
              + alpha_i (R_i - n_ii - n_ij) + alpha_j (R_j - n_ji - n_jj)
              + beta_i (C_i - n_ii - n_ji) + beta_j (C_j - n_ij - n_jj)
              + block(i, j)
    block(i, j) = Q(n_ii, l_i, r_i) + Q(n_ij, l_i, r_j) + Q(n_ji, l_j, r_i) + Q(n_jj, l_j, r_j)
                  - Q(n_ii + n_ij + n_ji + n_jj, l_i + l_j, r_i + r_j)           (log N cancels)

`_fresh_loss` computes this in O(C); it is called for the C pairs of a new cluster only.

Updates of the cached L(i, j) (O(C^2) per step, each O(1), mostly skipped)
-------------------------------------------------------------------------
Adding cluster k (the next word) adds the y = k terms to every pair i, j (R_i grows by n_ik, which
the alpha term accounts for):

    L(i, j) += f(n_ik, n_jk) + n_ik alpha_i + n_jk alpha_j + f(n_ki, n_kj) + n_ki beta_i + n_kj beta_j

It is zero unless i or j is a neighbour of k: a rare new word touches few pairs.

Merging a and b into m (n_im = n_ia + n_ib) replaces the y = a and y = b terms of every other pair
by the y = m term. The alpha and beta terms cancel (they are linear in the counts), leaving

    L(i, j) += f(n_im, n_jm) - f(n_ia, n_ja) - f(n_ib, n_jb)  +  (the same with n_mi, n_ai, n_bi)
             = h_i + h_j - g(n_im + n_jm) + g(n_ia + n_ja) + g(n_ib + n_jb) + (right direction)
    h_i = g(n_im) - g(n_ia) - g(n_ib)

which is zero unless both a and b touch {i, j}. g of small counts comes from a table, so the update
needs no logarithm. After the merge L(m, y) is computed fresh for every y.

Slots
-----
Active clusters occupy slots 0 .. A-1 (A <= C + 1). A merge keeps m in the lower slot a and moves
the cluster of slot A-1 into the freed slot b. Slot order never affects the result except through
the tie-break of `_best_pair` (lowest loss, then lowest (i, j) slot pair).

Arrays (S = C + 2 slots, V words, 2V - 1 merge-tree nodes: leaves are word ranks)
    counts, counts_t : int64 (S, S)   n(s, t) and its transpose
    left, right      : int64 (S,)     l and r of each slot's cluster
    row_sum, col_sum : int64 (S,)     R and C above
    loss             : float64 (S, S) L(s, t), symmetric
    slot_node        : int64 (S,)     merge-tree node held by each slot
    node_parent      : int64 (2V-1,)  union-find parent (-1 at a root), to find a word's cluster
    node_slot        : int64 (2V-1,)  slot of a root node
    scalars          : int64 (4,)     n_active, next_word, n_merges, next_node
    ami              : float64 (1,)   N * AMI of the current clustering
"""
from collections import namedtuple

import numpy as np
from numba import njit

BrownState = namedtuple(
    "BrownState",
    "counts counts_t left right row_sum col_sum loss slot_node node_parent node_slot scalars ami g_table")

# Word-level bigram counts (V words by rank) as two CSR tables:
#   out_offsets (V+1,), out_words, out_counts: right neighbours v and n(w, v) of word w
#   in_offsets (V+1,),  in_words,  in_counts:  left neighbours u and n(u, w) of word w
#   left, right (V,): l(w), r(w); total: N
WordBigrams = namedtuple(
    "WordBigrams", "out_offsets out_words out_counts in_offsets in_words in_counts left right total")

G_TABLE_SIZE = 1 << 16
ACTIVE, NEXT_WORD, N_MERGES, NEXT_NODE = 0, 1, 2, 3


def g_table():
    """g(n) = n log n for n < G_TABLE_SIZE (g(0) = 0)."""
    n = np.arange(G_TABLE_SIZE, dtype=np.float64)
    out = np.zeros(G_TABLE_SIZE)
    out[1:] = n[1:] * np.log(n[1:])
    return out


def new_state(n_clusters, n_words):
    slots = n_clusters + 2
    n_nodes = max(2 * n_words - 1, 1)
    return BrownState(
        counts=np.zeros((slots, slots), np.int64), counts_t=np.zeros((slots, slots), np.int64),
        left=np.zeros(slots, np.int64), right=np.zeros(slots, np.int64),
        row_sum=np.zeros(slots, np.int64), col_sum=np.zeros(slots, np.int64),
        loss=np.zeros((slots, slots)), slot_node=np.full(slots, -1, np.int64),
        node_parent=np.full(n_nodes, -1, np.int64), node_slot=np.full(n_nodes, -1, np.int64),
        scalars=np.array([0, 0, 0, n_words], np.int64), ami=np.zeros(1), g_table=g_table())


@njit(cache=True, inline="always")
def _g(table, n):
    if n < table.shape[0]:
        return table[n]
    return n * np.log(n)


@njit(cache=True, inline="always")
def _f(table, x, y):
    if x == 0 or y == 0:
        return 0.0
    return _g(table, x) + _g(table, y) - _g(table, x + y)


@njit(cache=True, inline="always")
def _q(table, n, left, right, log_total):
    # Q(n, l, r) = g(n) + n (log N - log l - log r); zero when n == 0 (then l or r may be zero)
    if n == 0:
        return 0.0
    return _g(table, n) + n * (log_total - np.log(left) - np.log(right))


@njit(cache=True)
def _find_slot(state, word):
    """Slot of the cluster holding `word` (union-find over merge-tree nodes, path halving)."""
    parent = state.node_parent
    node = word
    while parent[node] >= 0:
        up = parent[node]
        if parent[up] >= 0:
            parent[node] = parent[up]
        node = up
    return state.node_slot[node]


@njit(cache=True)
def _fresh_loss(state, i, j, log_total):
    """L(i, j) from the formula above, O(A)."""
    counts, counts_t, table = state.counts, state.counts_t, state.g_table
    n_active = state.scalars[ACTIVE]
    li, lj, ri, rj = state.left[i], state.left[j], state.right[i], state.right[j]
    total = 0.0
    for y in range(n_active):
        if y == i or y == j:
            continue
        total += _f(table, counts[i, y], counts[j, y]) + _f(table, counts_t[i, y], counts_t[j, y])
    nii, nij, nji, njj = counts[i, i], counts[i, j], counts[j, i], counts[j, j]
    # a zero marginal has zero counts, so its alpha/beta term is skipped rather than 0 * inf
    if li + lj > 0:
        log_l = np.log(li + lj)
        rest = state.row_sum[i] - nii - nij
        if rest:
            total += rest * (log_l - np.log(li))
        rest = state.row_sum[j] - nji - njj
        if rest:
            total += rest * (log_l - np.log(lj))
    if ri + rj > 0:
        log_r = np.log(ri + rj)
        rest = state.col_sum[i] - nii - nji
        if rest:
            total += rest * (log_r - np.log(ri))
        rest = state.col_sum[j] - nij - njj
        if rest:
            total += rest * (log_r - np.log(rj))
    total += (_q(table, nii, li, ri, log_total) + _q(table, nij, li, rj, log_total)
              + _q(table, nji, lj, ri, log_total) + _q(table, njj, lj, rj, log_total)
              - _q(table, nii + nij + nji + njj, li + lj, ri + rj, log_total))
    return total


@njit(cache=True)
def _refresh_losses(state, s, log_total):
    n_active = state.scalars[ACTIVE]
    for x in range(n_active):
        if x != s:
            value = _fresh_loss(state, s, x, log_total)
            state.loss[s, x] = value
            state.loss[x, s] = value


@njit(cache=True)
def _add_word(state, words, word, log_total):
    """Make `word` a cluster of its own in slot A and update every cached loss."""
    counts, counts_t, table, loss = state.counts, state.counts_t, state.g_table, state.loss
    s = state.scalars[ACTIVE]
    n_active = s + 1
    state.scalars[ACTIVE] = n_active
    state.slot_node[s] = word
    state.node_slot[word] = s
    for t in range(n_active):
        counts[s, t] = 0
        counts[t, s] = 0
        counts_t[s, t] = 0
        counts_t[t, s] = 0
    for e in range(words.out_offsets[word], words.out_offsets[word + 1]):
        v = words.out_words[e]
        if v <= word:  # later words are not clustered yet
            t = _find_slot(state, v)
            counts[s, t] += words.out_counts[e]
            counts_t[t, s] += words.out_counts[e]
    for e in range(words.in_offsets[word], words.in_offsets[word + 1]):
        u = words.in_words[e]
        if u < word:  # u == word was counted above
            t = _find_slot(state, u)
            counts[t, s] += words.in_counts[e]
            counts_t[s, t] += words.in_counts[e]
    state.left[s] = words.left[word]
    state.right[s] = words.right[word]
    row, col = 0, 0
    for t in range(n_active):
        row += counts[s, t]
        col += counts[t, s]
    state.row_sum[s] = row
    state.col_sum[s] = col
    # N * AMI gains every term with the new cluster (its diagonal once)
    ls, rs = state.left[s], state.right[s]
    gain = _q(table, counts[s, s], ls, rs, log_total)
    for t in range(s):
        state.row_sum[t] += counts[t, s]
        state.col_sum[t] += counts[s, t]
        gain += (_q(table, counts[s, t], ls, state.right[t], log_total)
                 + _q(table, counts[t, s], state.left[t], rs, log_total))
    state.ami[0] += gain
    # L(i, j) += f(n_ik, n_jk) + n_ik alpha_i + n_jk alpha_j + (right direction)
    into_k, from_k = counts_t[s], counts[s]  # n_ik and n_ki as contiguous rows
    for i in range(s):
        nik, nki = into_k[i], from_k[i]
        li, ri = state.left[i], state.right[i]
        for j in range(i + 1, s):
            njk, nkj = into_k[j], from_k[j]
            if nik == 0 and njk == 0 and nki == 0 and nkj == 0:
                continue
            delta = 0.0
            if nik != 0 or njk != 0:
                lj = state.left[j]
                log_l = np.log(li + lj)
                delta += _f(table, nik, njk)
                if nik:
                    delta += nik * (log_l - np.log(li))
                if njk:
                    delta += njk * (log_l - np.log(lj))
            if nki != 0 or nkj != 0:
                rj = state.right[j]
                log_r = np.log(ri + rj)
                delta += _f(table, nki, nkj)
                if nki:
                    delta += nki * (log_r - np.log(ri))
                if nkj:
                    delta += nkj * (log_r - np.log(rj))
            loss[i, j] += delta
            loss[j, i] = loss[i, j]
    _refresh_losses(state, s, log_total)


@njit(cache=True)
def _best_pair(state):
    """(i, j), i < j, of the lowest cached loss; ties go to the first pair in slot order."""
    n_active = state.scalars[ACTIVE]
    loss = state.loss
    best, best_i, best_j = np.inf, 0, 1
    for i in range(n_active):
        for j in range(i + 1, n_active):
            if loss[i, j] < best:
                best, best_i, best_j = loss[i, j], i, j
    return best_i, best_j


@njit(cache=True)
def _move_slot(state, src, dst, n_active):
    """Copy the cluster of slot src into slot dst (src is then unused)."""
    counts, counts_t, loss = state.counts, state.counts_t, state.loss
    for t in range(n_active):
        counts[dst, t] = counts[src, t]
        counts_t[dst, t] = counts_t[src, t]
        loss[dst, t] = loss[src, t]
    for t in range(n_active):
        counts[t, dst] = counts[t, src]
        counts_t[t, dst] = counts_t[t, src]
        loss[t, dst] = loss[t, src]
    loss[dst, dst] = 0.0
    state.left[dst] = state.left[src]
    state.right[dst] = state.right[src]
    state.row_sum[dst] = state.row_sum[src]
    state.col_sum[dst] = state.col_sum[src]
    node = state.slot_node[src]
    state.slot_node[dst] = node
    state.node_slot[node] = dst


@njit(cache=True)
def _merge(state, a, b, log_total, merge_nodes, merge_losses, merge_ami):
    """Merge the clusters of slots a < b into slot a; record the merge."""
    counts, counts_t, table, loss = state.counts, state.counts_t, state.g_table, state.loss
    n_active = state.scalars[ACTIVE]
    # h_i = g(n_im) - g(n_ia) - g(n_ib) for both directions
    h_left = np.zeros(n_active)
    h_right = np.zeros(n_active)
    for i in range(n_active):
        x, y = counts[i, a], counts[i, b]
        if x and y:
            h_left[i] = _g(table, x + y) - _g(table, x) - _g(table, y)
        x, y = counts[a, i], counts[b, i]
        if x and y:
            h_right[i] = _g(table, x + y) - _g(table, x) - _g(table, y)
    into_a, into_b, from_a, from_b = counts_t[a], counts_t[b], counts[a], counts[b]
    for i in range(n_active):
        if i == a or i == b:
            continue
        nia, nib, nai, nbi = into_a[i], into_b[i], from_a[i], from_b[i]
        for j in range(i + 1, n_active):
            if j == a or j == b:
                continue
            nja, njb, naj, nbj = into_a[j], into_b[j], from_a[j], from_b[j]
            delta = 0.0
            if (nia or nja) and (nib or njb):
                delta += (h_left[i] + h_left[j] - _g(table, nia + nib + nja + njb)
                          + _g(table, nia + nja) + _g(table, nib + njb))
            if (nai or naj) and (nbi or nbj):
                delta += (h_right[i] + h_right[j] - _g(table, nai + nbi + naj + nbj)
                          + _g(table, nai + naj) + _g(table, nbi + nbj))
            if delta != 0.0:
                loss[i, j] += delta
                loss[j, i] = loss[i, j]
    k = state.scalars[N_MERGES]
    merge_nodes[k, 0] = state.slot_node[a]
    merge_nodes[k, 1] = state.slot_node[b]
    merge_losses[k] = loss[a, b]
    state.ami[0] -= loss[a, b]
    merge_ami[k] = state.ami[0]
    # m into slot a: rows, then columns (the diagonal collects all four cells)
    for t in range(n_active):
        counts[a, t] += counts[b, t]
    for t in range(n_active):
        counts[t, a] += counts[t, b]
    for t in range(n_active):
        counts_t[a, t] = counts[t, a]
        counts_t[t, a] = counts[a, t]
    state.left[a] += state.left[b]
    state.right[a] += state.right[b]
    state.row_sum[a] += state.row_sum[b]
    state.col_sum[a] += state.col_sum[b]
    node = state.scalars[NEXT_NODE]
    state.node_parent[state.slot_node[a]] = node
    state.node_parent[state.slot_node[b]] = node
    state.slot_node[a] = node
    state.node_slot[node] = a
    state.scalars[NEXT_NODE] = node + 1
    state.scalars[N_MERGES] = k + 1
    last = n_active - 1
    if b != last:
        _move_slot(state, last, b, n_active)
    state.scalars[ACTIVE] = last
    _refresh_losses(state, a, log_total)


@njit(cache=True)
def brown_steps(state, words, n_words, n_clusters, max_merges, merge_nodes, merge_losses, merge_ami):
    """Run the windowed algorithm for at most `max_merges` more merges; return how many were done.

    Keeps at most `n_clusters` clusters while words remain: add the next word (cluster C + 1), merge
    the pair of least loss. When every word is in, merge down to one cluster. merge_nodes (V-1, 2)
    receives the merged nodes (a's, b's), merge_losses (V-1,) N * (AMI lost), merge_ami (V-1,) N * AMI
    after the merge.
    """
    log_total = np.log(words.total) if words.total > 0 else 0.0
    done = 0
    while done < max_merges:
        word = state.scalars[NEXT_WORD]
        if word < n_words:
            _add_word(state, words, word, log_total)
            state.scalars[NEXT_WORD] = word + 1
            if state.scalars[ACTIVE] <= n_clusters:
                continue
        elif state.scalars[ACTIVE] <= 1:
            break
        a, b = _best_pair(state)
        _merge(state, a, b, log_total, merge_nodes, merge_losses, merge_ami)
        done += 1
    return done
