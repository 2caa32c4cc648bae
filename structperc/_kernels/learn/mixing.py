"""The weighted sum of the shards' weight vectors (``train/mixing.py``), in one pass per shard and
without temporary arrays: at millions of weights a temporary per shard costs more than the sum.
Each kernel works on the index range [lo, hi) and releases the GIL, so that threads can share a sum
and shards can jump in parallel."""
from numba import njit


@njit(cache=True, nogil=True)
def scale_into(out, w, mu, lo, hi):
    """out[lo:hi] <- mu * w[lo:hi]."""
    for i in range(lo, hi):
        out[i] = mu * w[i]


@njit(cache=True, nogil=True)
def add_scaled(out, w, mu, lo, hi):
    """out[lo:hi] <- out[lo:hi] + mu * w[lo:hi]."""
    for i in range(lo, hi):
        out[i] += mu * w[i]


@njit(cache=True, nogil=True)
def jump(w, u, credit, target, divisor):
    """A shard's jump to the mixed weights as one dense update that keeps the lazy average exact:
    new = target / divisor; u += credit * (new - w) (u of length 0: no average); w <- new.
    (The perceptron: w the weights, credit its example counter, divisor 1; the SGD rules: w = v,
    credit S_{k-1}, divisor the scale s.)"""
    averaging = u.shape[0] > 0
    for i in range(w.shape[0]):
        new = target[i] / divisor
        if averaging:
            u[i] += credit * (new - w[i])
        w[i] = new
