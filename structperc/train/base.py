"""The on-line training loop shared by every learning rule.

Following Zhang & Teng's presentation of discriminative linear classifiers, perceptron, log-linear
and large-margin training are one loop (shuffle, visit each example, ParameterUpdate) that differs
only in the update. A ``LearningRule`` supplies the update; ``train_online`` supplies the rest:
epochs, a fresh permutation per epoch, dev scoring, best-epoch selection and progress reports.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from structperc._kernels.records import Data
from structperc.errors import ConfigError

if TYPE_CHECKING:
    from structperc.model.linear_chain import LinearChainModel


@dataclass(frozen=True)
class Param:
    """One option of a learning rule, declared once in the rule's ``params``: its default, its
    type and the help text. ``Tagger``'s checks, the command line's options and their help, and
    the rule's constructor are derived from these declarations."""

    default: object
    help: str
    type: type = float


@dataclass
class Problem:
    """What a learning rule trains on: the model (its layout, mask and weights) and the kernels'
    record of the training data (``model.data(encoded)``)."""

    model: LinearChainModel
    data: Data
    resume: dict | None = None  # a rule's saved training state to continue from (``Tagger.partial_fit``)

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
      weighting), or None.
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

    def __init__(self, **options):
        for option in options:
            if option not in self.params:
                raise ConfigError(f"trainer {self.name!r} does not take option {option!r} "
                                  f"(it takes: {', '.join(self.params)})")
        for name, param in self.params.items():
            setattr(self, name, options.get(name, param.default))

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

    def release(self):
        """Drop the run's buffers and its problem once the weights are final, so that they are
        freed before the model is pruned and saved (``begin`` starts a new run). Arrays handed out
        by ``final_weights`` or ``save_state`` stay alive where they are held."""
        for name in [name for name in vars(self) if name not in self.params]:
            delattr(self, name)

    def save_state(self):
        """Everything a run needs to continue after an epoch: name -> ndarray or JSON-able scalar.
        The arrays may be the rule's own buffers (write them out before the next ``run``)."""
        raise NotImplementedError

    def load_state(self, problem, state):
        """Start on ``problem`` where the run that saved ``state`` stood, instead of ``begin``."""
        raise NotImplementedError


@dataclass
class EpochRecord:
    epoch: int
    seconds: float
    stats: dict
    dev: dict | None = None


@dataclass
class LoopState:
    """Where a run stands after ``epoch`` epochs: the rule's ``save_state()``, the epochs so far and the
    best dev epoch. With the seed, it determines the rest of the run: epoch e visits the sentences
    in the e-th permutation drawn from the seed."""

    epoch: int
    rule_state: dict
    history: list
    best_epoch: int
    best_score: float
    best_weights: np.ndarray | None


def train_online(rule, problem, epochs, seed=0, dev_score=None, progress=None, chunk_sentences=2000,
                 callback=None, checkpoint=None, resume=None, start_epoch=0):
    """Train ``rule`` for ``epochs`` passes; the best dev epoch's weights end up in the model.

    dev_score : callable(weights) -> dict with a "score" key (higher is better), or None (the last
        epoch's weights are kept). progress : callable(epoch, done, total, stats) or None.
    callback : callable(EpochRecord) called as each epoch ends, or None.
    checkpoint : callable(LoopState) called as each epoch ends (before ``callback``), or None.
    resume : a LoopState to continue from (``rule.load_state`` instead of ``rule.begin``); the run
        then ends as the uninterrupted run with the same seed would.
    start_epoch : epochs already run (continued training): their permutations are drawn and skipped,
        so that the visit orders continue the seed's sequence.
    Returns (history: list of EpochRecord, best_epoch).
    """
    rng = np.random.default_rng(seed)
    n = problem.n_sentences
    for _ in range(start_epoch):
        rng.permutation(n)
    if resume is None:
        rule.begin(problem)
        history, first = [], 1
        best_epoch, best_score, best_weights = 0, -np.inf, None
    else:
        rule.load_state(problem, resume.rule_state)
        history, first = list(resume.history), resume.epoch + 1
        best_epoch, best_score, best_weights = resume.best_epoch, resume.best_score, resume.best_weights
        for _ in range(resume.epoch):
            rng.permutation(n)  # the RNG where the interrupted run left it
    for epoch in range(first, epochs + 1):
        start = time.perf_counter()
        visit_order = rng.permutation(n).astype(np.int64)
        totals = {}
        chunk = max(n, 1) if rule.batch else chunk_sentences
        for lo in range(0, n, chunk):
            counts = rule.run(visit_order[lo: lo + chunk])
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
            if progress is not None:
                progress(epoch, min(lo + chunk, n), n, totals)
        totals.update(rule.end_epoch())
        record = EpochRecord(epoch, time.perf_counter() - start, totals)
        if dev_score is not None:
            weights = rule.weights()
            record.dev = dev_score(weights)
            if record.dev["score"] > best_score:
                best_epoch, best_score, best_weights = epoch, record.dev["score"], weights
        else:
            best_epoch = epoch
        history.append(record)
        if checkpoint is not None:
            checkpoint(LoopState(epoch, rule.save_state(), history, best_epoch, best_score, best_weights))
        if callback is not None:
            callback(record)
        if rule.converged():
            break
    problem.model.weights = best_weights if best_weights is not None else rule.final_weights()
    return history, best_epoch
