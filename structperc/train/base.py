"""The on-line training loop shared by every learning rule and every engine.

Following Zhang & Teng's presentation of discriminative linear classifiers, perceptron, log-linear
and large-margin training are one loop (shuffle, visit each example, ParameterUpdate) that differs
only in the update. A ``LearningRule`` supplies the update. An engine runs one epoch of it: here
(``SerialEngine``: a fresh permutation per epoch, progress reports) or as a round of iterative
parameter mixing on dask (``train.mixing.MixingEngine``). ``run_epochs`` supplies the rest for
both: epochs, dev scoring, best-epoch selection, checkpoints and resuming from one.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from structperc._kernels.records import Data
from structperc.errors import ConfigError

if TYPE_CHECKING:
    from structperc.model.linear_chain import LinearChainModel


@dataclass(frozen=True)
class Check:
    """What a value of an option must be: ``test(value)`` is true for a valid value, and ``words``
    says what it must be ("> 0", "an integer >= 0", ...) in the error."""

    test: Callable
    words: str


def _is_integer(value):
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and float(value).is_integer()


POSITIVE = Check(lambda v: v > 0, "> 0")
NON_NEGATIVE = Check(lambda v: v >= 0, ">= 0")
ABOVE_ONE = Check(lambda v: v > 1, "> 1")
BETWEEN_0_AND_1 = Check(lambda v: 0 < v < 1, "in (0, 1)")
POSITIVE_INTEGER = Check(lambda v: _is_integer(v) and v >= 1, "a positive integer")
NON_NEGATIVE_INTEGER = Check(lambda v: _is_integer(v) and v >= 0, "an integer >= 0")


@dataclass(frozen=True)
class Param:
    """One option of a learning rule, declared once in the rule's ``params``: its default, its
    type, the help text, the values it may take (``choices``, or a ``Check``). ``Tagger``'s checks,
    the command line's options and their help, and the rule's constructor are derived from these
    declarations; the rule's constructor refuses a value that fails them (``Param.validate``), so
    that a bad option is refused before any data is read."""

    default: object
    help: str
    type: type = float
    choices: tuple = ()  # the values allowed, when they are few names
    check: Check | None = None  # what any other value must be; None (the default unset) is always allowed

    def validate(self, name, value):
        """ConfigError naming ``name`` when ``value`` is not one this option takes."""
        if value is None:
            return
        if self.choices and value not in self.choices:
            raise ConfigError(f"{name} must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if self.check is not None:
            try:
                ok = bool(self.check.test(value))
            except TypeError:
                ok = False
            if not ok:
                raise ConfigError(f"{name} must be {self.check.words}, got {value!r}")


@dataclass
class Problem:
    """What a learning rule trains on: the model (its layout, mask and weights) and the kernels'
    record of the training data (``model.data(encoded)``)."""

    model: LinearChainModel
    data: Data
    continued: dict | None = None  # a model's kept training state to continue from (``Tagger.partial_fit``)

    @property
    def n_sentences(self) -> int:
        return len(self.data.sentence_offsets) - 1


class LearningRule:
    """Interface of one ParameterUpdate step. Subclasses override the three methods.

    A rule declares, once, everything the rest of the package derives from it:

    - ``name``: its name in ``TRAINERS`` (``--trainer``);
    - ``params``: its options, name -> ``Param`` (default, help, type); the constructor takes
      exactly these keywords, and ``Tagger`` and the command line derive their checks and
      options from them;
    - ``probabilistic``: whether its weights define P(y | x) (marginals, probabilities);
    - ``orders``: the label orders it trains;
    - ``normalization``: "global" (one distribution per sentence) or "local" (per token, MEMM);
    - ``kernels``: the entry points of one epoch ("family.module.function" under
      ``structperc._kernels``), and ``l1_kernels`` those of an epoch with the L1 penalty, for the
      "compiling kernels" notice and the warm-up;
    - ``mistakes``: the counter of ``run`` that counts mistakes (parameter mixing's "errors"
      weighting), or None;
    - ``epochs``: the passes over the training data when the user gives none (``Tagger(epochs=None)``,
      ``train`` without ``--epochs``); with ``stopping``, the most of them;
    - ``stopping``: a ``Plateau`` that ends such a run once the rule's training figures stop
      improving, or None (every one of ``epochs``);
    - ``supports``: what the engines may ask of it beyond serial training, a subset of
      ``CAPABILITIES``. "checkpoint": ``save_state`` and ``load_state`` (checkpoints, resuming);
      "mixing": ``raw_weights`` and ``reset_weights`` (parameter mixing on dask); "l1": the option
      ``l1`` > 0. ``check_run`` refuses anything else before the first epoch.

    ``variant(options)`` names the class that runs a given set of options (the crf rule's
    ``solver="lbfgs"`` runs as ``lbfgs.LBFGSRule``); ``make_rule`` builds that class.
    """

    name = "rule"
    params: dict = {}
    probabilistic = False
    orders = (1, 2)
    normalization = "global"
    kernels: tuple = ()
    l1_kernels: tuple = ()
    mistakes = None
    batch = False  # a batch solver: ``run`` gets every sentence at once and makes one iteration
    epochs = 10
    stopping = None
    supports = frozenset()
    warmup_options: dict = {}  # options that let the warm-up run an epoch without a calibration

    @classmethod
    def variant(cls, options):
        """The class that trains with ``options`` (this one unless a subclass says otherwise)."""
        return cls

    @property
    def label(self):
        """How errors name this rule: its name, and its solver where it has several."""
        return self.name

    def check_run(self, order=1, mixing=False, checkpoint=False):
        """ConfigError, before any training, for what this rule cannot do: a label ``order`` outside
        ``orders``, parameter ``mixing``, a ``checkpoint`` (writing or resuming one), or ``l1`` > 0
        (when the rule has that option) without "l1" in ``supports``."""
        if order not in self.orders:
            raise ConfigError(f"the {self.label} trainer trains order {' or '.join(map(str, self.orders))}, "
                              f"not order {order}")
        asked = {"mixing": (mixing, "parameter mixing (workers > 1 or a scheduler)"),
                 "checkpoint": (checkpoint, "checkpoints (checkpoint, resume, resumable)"),
                 "l1": (float(getattr(self, "l1", 0.0) or 0.0) > 0, "l1 > 0")}
        for capability, (wanted, what) in asked.items():
            if wanted and capability not in self.supports:
                raise ConfigError(f"the {self.label} trainer does not support {what}")

    def __init__(self, **options):
        for option, value in options.items():
            if option not in self.params:
                raise ConfigError(f"trainer {self.name!r} does not take option {option!r} "
                                  f"(it takes: {', '.join(self.params)})")
            self.params[option].validate(option, value)
        for name, param in self.params.items():
            setattr(self, name, options.get(name, param.default))
        self.check_options()

    def check_options(self):
        """ConfigError for options that are valid one by one but not together (a subclass's)."""

    def begin(self, problem):
        """Allocate state for a run on ``problem`` (weights start at problem.model.weights)."""
        raise NotImplementedError

    def run(self, visit_order):
        """Visit the sentences ``visit_order`` (int64 array), updating the weights; return counters."""
        raise NotImplementedError

    def weights(self):
        """The weights to use now (averaged, rescaled ...), as a new array."""
        raise NotImplementedError

    def final_weights(self):
        """The weights to keep after the last epoch; may reuse the rule's buffers."""
        return self.weights()

    def converged(self):
        """True once the rule's own stopping test (a batch solver's) ends the run before the epochs."""
        return False

    def end_epoch(self):
        """Per-epoch numbers to report beside the counters of ``run`` (e.g. the objective)."""
        return {}

    def close(self):
        """End whatever the run holds beyond its buffers (a solver's thread); ``run_epochs`` calls
        it however the run ends, an error or an interrupt included. The weights stay readable."""

    def release(self):
        """Drop the run's buffers and its problem once the weights are final, so that they are
        freed before the model is pruned and saved (``begin`` starts a new run). Arrays handed out
        by ``final_weights`` or ``save_state`` stay alive where they are held."""
        for name in [name for name in vars(self) if name not in self.params]:
            delattr(self, name)

    # "checkpoint" in ``supports``
    def save_state(self):
        """Everything a run needs to continue after an epoch: name -> ndarray or JSON-able scalar.
        The arrays may be the rule's own buffers (write them out before the next ``run``)."""
        raise NotImplementedError

    def load_state(self, problem, state):
        """Start on ``problem`` where the run that saved ``state`` stood, instead of ``begin``."""
        raise NotImplementedError

    # "mixing" in ``supports``
    def raw_weights(self):
        """(v, s): the current (not averaged) weights are s v. v may be the rule's own buffer, valid
        until the next ``run`` or ``reset_weights`` (parameter mixing reads it in between)."""
        raise NotImplementedError

    def reset_weights(self, weights):
        """Continue from the weights ``weights`` (parameter mixing), keeping any average exact."""
        raise NotImplementedError

    def training_state(self):
        """What a resumable model keeps to continue training later (``partial_fit``) beyond its
        weights: name -> ndarray or number, read back through ``problem.continued`` by ``begin``.
        Empty: the rule continues from the kept weights with a fresh schedule and average."""
        return {}


class LazyAverage:
    """The lazily kept average of the rules that average over every example visit (perceptron,
    passive-aggressive, Winnow): the raw weights ``w``, the sums ``u`` of counter * change, and the
    example ``counter``; the mean of every w held after an example is w - u / counter."""

    def weights(self):
        if self.average and self.counter > 0:
            return self.w - self.u / self.counter
        return self.w.copy()

    def final_weights(self):
        if self.average and self.counter > 0:
            # avg = w - u / c, computed in the buffer of u
            self.u /= -self.counter
            self.u += self.w
            return self.u
        return self.w


@dataclass(frozen=True)
class Plateau:
    """The stopping rule of a run given no number of epochs: it ends once the epoch's figure ``key``
    (a counter of ``run`` or a figure of ``end_epoch``) has gone ``patience`` epochs without a new
    best, and at least ``least`` epochs have run. A new best beats the best so far by more than
    ``threshold`` times its size; ``higher``: whether higher is better (an objective) or lower (a
    count of mistakes). It reads the training data's own figures, so that every sentence trains and
    no held-out slice is set aside: a slice's score turned out too noisy to stop on
    (experiments/results/stopping.md, ``make stopping``). A run without the figure never stops by it.
    """

    key: str
    higher: bool = False
    threshold: float = 0.0
    patience: int = 2
    least: int = 5

    def __call__(self, history):
        """Whether the run whose epochs so far are ``history`` (EpochRecords, first to last) ends now."""
        best, since = None, 0
        for record in history:
            if self.key not in record.stats:
                return False
            value = record.stats[self.key] if self.higher else -record.stats[self.key]
            if best is None or value > best + self.threshold * abs(best):
                best, since = value, 0
            else:
                since += 1
        return len(history) >= self.least and since >= self.patience

    def __str__(self):
        best = "a new high" if self.higher else "a new low"
        by = f" by more than {self.threshold:.0%}" if self.threshold else ""
        return f"stop once {self.key} has not reached {best}{by} for {self.patience} epochs (at least {self.least})"


@dataclass
class EpochRecord:
    epoch: int
    seconds: float
    stats: dict
    dev: dict | None = None
    final: bool = False  # the run ends after this epoch (its last, its stopping rule, or convergence)


@dataclass
class LoopState:
    """Where a run stands after ``epoch`` epochs: the engine's ``save_state()`` (the rule's, or every
    shard's under parameter mixing), the epochs so far and the best dev epoch. With the seed, it
    determines the rest of the run: epoch e visits the sentences in the e-th permutation drawn from
    the seed.

    weights : callable giving the weights to use now (what a checkpoint's model holds), computed at
        most once per epoch; None in a state read back from a checkpoint.
    """

    epoch: int
    rule_state: dict
    history: list
    best_epoch: int
    best_score: float
    best_weights: np.ndarray | None
    weights: Callable[[], np.ndarray] | None = field(default=None, repr=False, compare=False)


class SerialEngine:
    """Epochs of ``rule`` on ``problem`` in this process: epoch e visits every sentence in the e-th
    permutation drawn from ``seed``, in calls of ``chunk_sentences`` sentences (progress between).

    progress : callable(epoch, done, total, stats) or None.
    """

    def __init__(self, rule, problem, seed=0, progress=None, chunk_sentences=2000):
        self.rule, self.problem, self.seed = rule, problem, seed
        self.progress, self.chunk_sentences = progress, chunk_sentences

    def start(self, state=None, skip=0):
        """Begin the run (``rule.begin``), or continue it from ``state`` (a ``save_state()``);
        skip : the epochs already run, whose permutations are drawn and dropped."""
        self.rng = np.random.default_rng(self.seed)
        for _ in range(skip):
            self.rng.permutation(self.problem.n_sentences)
        if state is None:
            self.rule.begin(self.problem)
        elif "shards" in state:
            raise ConfigError(f"the checkpoint was written by parameter mixing over {state['shards']} shards; "
                              "this run is serial")
        else:
            self.rule.load_state(self.problem, state)

    def epoch(self, epoch):
        """One pass over every sentence; returns the rule's counters and ``end_epoch`` figures."""
        n = self.problem.n_sentences
        step = max(n, 1) if self.rule.batch else self.chunk_sentences  # a batch solver sees every sentence
        visit_order = self.rng.permutation(n).astype(np.int64)
        totals = {}
        for lo in range(0, n, step):
            counts = self.rule.run(visit_order[lo: lo + step])
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
            if self.progress is not None:
                self.progress(epoch, min(lo + step, n), n, totals)
        totals.update(self.rule.end_epoch())
        return totals

    def weights(self):
        """The weights to use now, as a new array."""
        return self.rule.weights()

    def final_weights(self):
        """The weights to keep after the last epoch (may reuse the rule's buffers)."""
        return self.rule.final_weights()

    def converged(self):
        """Whether the rule has met its own stopping test (a batch solver's convergence)."""
        return self.rule.converged()

    def save_state(self):
        """The rule's ``save_state()`` (its own buffers: written out before the next epoch)."""
        return self.rule.save_state()

    def close(self):
        """The rule's ``close()``: the run is over, however it ended."""
        self.rule.close()


def run_epochs(engine, epochs, dev_score=None, callback=None, checkpoint=None, resume=None, start_epoch=0,
               stop=None):
    """Run ``engine`` (``SerialEngine`` or ``mixing.MixingEngine``) for ``epochs`` epochs, or until
    ``stop``; the best dev epoch's weights (the last epoch's without ``dev_score``) end up in
    ``engine.problem.model``.

    dev_score : callable(weights) -> dict with a "score" key (higher is better), or None.
    callback : callable(EpochRecord) called as each epoch ends, or None.
    checkpoint : callable(LoopState) called as each epoch ends (before ``callback``), or None.
    resume : a LoopState to continue from; the run then ends as the uninterrupted run with the same
        seed would.
    start_epoch : epochs already run (continued training): their permutations are drawn and skipped,
        so that the visit orders continue the seed's sequence.
    stop : callable(history) -> bool (a rule's ``Plateau``), asked after each epoch whether the run
        ends there, or None.
    Returns (history: list of EpochRecord, best_epoch).
    """
    try:
        if resume is None:
            engine.start(None, start_epoch)
            history, first = [], 1
            best_epoch, best_score, best_weights = 0, -np.inf, None
        else:
            engine.start(resume.rule_state, start_epoch + resume.epoch)
            history, first = list(resume.history), resume.epoch + 1
            best_epoch, best_score, best_weights = resume.best_epoch, resume.best_score, resume.best_weights
            if stop is not None and stop(history):
                first = epochs + 1  # the run ended where its checkpoint was written
        for epoch in range(first, epochs + 1):
            start = time.perf_counter()
            totals = engine.epoch(epoch)
            record = EpochRecord(epoch, time.perf_counter() - start, totals)
            current = functools.cache(engine.weights)  # dev scoring and the checkpoint share one copy
            if dev_score is not None:
                record.dev = dev_score(current())
                if record.dev["score"] > best_score:
                    best_epoch, best_score, best_weights = epoch, record.dev["score"], current()
            else:
                best_epoch = epoch
            history.append(record)
            record.final = epoch == epochs or (stop is not None and stop(history)) or engine.converged()
            if checkpoint is not None:
                checkpoint(LoopState(epoch, engine.save_state(), history, best_epoch, best_score, best_weights,
                                     current))
            if callback is not None:
                callback(record)
            del current  # the cached copy is freed before ``final_weights`` builds the last one
            if record.final:
                break
        engine.problem.model.weights = best_weights if best_weights is not None else engine.final_weights()
    finally:
        engine.close()  # an error or an interrupt too: a solver's thread must not outlive the run
    return history, best_epoch


def train_online(rule, problem, epochs, seed=0, dev_score=None, progress=None, chunk_sentences=2000,
                 callback=None, checkpoint=None, resume=None, start_epoch=0, stop=None):
    """Train ``rule`` serially for ``epochs`` passes (``SerialEngine``, ``run_epochs``); the best
    dev epoch's weights end up in the model. Arguments as in ``run_epochs`` and ``SerialEngine``.
    Returns (history: list of EpochRecord, best_epoch)."""
    engine = SerialEngine(rule, problem, seed, progress, chunk_sentences)
    return run_epochs(engine, epochs, dev_score, callback, checkpoint, resume, start_epoch, stop)
