"""Forward-backward in log space: log partition function, node and edge marginals."""
import numpy as np
from numba import njit

from structperc._kernels.decode.viterbi import largest_set
from ..borrow import borrowed


@njit(cache=True)
def log_sum_exp(values):
    """log(sum(exp(values))) for a 1-D float64 array, stable; empty or all -inf gives -inf."""
    top = -np.inf
    for v in values:
        if v > top:
            top = v
    if top == -np.inf:
        return -np.inf
    total = 0.0
    for v in values:
        total += np.exp(v - top)
    return top + np.log(total)


@njit(cache=True, no_cpython_wrapper=True)
def _forward(emission, transition):
    """alpha (n, L): alpha[t, c] = log of the summed exp-scores of all prefixes y_0..y_t with y_t = c."""
    # alpha[0, c] = emission[0, c] + transition[0, L, c]
    # alpha[t, c] = emission[t, c] + logsumexp_p (alpha[t-1, p] + transition[t', p, c])
    n, n_labels = emission.shape
    per_token = transition.shape[0] > 1
    alpha = np.empty((n, n_labels))
    terms = np.empty(n_labels)
    for c in range(n_labels):
        alpha[0, c] = emission[0, c] + transition[0, n_labels, c]
    for t in range(1, n):
        tt = t if per_token else 0
        for c in range(n_labels):
            for p in range(n_labels):
                terms[p] = alpha[t - 1, p] + transition[tt, p, c]
            alpha[t, c] = emission[t, c] + log_sum_exp(terms)
    return alpha


@njit(cache=True, no_cpython_wrapper=True)
def _log_z_from_alpha(alpha, end):
    # log Z = logsumexp_c (alpha[n-1, c] + end[c])
    n, n_labels = alpha.shape
    terms = np.empty(n_labels)
    for c in range(n_labels):
        terms[c] = alpha[n - 1, c] + end[c]
    return log_sum_exp(terms)


@njit(cache=True, no_cpython_wrapper=True)
def _probability(log_score, log_z):
    """exp(log_score - log_z), exactly 0 for a masked (-inf) score."""
    if log_score == -np.inf:
        return 0.0
    return np.exp(log_score - log_z)


@njit(cache=True)
def log_partition(emission, transition, end):
    """log Z = log sum_y exp(score(y)) by the forward recursion alone.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    transition : ndarray of shape (m, L+1, L), m in {1, n}
    end : ndarray of shape (L,)

    Returns
    -------
    log_z : float
        -inf when every labeling is forbidden; 0.0 for an empty sentence.
    """
    n = emission.shape[0]
    if n == 0:
        return 0.0
    return _log_z_from_alpha(_forward(emission, transition), end)


@njit(cache=True)
def forward_backward(emission, transition, end):
    """Log partition function and posterior marginals of the linear chain.

    Parameters
    ----------
    emission : ndarray of shape (n, L)
    transition : ndarray of shape (m, L+1, L), m in {1, n}
    end : ndarray of shape (L,)

    Returns
    -------
    log_z : float
    node_marginals : ndarray of shape (n, L)
        node_marginals[t, c] = P(y_t = c | x).
    edge_marginals : ndarray of shape (n, L+1, L)
        edge_marginals[t, p, c] = P(y_{t-1} = p, y_t = c | x) for t >= 1 (row L is zero);
        edge_marginals[0, L, c] = P(y_0 = c | x) (rows p < L are zero).

    Forbidden entries get probability exactly 0. If every labeling is forbidden, log_z is -inf
    and all marginals are 0.
    """
    n, n_labels = emission.shape
    node = np.zeros((n, n_labels))
    edge = np.zeros((n, n_labels + 1, n_labels))
    if n == 0:
        return 0.0, node, edge
    per_token = transition.shape[0] > 1
    alpha = _forward(emission, transition)
    log_z = _log_z_from_alpha(alpha, end)
    if log_z == -np.inf:
        return log_z, node, edge

    # beta[n-1, p] = end[p]
    # beta[t, p] = logsumexp_c (transition[(t+1)', p, c] + emission[t+1, c] + beta[t+1, c])
    beta = np.empty((n, n_labels))
    terms = np.empty(n_labels)
    for p in range(n_labels):
        beta[n - 1, p] = end[p]
    for t in range(n - 2, -1, -1):
        tt = t + 1 if per_token else 0
        for p in range(n_labels):
            for c in range(n_labels):
                terms[c] = transition[tt, p, c] + emission[t + 1, c] + beta[t + 1, c]
            beta[t, p] = log_sum_exp(terms)

    # node[t, c] = exp(alpha[t, c] + beta[t, c] - log Z)
    for t in range(n):
        for c in range(n_labels):
            node[t, c] = _probability(alpha[t, c] + beta[t, c], log_z)
    # edge[t, p, c] = exp(alpha[t-1, p] + transition[t', p, c] + emission[t, c] + beta[t, c] - log Z)
    for c in range(n_labels):
        edge[0, n_labels, c] = node[0, c]
    for t in range(1, n):
        tt = t if per_token else 0
        for p in range(n_labels):
            for c in range(n_labels):
                edge[t, p, c] = _probability(
                    alpha[t - 1, p] + transition[tt, p, c] + emission[t, c] + beta[t, c], log_z
                )
    return log_z, node, edge


@njit(cache=True, inline="always")
def forward_backward_scaled(emission, transition, end):
    """``forward_backward`` with rescaled probabilities instead of log-sum-exp (same returns).

    Exponentiate once, shifted by the row maxima: E[t, c] = exp(emission[t, c] - e_t),
    T[t', p, c] = exp(transition[t', p, c] - r_t'), F[c] = exp(end[c] - f). Then
        alpha[0, c] = E[0, c] T[0', L, c] / s_0
        alpha[t, c] = E[t, c] sum_p alpha[t-1, p] T[t', p, c] / s_t
    with s_t the sum that makes alpha[t] sum to 1, and
        log Z = log(sum_c alpha[n-1, c] F[c]) + sum_t (log s_t + e_t + r_t') + f.
    beta is scaled by the same s_{t+1}, so node = alpha beta / Z' and edge = alpha T E beta /
    (s_t Z') with Z' = sum_c alpha[n-1, c] F[c]. A scale that under- or overflows (weights far
    larger than an L2-regularized model has) falls back to the log-space recursion.
    """
    n, n_labels = emission.shape
    m = transition.shape[0]
    node = np.zeros((n, n_labels))
    edge = np.zeros((n, n_labels + 1, n_labels))
    if n == 0:
        return 0.0, node, edge
    # exp_emission, exp_transition, transition_top, exp_end, alpha, scale, beta, weighted
    work = (np.empty((n, n_labels)), np.empty((m, n_labels + 1, n_labels)), np.empty(m), np.empty(n_labels),
            np.zeros((n, n_labels)), np.empty(n), np.empty((n, n_labels)), np.empty(n_labels))
    log_z = _scaled_recursion(emission, transition, end, node, edge, work)
    if np.isnan(log_z):
        return forward_backward(emission, transition, end)
    return log_z, node, edge


@njit(cache=True)
def _scaled_recursion(emission, transition, end, node, edge, work):
    """``forward_backward_scaled``'s recursion into node and edge, on borrowed arrays (``borrow.py``;
    the caller holds them); log Z, -inf when every labeling is forbidden, nan when a scale under-
    or overflows."""
    emission, transition, end, node, edge, work = borrowed((emission, transition, end, node, edge, work))
    exp_emission, exp_transition, transition_top, exp_end, alpha, scale, beta, weighted = work
    n, n_labels = emission.shape
    m = transition.shape[0]
    per_token = m > 1
    shift = 0.0
    # rows are taken as views indexed from 0: an index like [t, c] makes numba check for negative
    # indices at every step, which keeps the label loops from vectorizing
    for t in range(n):
        row, out = emission[t], exp_emission[t]
        top = -np.inf
        for c in range(n_labels):
            top = max(top, row[c])
        if top == -np.inf:
            return -np.inf
        shift += top
        for c in range(n_labels):
            out[c] = np.exp(row[c] - top)
    for tt in range(m):
        top = -np.inf
        for p in range(n_labels + 1):
            for c in range(n_labels):
                top = max(top, transition[tt, p, c])
        if top == -np.inf:
            return -np.inf
        transition_top[tt] = top
        for p in range(n_labels + 1):
            for c in range(n_labels):
                exp_transition[tt, p, c] = np.exp(transition[tt, p, c] - top)
    for t in range(n):
        shift += transition_top[t if per_token else 0]
    end_top = -np.inf
    for c in range(n_labels):
        end_top = max(end_top, end[c])
    if end_top == -np.inf:
        return -np.inf
    for c in range(n_labels):
        exp_end[c] = np.exp(end[c] - end_top)
    shift += end_top

    log_scale = 0.0
    for t in range(n):
        tt = t if per_token else 0
        if t == 0:
            for c in range(n_labels):
                alpha[0, c] = exp_emission[0, c] * exp_transition[0, n_labels, c]
        else:
            current, previous = alpha[t], alpha[t - 1]
            for p in range(n_labels):
                ap = previous[p]
                if ap != 0.0:
                    row = exp_transition[tt, p]
                    for c in range(n_labels):
                        current[c] += ap * row[c]
            row = exp_emission[t]
            for c in range(n_labels):
                current[c] *= row[c]
        current = alpha[t]
        total = 0.0
        for c in range(n_labels):
            total += current[c]
        if not (total > 1e-280) or not np.isfinite(total):
            return np.nan
        scale[t] = total
        log_scale += np.log(total)
        for c in range(n_labels):
            current[c] /= total
    z = 0.0
    for c in range(n_labels):
        z += alpha[n - 1, c] * exp_end[c]
    if not (z > 1e-280):
        return np.nan
    log_z = np.log(z) + log_scale + shift

    for p in range(n_labels):
        beta[n - 1, p] = exp_end[p]
    for t in range(n - 2, -1, -1):
        tt = t + 1 if per_token else 0
        row, following = exp_emission[t + 1], beta[t + 1]
        for c in range(n_labels):
            weighted[c] = row[c] * following[c]
        current = beta[t]
        for p in range(n_labels):
            row = exp_transition[tt, p]
            total = 0.0
            for c in range(n_labels):
                total += row[c] * weighted[c]
            current[p] = total / scale[t + 1]
    for t in range(n):
        out, a_t, b_t = node[t], alpha[t], beta[t]
        for c in range(n_labels):
            out[c] = a_t[c] * b_t[c] / z
    for c in range(n_labels):
        edge[0, n_labels, c] = node[0, c]
    for t in range(1, n):
        tt = t if per_token else 0
        norm = scale[t] * z
        row, b_t, previous = exp_emission[t], beta[t], alpha[t - 1]
        for c in range(n_labels):
            weighted[c] = row[c] * b_t[c] / norm
        for p in range(n_labels):
            ap = previous[p]
            row, out = exp_transition[tt, p], edge[t, p]
            for c in range(n_labels):
                out[c] = ap * row[c] * weighted[c]
    return log_z


@njit(cache=True, no_cpython_wrapper=True)
def _forward_candidates(emission, transition, cand_offsets, cand_labels):
    """alpha (cand_offsets[n],): alpha[cand_offsets[t] + j] = log of the summed exp-scores of the
    prefixes inside the candidate sets that end in c_j = cand_labels[cand_offsets[t] + j] at t."""
    # alpha[t, j] = emission[t, c_j] + logsumexp_i (alpha[t-1, i] + transition[t', c_i, c_j]), i over C_{t-1}
    n, n_labels = emission.shape
    per_token = transition.shape[0] > 1
    alpha = np.empty(cand_offsets[n])
    max_count = largest_set(cand_offsets)
    terms = np.empty(max_count)
    for j in range(cand_offsets[1]):
        c = cand_labels[j]
        alpha[j] = emission[0, c] + transition[0, n_labels, c]
    for t in range(1, n):
        tt = t if per_token else 0
        base_i, base_j = cand_offsets[t - 1], cand_offsets[t]
        n_i = base_j - base_i
        for j in range(cand_offsets[t + 1] - base_j):
            c = cand_labels[base_j + j]
            for i in range(n_i):
                terms[i] = alpha[base_i + i] + transition[tt, cand_labels[base_i + i], c]
            alpha[base_j + j] = emission[t, c] + log_sum_exp(terms[:n_i])
    return alpha


@njit(cache=True, no_cpython_wrapper=True)
def _log_z_candidates(alpha, end, cand_offsets, cand_labels):
    # log Z = logsumexp_j (alpha[n-1, j] + end[c_j]), j over C_{n-1}
    n = cand_offsets.shape[0] - 1
    base = cand_offsets[n - 1]
    terms = np.empty(cand_offsets[n] - base)
    for j in range(terms.shape[0]):
        terms[j] = alpha[base + j] + end[cand_labels[base + j]]
    return log_sum_exp(terms)


@njit(cache=True)
def forward_backward_candidates(emission, transition, end, cand_offsets, cand_labels):
    """``forward_backward`` over the labelings inside the candidate sets: the same returns, with
    probability 0 off the sets. Token t after token t-1 costs |C_t| |C_{t-1}| instead of L² (beside
    clearing the (n, L+1, L) edge array). With every label at every token it sums the same terms in
    the same order as ``forward_backward``."""
    n, n_labels = emission.shape
    node = np.zeros((n, n_labels))
    edge = np.zeros((n, n_labels + 1, n_labels))
    if n == 0:
        return 0.0, node, edge
    per_token = transition.shape[0] > 1
    alpha = _forward_candidates(emission, transition, cand_offsets, cand_labels)
    log_z = _log_z_candidates(alpha, end, cand_offsets, cand_labels)
    if log_z == -np.inf:
        return log_z, node, edge
    max_count = largest_set(cand_offsets)

    # beta[n-1, i] = end[c_i]
    # beta[t, i] = logsumexp_j (transition[(t+1)', c_i, c_j] + emission[t+1, c_j] + beta[t+1, j]), j over C_{t+1}
    beta = np.empty(cand_offsets[n])
    terms = np.empty(max_count)
    base = cand_offsets[n - 1]
    for i in range(cand_offsets[n] - base):
        beta[base + i] = end[cand_labels[base + i]]
    for t in range(n - 2, -1, -1):
        tt = t + 1 if per_token else 0
        base_i, base_j = cand_offsets[t], cand_offsets[t + 1]
        n_j = cand_offsets[t + 2] - base_j
        for i in range(base_j - base_i):
            p = cand_labels[base_i + i]
            for j in range(n_j):
                c = cand_labels[base_j + j]
                terms[j] = transition[tt, p, c] + emission[t + 1, c] + beta[base_j + j]
            beta[base_i + i] = log_sum_exp(terms[:n_j])

    for t in range(n):
        for j in range(cand_offsets[t], cand_offsets[t + 1]):
            node[t, cand_labels[j]] = _probability(alpha[j] + beta[j], log_z)
    for j in range(cand_offsets[1]):
        edge[0, n_labels, cand_labels[j]] = node[0, cand_labels[j]]
    for t in range(1, n):
        tt = t if per_token else 0
        for i in range(cand_offsets[t - 1], cand_offsets[t]):
            p = cand_labels[i]
            for j in range(cand_offsets[t], cand_offsets[t + 1]):
                c = cand_labels[j]
                edge[t, p, c] = _probability(alpha[i] + transition[tt, p, c] + emission[t, c] + beta[j], log_z)
    return log_z, node, edge
