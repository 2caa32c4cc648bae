"""Every @njit kernel of structperc, grouped by family: ``decode/`` (Viterbi, k-best, second order,
forward-backward, marginals), ``score/`` (score tables and the emission layout), ``learn/`` (one
module per learning rule's epoch, SGD's lazy scaling), ``encode/`` (template keys, hashing),
``rank/`` (rerankers) and ``cluster/`` (Brown). ``records.py`` holds the records they share,
``cache.py`` numba's on-disk cache of them (and the notice before compiling), ``threads.py`` the
threads that run a corpus kernel (serial, nogil) on every core, ``process.py`` the process-wide
settings they need. The ground floor: kernels import nothing of structperc.

Kernels take contiguous numpy arrays, scalars and the records of ``records.py`` (``Data``, the
encoded sentences; ``Layout``, the weight vector's blocks), validate nothing and raise nothing; the
public wrappers (``structperc.model.linear_chain``, ``structperc.estimator.marginals``,
``structperc.nbest.lists`` and the learning rules of ``structperc.train``) check their inputs first.
A kernel that only kernels call is compiled with ``no_cpython_wrapper=True``: numba builds no Python
entry point for it (the unboxing of its records and arrays, compiled in every process that compiles
the kernel, for nothing). Called from Python, it would crash the process: no Python code names one
(``tests/test_inner_kernels.py``).

Score conventions shared by all decoders (L labels, n tokens)::

    emission   float64 (n, L)          emission[t, c]: score of label c at token t
    transition float64 (m, L+1, L)     m is 1 (shared) or n (per token, observation-conditioned);
                                       transition[t', p, c]: score of c at t after p, where
                                       t' = t if m == n else 0 and p == L is the start state
                                       (used at t = 0)
    end        float64 (L,)            end[c]: score of finishing on c

    score(y) = sum_t emission[t, y_t] + transition[t', y_{t-1} (L at t=0), y_t] + end[y_{n-1}]

A forbidden transition or label is -inf in ``transition`` or ``emission``.
"""
from .process import configure as _configure

_configure()  # numba's settings for the kernels, before the first kernel module is imported (``process.py``)
