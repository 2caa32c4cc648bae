"""L-BFGS, and OWL-QN when there is an L1 penalty: the batch solver of the crf rule (``solver="lbfgs"``),
beside the objective it minimizes (``objective.py``).

CRFsuite's objective and units (``train_lbfgs.c``): over the N training sentences,

    f(w) = -sum_i log P(y_i | x_i) + c1 ||w||_1 + c2 ||w||²

The crf rule's per-example strengths map onto it exactly: its penalty (N λ2 / 2) ||w||² + N λ1 ||w||_1
is c2 = N l2 / 2 and c1 = N l1 (so l2 = 0.2 / N, the rule's default, is c2 = 0.1: ``sgd.default_l2``).

With c1 = 0, f is smooth and scipy's L-BFGS-B minimizes it (``SteppedLBFGSB``). With c1 > 0, OWL-QN
(Andrew & Gao 2007, ``OWLQN``) minimizes it as liblbfgs does for CRFsuite: L-BFGS directions from
the smooth part's gradients, taken along the pseudo-gradient and kept in its orthant, and a
backtracking line search whose points are projected onto the orthant of the current point, so
that a weight that crosses zero stops at exactly zero.

Stopping, as CRFsuite: ``epsilon`` (‖g‖ / max(1, ‖w‖) < ε, with the pseudo-gradient under L1),
``period`` and ``delta`` ((f_{k - period} - f_k) / f_k < δ), and the iteration budget (the
training loop's epochs: one epoch is one iteration of the solver, so that dev scoring, progress
and best-epoch selection work unchanged).
"""
import queue
import threading
import weakref
from collections import deque

import numpy as np

from structperc.errors import ConfigError
from structperc.train.base import LearningRule, NON_NEGATIVE, NON_NEGATIVE_INTEGER, Param
from structperc.train.objective import CRFObjective, frozen_entries
from structperc.train.sgd import default_l2

MEMORY = 6  # corrections kept (CRFsuite's num_memories default)
MAX_LINESEARCH = 20  # CRFsuite's max_linesearch default
ARMIJO = 1e-4  # liblbfgs' ftol: sufficient decrease of the backtracking line search
EPSILON, PERIOD, DELTA = 1e-5, 10, 1e-5  # CRFsuite's defaults


def _steps():
    """The vector steps' kernels (``_kernels/learn/quasi_newton.py``), imported on first use."""
    from structperc._kernels.learn import quasi_newton

    return quasi_newton


def pseudo_gradient(x, g, c1):
    """The gradient of f + c1 ||x||_1 where it exists, else its minimum-norm subgradient (0 at a
    zero weight whose |g| <= c1): Andrew & Gao's ◇f."""
    pg = np.where(x > 0, g + c1, np.where(x < 0, g - c1, 0.0))
    at_zero = x == 0
    pg[at_zero & (g + c1 < 0)] = (g + c1)[at_zero & (g + c1 < 0)]
    pg[at_zero & (g - c1 > 0)] = (g - c1)[at_zero & (g - c1 > 0)]
    return pg


class StopTest:
    """CRFsuite's stopping tests after an iteration: the gradient norm and the relative improvement
    over the last ``period`` iterations. ``__call__`` (or ``test``, given the norms) returns the
    reason to stop, or None."""

    def __init__(self, epsilon, period, delta, f0):
        self.epsilon, self.period, self.delta = epsilon, period, delta
        self.past = deque([f0], maxlen=period) if period else None

    def __call__(self, f, x, g):
        norm = _steps().norm
        return self.test(f, norm(g), norm(x))

    def test(self, f, g_norm, x_norm):
        if g_norm / max(1.0, x_norm) < self.epsilon:
            return "epsilon"
        if self.past is not None:
            if len(self.past) == self.period and f != 0 and (self.past[0] - f) / abs(f) < self.delta:
                return "delta"
            self.past.append(f)
        return None


class OWLQN:
    """OWL-QN on F(x) = f(x) + c1 ||x||_1, one iteration per ``iterate`` (liblbfgs' algorithm).

    fun : x -> (f, g) of the smooth part; x0 : float64 (n,), the start.
    Each iteration searches along d from x by backtracking (step halved up to ``max_linesearch``
    times), each point p = x + step d projected onto the orthant of x (p_i = 0 where p_i would
    change sign; at x_i = 0 the orthant is that of -◇F_i), accepted when
        F(p) <= F(x) + 1e-4 ◇F(x) · (p - x).
    The next direction is -H ◇F(p) with H from the smooth gradients' corrections (a ring of
    ``memory`` pairs), with its entries that do not point against ◇F set to 0. The first step is
    1 / ‖d‖, the others 1. The vector steps are kernels (``quasi_newton``): a trial point is one
    call, the update after the line search another.
    """

    def __init__(self, fun, x0, c1, epsilon=EPSILON, period=PERIOD, delta=DELTA, memory=MEMORY,
                 max_linesearch=MAX_LINESEARCH):
        self.fun, self.c1, self.max_linesearch = fun, float(c1), max_linesearch
        self.x = np.array(x0, dtype=np.float64)
        n = len(self.x)
        self.s, self.y, self.ys = np.zeros((memory, n)), np.zeros((memory, n)), np.zeros(memory)
        smooth, self.g = fun(self.x)
        self.f = smooth + self.c1 * float(np.abs(self.x).sum())
        self.pg, self.direction = np.empty(n), np.empty(n)
        self.newest, self.count, pg_norm, self.x_norm = _steps().owlqn_update(
            (self.x, self.g), (self.x, self.g), self.c1, self.pg, (self.s, self.y, self.ys), (-1, 0), self.direction)
        self.step = 1.0 / pg_norm if pg_norm > 0 else 1.0
        self.stop_test = StopTest(epsilon, period, delta, self.f)
        self.stopped = None
        if pg_norm / max(1.0, self.x_norm) < epsilon:
            self.stopped = "epsilon"

    def iterate(self):
        """One iteration: line search, stopping tests, next direction. Returns the line search's
        evaluations; sets ``stopped`` to the reason when the run is over."""
        steps = _steps()
        x0, g0, pg0, f0 = self.x, self.g, self.pg, self.f
        step = self.step
        for trials in range(1, self.max_linesearch + 1):
            x = np.empty_like(x0)
            l1, slope = steps.orthant_point(x0, self.direction, step, pg0, x)
            smooth, g = self.fun(x)
            f = smooth + self.c1 * l1
            if f <= f0 + ARMIJO * slope:
                break
            step *= 0.5
        else:
            self.stopped = "line search"  # liblbfgs' LBFGSERR_MAXIMUMLINESEARCH: keep the last point
            return self.max_linesearch
        self.x, self.g, self.f = x, g, f
        self.pg = np.empty_like(x)
        self.newest, self.count, pg_norm, self.x_norm = steps.owlqn_update(
            (x, g), (x0, g0), self.c1, self.pg, (self.s, self.y, self.ys), (self.newest, self.count), self.direction)
        self.stopped = self.stop_test.test(f, pg_norm, self.x_norm)
        self.step = 1.0
        return trials


class _Stop(Exception):
    """Raised in scipy's callback to end a run that the training loop left."""


def _close(resume, thread):
    if thread is not None and thread.is_alive():
        resume.put(False)
        thread.join()


class SteppedLBFGSB:
    """scipy's L-BFGS-B on fun, one iteration per ``iterate``.

    scipy runs the whole minimization in one call; here it runs in a thread that waits in scipy's
    callback after each iteration until the next ``iterate`` (or ``close``, which ends it). Only
    one of the two threads runs at a time. scipy's own tolerances are off (ftol = gtol = 0):
    stopping is the caller's.
    """

    def __init__(self, fun, x0, memory=MEMORY, max_linesearch=MAX_LINESEARCH):
        self.fun, self.x0, self.memory, self.max_linesearch = fun, np.asarray(x0, dtype=np.float64), memory, \
            max_linesearch
        self.events, self.resume = queue.Queue(1), queue.Queue(1)
        self.thread = None
        self.finished = False
        self.message = None
        self._finalizer = None

    def _run(self):
        from scipy.optimize import minimize
        from threadpoolctl import threadpool_limits

        options = {"maxcor": self.memory, "maxls": self.max_linesearch, "ftol": 0.0, "gtol": 0.0,
                   "maxiter": np.iinfo(np.int32).max, "maxfun": np.iinfo(np.int32).max}
        try:
            # one BLAS thread: scipy's vector steps are short, and the BLAS threads spin while they
            # wait, taking the cores from the objective's threads
            with threadpool_limits(limits=1, user_api="blas"):
                result = minimize(self.fun, self.x0, jac=True, method="L-BFGS-B", callback=self._callback,
                                  options=options)
            self.events.put(("done", str(result.message)))
        except _Stop:
            pass
        except BaseException as error:  # noqa: BLE001  handed to the caller's thread, raised there
            self.events.put(("error", error))

    def _callback(self, intermediate_result):
        self.events.put(("iteration", (intermediate_result.x.copy(), float(intermediate_result.fun))))
        if not self.resume.get():
            raise _Stop

    def iterate(self):
        """(x, f) after scipy's next iteration, or None when scipy ended (``message`` says why)."""
        if self.finished:
            return None
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self._finalizer = weakref.finalize(self, _close, self.resume, self.thread)
            self.thread.start()
        else:
            self.resume.put(True)
        kind, payload = self.events.get()
        if kind == "error":
            self.finished = True
            raise payload
        if kind == "done":
            self.finished, self.message = True, payload
            return None
        return payload

    def close(self):
        """End scipy's thread (it is waiting in the callback) if it still runs."""
        if self._finalizer is not None:
            self._finalizer()
        self.finished = True


LBFGS_PARAMS = {
    "epsilon": Param(None, "lbfgs: stop when |g| / max(1, |w|) < epsilon (CRFsuite's default 1e-5)",
                     check=NON_NEGATIVE),
    "period": Param(None, "lbfgs: iterations over which delta is tested (CRFsuite's default 10)", int,
                    check=NON_NEGATIVE_INTEGER),
    "delta": Param(None, "lbfgs: stop when the objective improved by less than delta over period",
                   check=NON_NEGATIVE),
    "boundary": Param(None, "lbfgs: learn the start and end weights (default yes)", bool),
    "unseen_transitions": Param(None, "lbfgs: learn the transitions never seen in training (default yes)", bool),
}


class LBFGSRule(LearningRule):
    """A batch rule: each ``run`` is one iteration of L-BFGS (scipy's L-BFGS-B; OWL-QN when l1 > 0)
    on the CRF objective over every sentence (``objective.CRFObjective``), and ``converged`` ends the
    loop once CRFsuite's stopping tests are met. ``crf.CRFLBFGSRule`` is the crf rule run this way.

    ``end_epoch`` reports the objective (``loss``, to minimize), the active (nonzero) weights, their
    norm, and why the solver stopped, once it has. Checkpoints and parameter mixing do not apply
    (``supports``): the solver's curvature pairs and line search are not part of a saved state.
    """

    name = "lbfgs"
    params = {
        "l2": Param(None, "L2 strength per example (lambda); default 0.2 / N, i.e. CRFsuite's c2 = 0.1",
                    check=NON_NEGATIVE),
        "l1": Param(0.0, "L1 strength per example: OWL-QN's penalty", check=NON_NEGATIVE),
        **LBFGS_PARAMS,
    }
    probabilistic = True
    normalization = "global"
    orders = (1,)
    batch = True
    # the objective's kernels and their tables (``objective.py``; the log-space one of crf_scaled is
    # compiled only when weights too large for its rescaling need it), the solver's vector steps
    kernels = ("learn.crf_scaled.boundary_tables", "learn.crf_scaled.range_sums", "learn.crf_scaled.range_gradients",
               "learn.crf_scaled.finish",
               "learn.crf_tables.scaled_tables", "learn.crf_tables.feature_occurrences",
               "learn.crf_batch.crf_objective", "learn.quasi_newton.orthant_point", "learn.quasi_newton.owlqn_update",
               "learn.quasi_newton.norm")
    supports = frozenset({"l1"})

    @property
    def label(self):
        return f"{self.name} (solver lbfgs)"

    def _check(self, problem):
        if problem.model.order not in self.orders:
            raise ConfigError(f"the {self.label} trainer trains order 1, not order {problem.model.order}")

    def begin(self, problem):
        self._check(problem)
        self.problem = problem
        n = problem.n_sentences
        self.l2_ = float(self.l2) if self.l2 is not None else default_l2(n)
        self.c1, self.c2 = n * float(self.l1), n * self.l2_ / 2.0
        epsilon = EPSILON if self.epsilon is None else float(self.epsilon)
        period = PERIOD if self.period is None else int(self.period)
        delta = DELTA if self.delta is None else float(self.delta)
        layout, data = problem.model.layout(), problem.data
        frozen = frozen_entries(layout, data.gold, data.sentence_offsets, self.boundary is not False,
                                self.unseen_transitions is not False)
        self.objective = CRFObjective(layout, data, self.c2, frozen)
        x0 = problem.model.weights.copy()
        x0[frozen] = 0.0
        if self.c1 > 0:
            self.solver = OWLQN(self.objective, x0, self.c1, epsilon, period, delta)
            self.x, self.f = self.solver.x, self.solver.f
            self.stopped = self.solver.stopped
        else:
            self.solver = SteppedLBFGSB(self.objective, x0)
            self.x, self.f = x0, None
            self.stop_test = None
            self.stop_args = (epsilon, period, delta)
            self.stopped = None

    def run(self, visit_order):
        """One solver iteration over every sentence (``visit_order`` is ignored: the objective is a sum)."""
        before = self.objective.evaluations
        if self.stopped is None and isinstance(self.solver, OWLQN):
            self.solver.iterate()
            self.x, self.f, self.stopped = self.solver.x, self.solver.f, self.solver.stopped
        elif self.stopped is None:
            self._lbfgsb_iteration()
        return {"skipped": self.objective.skipped, "evaluations": self.objective.evaluations - before}

    def _lbfgsb_iteration(self):
        reached = self.solver.iterate()
        if reached is None:
            self.stopped = self.solver.message or "scipy"
            return
        if self.stop_test is None:  # scipy's first evaluation is at the start
            self.stop_test = StopTest(*self.stop_args, self.objective.initial_loss)
        self.x, self.f = reached
        _, g = self.objective.at(self.x)  # scipy's last evaluation is the accepted point
        self.stopped = self.stop_test(self.f, self.x, g)

    def converged(self):
        return self.stopped is not None

    def end_epoch(self):
        f = self.f if self.f is not None else float("nan")
        x_norm = self.solver.x_norm if isinstance(self.solver, OWLQN) else _steps().norm(self.x)
        stats = {"loss": f, "active_features": int(np.count_nonzero(self.x)), "feature_norm": float(x_norm)}
        if self.stopped is not None:
            stats["stopped"] = self.stopped
        return stats

    def weights(self):
        return self.x.copy()

    def final_weights(self):
        self.close()
        return self.x

    def close(self):
        """End scipy's thread, which holds the objective and its data (``SteppedLBFGSB.close``)."""
        if isinstance(getattr(self, "solver", None), SteppedLBFGSB):
            self.solver.close()

    def release(self):
        self.close()
        super().release()
