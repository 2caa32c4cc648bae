"""The vector steps of OWL-QN (``structperc.train.lbfgs``), one serial pass each.

numpy hands a dot product to the BLAS, whose threads wait for work by spinning: on a machine whose
cores are busy, each of the dozen dot products of an iteration waited for a descheduled thread,
and the solver's own steps took longer than the objective. Here an iteration's steps are two
kernel calls (the line search's trial point, then the update after it), on one thread, summed in
a fixed order.

The corrections are kept in a ring: s and y (m, n), ys (m,), ``newest`` the row of the newest pair
and ``count`` the pairs kept (oldest first at newest - count + 1, modulo m).
"""
import numpy as np
from numba import njit


@njit(cache=True)
def norm(a):
    """||a||_2, summed in index order."""
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * a[i]
    return np.sqrt(total)


@njit(cache=True, inline="always")
def _dot(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@njit(cache=True, inline="always")
def two_loop(direction, s, y, ys, newest, count):
    """direction <- H direction, for the L-BFGS inverse Hessian H of the ``count`` corrections of
    the ring (s, y, ys); H_0 = (s·y / y·y) I from the newest pair (Nocedal & Wright, algorithm 7.4)."""
    m, n = s.shape
    alphas = np.empty(m)
    j = newest
    for _ in range(count):
        alpha = _dot(s[j], direction) / ys[j]
        alphas[j] = alpha
        row = y[j]
        for i in range(n):
            direction[i] -= alpha * row[i]
        j = (j - 1) % m
    if count > 0:
        gamma = ys[newest] / _dot(y[newest], y[newest])
        for i in range(n):
            direction[i] *= gamma
    j = (newest - count + 1) % m
    for _ in range(count):
        beta = _dot(y[j], direction) / ys[j]
        row, step = s[j], alphas[j] - beta
        for i in range(n):
            direction[i] += step * row[i]
        j = (j + 1) % m


@njit(cache=True, inline="always")
def pseudo_gradient(x, g, c1, out):
    """out = the gradient of f + c1 ||x||_1 where it exists, else its minimum-norm subgradient (0 at
    a zero weight whose |g| <= c1): Andrew & Gao's ◇f. Returns ||out||_2."""
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            v = g[i] + c1
        elif x[i] < 0.0:
            v = g[i] - c1
        elif g[i] + c1 < 0.0:
            v = g[i] + c1
        elif g[i] - c1 > 0.0:
            v = g[i] - c1
        else:
            v = 0.0
        out[i] = v
        total += v * v
    return np.sqrt(total)


@njit(cache=True)
def orthant_point(x0, direction, step, pg0, out):
    """The line search's trial point: out = x0 + step d projected onto the orthant of x0 (at
    x0_i = 0, that of -pg0_i): an entry that would leave it is 0. Returns (||out||_1,
    pg0 · (out - x0))."""
    l1 = 0.0
    slope = 0.0
    for i in range(x0.shape[0]):
        if x0[i] != 0.0:
            sign = 1.0 if x0[i] > 0.0 else -1.0
        elif pg0[i] != 0.0:
            sign = -1.0 if pg0[i] > 0.0 else 1.0
        else:
            sign = 0.0
        v = x0[i] + step * direction[i]
        if v * sign <= 0.0:
            v = 0.0
        out[i] = v
        l1 += abs(v)
        slope += pg0[i] * (v - x0[i])
    return l1, slope


@njit(cache=True)
def owlqn_update(point, previous, c1, pg, ring, position, direction):
    """After the line search moved previous = (x0, g0) to point = (x, g) (the point and its smooth
    gradient): pg = ◇F(x); the pair (x - x0, g - g0) joins ring = (s, y, ys) when y · s > 1e-10 y · y
    (curvature: without it H would be indefinite); direction = -H pg with its entries that do not
    point against pg set to 0. With previous = point (the start) no pair joins. position =
    (newest, count) of the ring. Returns (newest, count, ||pg||, ||x||)."""
    x, g = point
    x0, g0 = previous
    s, y, ys = ring
    newest, count = position
    n = x.shape[0]
    m = ys.shape[0]
    pg_norm = pseudo_gradient(x, g, c1, pg)
    dot_ys = 0.0
    dot_yy = 0.0
    for i in range(n):
        si = x[i] - x0[i]
        yi = g[i] - g0[i]
        dot_ys += yi * si
        dot_yy += yi * yi
    if dot_ys > 1e-10 * dot_yy:
        newest = (newest + 1) % m
        s_row, y_row = s[newest], y[newest]
        for i in range(n):
            s_row[i] = x[i] - x0[i]
            y_row[i] = g[i] - g0[i]
        ys[newest] = dot_ys
        count = min(count + 1, m)
    for i in range(n):
        direction[i] = -pg[i]
    two_loop(direction, s, y, ys, newest, count)
    for i in range(n):
        if direction[i] * pg[i] >= 0.0:
            direction[i] = 0.0
    return newest, count, pg_norm, norm(x)
