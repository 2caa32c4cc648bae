"""Iterative parameter mixing (McDonald, Hall & Mann 2010) on dask.distributed.

The training sentences are split into S shards, one per worker; a shard's data and its learning
rule stay on its worker for the whole run (a dask Actor). Each epoch every shard runs one pass
of the rule over its own sentences, starting from the current mixed weights; then the client mixes
the shards' weights, w = sum_i μ_i w_i, with μ_i = 1 / S (``uniform``) or μ_i proportional to
the mistakes shard i made in the epoch (``errors``, the paper's error-weighted mixing).

What is averaged. Every rule keeps its own lazy average on its shard, and the jump to the mixed
weights at the start of an epoch is one more (dense) update of that shard (``reset_weights`` of
each rule derives why the lazy sums stay exact). So shard i's average is avg_i = (1 / c_i)
sum_t w_i,t over the c_i weight vectors it held after each of its examples (for the SGD rules,
after each of its steps), and
    sum_i (c_i / C) avg_i = (1 / C) sum_i sum_t w_i,t,      C = sum_i c_i,
the mean of every weight vector any shard held: with S = 1 exactly the serial average.

Visit order. Each shard draws the same global permutation as the serial loop
(``default_rng(seed).permutation(n)`` per epoch) and visits its own sentences in that order, so
one shard replays the serial run exactly and any S is deterministic. The mixing sums in shard
order, never in completion order: the same seed and S give the same model bytes.

Epochs, dev scoring, best-epoch choice and checkpoints are the serial loop's (``base.run_epochs``):
``MixingEngine`` runs one epoch as one mixing round. A checkpoint holds every shard's rule state
and the mixed weights, so a run resumed from it ends as the uninterrupted run (with as many shards).
"""
from __future__ import annotations

import os
import warnings
from contextlib import contextmanager

import numpy as np

from structperc.errors import ConfigError, StructpercError
from structperc._kernels.encode.csr import gather_rows
from structperc._kernels.threads import over_items
from structperc.train.base import Problem, run_epochs

MIXES = ("uniform", "errors")
CONNECT_TIMEOUT = "5s"


class EngineError(StructpercError):
    """The cluster cannot be reached, or a worker was lost during training."""


def shard_sentences(n_sentences, n_shards):
    """Sentence indices of each shard, strided (sentence s goes to shard s mod S): every shard gets
    a sample of the whole corpus, however it is ordered."""
    return [np.arange(i, n_sentences, n_shards, dtype=np.int64) for i in range(n_shards)]


def subset_data(data, sentences):
    """The ``Data`` record of the sentences ``sentences`` (ascending int64) of ``data``, its offsets
    rebased to the subset."""
    so = data.sentence_offsets
    sentence_offsets, tokens = gather_rows(so, np.arange(so[-1], dtype=np.int64), sentences)
    feature_offsets, feature_ids = gather_rows(data.feature_offsets, data.feature_ids, tokens)
    if len(data.pair_offsets):
        pair_offsets, pair_ids = gather_rows(data.pair_offsets, data.pair_ids, tokens)
    else:  # no pair templates: no pair arrays
        pair_offsets, pair_ids = data.pair_offsets, data.pair_ids
    gold = data.gold[tokens] if len(data.gold) else data.gold
    if len(data.cand_offsets):
        cand_offsets, cand_labels = gather_rows(data.cand_offsets, data.cand_labels, tokens)
    else:
        cand_offsets, cand_labels = data.cand_offsets, data.cand_labels
    feature_values = data.feature_values
    if len(feature_values):  # real-valued features: the values of the same entries as feature_ids
        _, feature_values = gather_rows(data.feature_offsets, feature_values, tokens)
    return type(data)(sentence_offsets.astype(so.dtype), feature_offsets, feature_ids, pair_offsets, pair_ids,
                      gold, cand_offsets, cand_labels, feature_values, data.dictionary, data.partial)


class ShardModel:
    """What a learning rule needs of a model on a worker: the layout, the order and the weights."""

    def __init__(self, layout, weights):
        self._layout = layout
        self.order = layout.order
        self.weights = weights

    def layout(self):
        return self._layout


class Shard:
    """One shard's learning rule over its sentences; lives on one worker for the whole run.

    data holds the shard's sentences (at ``positions``): its own subset (``subset_data``), or, on a
    worker in the client's process, the whole corpus, shared and never copied."""

    def __init__(self, rule, layout, data, sentences, positions, n_total, seed, weights, state=None, skip=0):
        self.rule = rule
        # from zeros (a fresh run), np.zeros leaves the pages to be mapped as the epochs touch them
        start = weights.copy() if weights.any() else np.zeros(weights.shape)
        problem = Problem(ShardModel(layout, start), data)
        if state is None:
            self.rule.begin(problem)
        else:  # where the shard stood after the checkpoint's epoch
            self.rule.load_state(problem, state)
        self.local = np.full(n_total, -1, dtype=np.int64)
        self.local[sentences] = positions
        self.rng = np.random.default_rng(seed)
        for _ in range(skip):  # the permutations of the epochs already run
            self.rng.permutation(n_total)

    def epoch(self, weights=None):
        """One pass from ``weights`` (None: from the current weights); returns (counters, the
        non-averaged weights reached as (array, scale): on a worker in the client's process the
        array is the rule's own buffer, read by the client before the next call)."""
        order = self.local[self.rng.permutation(len(self.local))]
        order = order[order >= 0]
        if weights is not None:
            self.rule.reset_weights(weights)
        counts = dict(self.rule.run(order))
        counts.update(self.rule.end_epoch())
        return counts, self.rule.raw_weights()

    def final(self):
        """``averaged`` once training is over: the rule may build the weights in its own buffers."""
        return self.rule.final_weights(), self._averaged_count()

    def averaged(self):
        """(the rule's weights now, what its average counts: examples or SGD steps)."""
        return self.rule.weights(), self._averaged_count()

    def save_state(self):
        """The rule's ``save_state()``: its arrays may be its own buffers, read before the next call."""
        return self.rule.save_state()

    def _averaged_count(self):
        from structperc._kernels.learn.sgd import STEPS  # here: the command line imports this module, not its kernels

        rule = self.rule
        return float(rule.counter if hasattr(rule, "counter") else rule.state[STEPS])


def check_mix(mix, rule):
    """ValueError for an unknown mix; ConfigError for an error-weighted mix of a rule that counts
    no mistakes."""
    if mix not in MIXES:
        raise ValueError(f"unknown mix {mix!r}: choose one of {', '.join(MIXES)}")
    if mix == "errors" and rule.mistakes is None:
        raise ConfigError(f"mix='errors' needs a rule that counts mistakes; the {rule.name} trainer counts none "
                          f"(use mix='uniform')")


def mixing_weights(mix, mistakes):
    """μ of each shard: 1 / S, or proportional to ``mistakes`` (uniform when no shard erred)."""
    mistakes = np.asarray(mistakes, dtype=np.float64)
    if mix == "errors" and mistakes.sum() > 0:
        return mistakes / mistakes.sum()
    return np.full(len(mistakes), 1.0 / len(mistakes))


def mix_weights(weights, mu, out=None, threads=1):
    """sum_i μ_i w_i into ``out`` (a new array when None). Every index sums the shards in shard
    order, so the result depends neither on timing nor on ``threads``, the number of threads that
    each sum a block of the indices."""
    from structperc._kernels.learn.mixing import add_scaled, scale_into

    if out is None:
        out = np.empty_like(weights[0])

    def block(lo, hi):
        scale_into(out, weights[0], float(mu[0]), lo, hi)
        for m, w in zip(mu[1:], weights[1:]):
            add_scaled(out, w, float(m), lo, hi)

    over_items(block, len(out), chunks_per_thread=1, threads=max(threads, 1))
    return out


def combine_averages(averaged, out=None, threads=1):
    """The weights to use from the shards' (weights, count): sum_i (c_i / C) avg_i for an averaged
    rule (into ``out`` if given); one shard's own weights when S = 1."""
    if len(averaged) == 1:
        return averaged[0][0]
    total = sum(c for _, c in averaged)
    if total <= 0:
        total, averaged = len(averaged), [(w, 1.0) for w, _ in averaged]
    return mix_weights([w for w, _ in averaged], np.array([c / total for _, c in averaged]), out=out,
                       threads=threads)


def shard_options(rule, problem):
    """The options of the shards' copies of ``rule``, with what depends on the whole corpus settled
    here: the SGD rules' l2 (its default comes from the corpus size) and eta0 (calibrated on a
    sample of the whole corpus), so that every shard optimizes the same objective."""
    options = {name: getattr(rule, name) for name in rule.params}
    if "l2" in options:
        rule.begin(problem)
        options["l2"], options["eta0"] = rule.l2_, rule.eta0_
        rule.v = rule.u = None  # the client trains nothing
    return options


def _lost(when):
    return EngineError(f"worker lost {when}; no model written")


def _worker_lost(error):
    """Whether ``error`` is what dask raises when a worker or its connection goes away, as opposed to
    an exception raised by a shard's own code, which reaches the client with its type and message."""
    import asyncio
    import concurrent.futures

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    lost = (CommClosedError, KilledWorker, OSError, TimeoutError, asyncio.TimeoutError, asyncio.CancelledError,
            concurrent.futures.CancelledError)
    # an actor whose worker is gone: "Worker holding Actor was lost"
    return isinstance(error, lost) or (type(error) is RuntimeError and "was lost" in str(error))


def _call(actors, method, when, *args):
    """``method(*args)`` on every shard's actor, in parallel; the results in shard order (``_results``)."""
    return _results(lambda: [getattr(actor, method)(*args) for actor in actors], when)


def _results(futures, when):
    """The results of the futures that ``futures()`` starts, in order. A lost worker is an
    EngineError saying ``when``; any other exception, raised by a shard's code on its worker, is
    raised here as it was (its type and message)."""
    try:
        return [future.result() for future in futures()]
    except StructpercError:
        raise
    except Exception as error:  # noqa: BLE001
        if _worker_lost(error):
            raise _lost(when) from None
        raise


def _start_actors(futures):
    return _results(lambda: futures, "while the shards were sent")


class MixingEngine:
    """Epochs as rounds of iterative parameter mixing over the workers of a dask ``client``: the
    engine ``run_epochs`` drives in place of ``base.SerialEngine`` (same ``start``, ``epoch``,
    ``weights``, ``final_weights``, ``save_state``).

    mix : "uniform" or "errors"; n_shards : default one per worker; share : whether the shards read
    the client's corpus in place instead of a copy of their sentences each (default: when the
    workers are threads of this process). progress : callable(epoch, done, total, stats), called
    once per epoch.

    Its state (``save_state``) holds every shard's rule state, as ``shard{i}__NAME``, the mixed
    weights and the number of shards: a run resumes from it only with as many shards.
    """

    def __init__(self, rule, problem, client, seed=0, mix="uniform", progress=None, n_shards=None, share=None):
        check_mix(mix, rule)
        self.workers = sorted(client.scheduler_info(n_workers=-1)["workers"]) if n_shards is None else None
        if self.workers is not None and not self.workers:
            raise EngineError("the dask cluster has no workers")
        self.rule, self.problem, self.client, self.seed, self.mix = rule, problem, client, seed, mix
        self.progress = progress
        self.n_shards = n_shards or len(self.workers)
        # workers that are threads of this process (the default LocalCluster) share the corpus
        self.shared = str(client.scheduler.address).startswith("inproc://") if share is None else share
        self.threads = min(self.n_shards, os.cpu_count() or 1)

    def start(self, state=None, skip=0):
        """Send every shard its sentences and its copy of the rule, fresh or at ``state``; skip :
        the epochs already run (their permutations are drawn and dropped)."""
        if state is not None and state.get("shards") != self.n_shards:
            written = f"mixing over {state['shards']} shards" if "shards" in state else "a serial run"
            raise ConfigError(f"the checkpoint was written by {written}; this run mixes {self.n_shards} shards")
        problem, n = self.problem, self.problem.n_sentences
        layout, weights = problem.model.layout(), problem.model.weights
        options = shard_options(self.rule, problem)
        actors = []
        for i, sentences in enumerate(shard_sentences(n, self.n_shards)):
            shard = type(self.rule)(**options)
            target = {"workers": [self.workers[i % len(self.workers)]]} if self.workers else {}
            if self.shared:
                data, positions = problem.data, sentences
            else:
                data, positions = subset_data(problem.data, sentences), np.arange(len(sentences), dtype=np.int64)
            shard_state = None
            if state is not None:
                prefix = f"shard{i}__"
                shard_state = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
            with warnings.catch_warnings():
                # the shard's data is large and is meant to travel once, with the actor that keeps it
                warnings.filterwarnings("ignore", message="Sending large graph")
                future = self.client.submit(Shard, shard, layout, data, sentences, positions, n, self.seed, weights,
                                            shard_state, skip, actor=True, pure=False, **target)
            actors.append(future)
            del data, shard_state
        self.actors = _start_actors(actors)
        self.epoch_number = skip
        self.buffer = np.empty_like(weights)  # the mixed weights, rewritten after each epoch
        self.mixed = None  # None: the shards go on from their own weights
        if state is not None:
            self.buffer[:] = state["mixed"]
            self.mixed = self.buffer

    def epoch(self, epoch):
        """Every shard's pass from the mixed weights, then the mix; returns the summed counters
        (objective and eta: their mean over the shards)."""
        self.epoch_number = epoch
        # every shard has read ``mixed`` (its jump) by the time it returns, so it can be rewritten.
        # One shard goes on from its own weights: the mix of one is them, and a jump to s v / s
        # would only round v (one worker is then the serial run exactly)
        start = self.mixed if len(self.actors) > 1 else None
        results = _call(self.actors, "epoch", f"during epoch {epoch}", start)
        counts = [c for c, _ in results]
        mistakes = [c.get(self.rule.mistakes, 0) if self.rule.mistakes else 0 for c in counts]
        mu = mixing_weights(self.mix, mistakes) * np.array([scale for _, (_, scale) in results])
        self.mixed = mix_weights([w for _, (w, _) in results], mu, out=self.buffer, threads=self.threads)
        del results
        totals = {}
        for c in counts:
            for k, v in c.items():
                totals[k] = totals.get(k, 0) + v
        for k in ("objective", "eta"):
            if k in totals:  # per-shard figures: report the mean, not the sum
                totals[k] /= len(counts)
        if self.progress is not None:
            n = self.problem.n_sentences
            self.progress(epoch, n, n, totals)
        return totals

    def _averaged(self):
        return getattr(self.rule, "average", False)

    def weights(self):
        """The weights to use now, as a new array: the combined averages, or the mixed weights."""
        if not self._averaged():
            return self.mixed.copy()
        return combine_averages(_call(self.actors, "averaged", f"after epoch {self.epoch_number}"))

    def final_weights(self):
        """The last epoch's weights, built in the buffers that are free now."""
        if not self._averaged():
            return self.mixed
        averaged = _call(self.actors, "final", "after the last epoch")
        return combine_averages(averaged, out=self.buffer, threads=self.threads)

    def converged(self):
        """Parameter mixing runs its epochs to the end (the batch solver is refused before)."""
        return False

    def close(self):
        """Nothing to end here: the shards' rules live in the workers' actors, which the client's
        cluster ends (``dask_client``)."""

    def save_state(self):
        state = {"shards": self.n_shards, "mixed": self.mixed}
        shard_states = _call(self.actors, "save_state", f"after epoch {self.epoch_number}")
        for i, shard_state in enumerate(shard_states):
            state.update({f"shard{i}__{k}": v for k, v in shard_state.items()})
        return state


def train_mixed(rule, problem, epochs, client, seed=0, mix="uniform", dev_score=None, progress=None,
                callback=None, n_shards=None, share=None, checkpoint=None, resume=None, start_epoch=0, stop=None):
    """``train_online`` by iterative parameter mixing over the workers of ``client``
    (``MixingEngine`` driven by ``run_epochs``).

    Same arguments and result as ``train_online`` (the best dev epoch's weights, or the last
    epoch's, end up in the model; ``checkpoint``, ``resume`` and ``start_epoch`` as there), plus
    the dask ``client``, ``mix``, ``n_shards`` and ``share`` of ``MixingEngine``. Returns
    (history, best_epoch).
    """
    engine = MixingEngine(rule, problem, client, seed, mix, progress, n_shards, share)
    return run_epochs(engine, epochs, dev_score, callback, checkpoint, resume, start_epoch, stop)


@contextmanager
def dask_client(workers=1, scheduler=None, processes=False):
    """A dask Client for a run: on the cluster at ``scheduler``, or on a LocalCluster of ``workers``
    single-threaded workers started here (threads of this process unless ``processes``), always
    closed at the end. An unreachable scheduler is an EngineError within a few seconds."""
    import logging

    import dask
    from dask.distributed import Client, LocalCluster

    with dask.config.set({"distributed.comm.timeouts.connect": CONNECT_TIMEOUT}):
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise EngineError(f"cannot reach the dask scheduler at {scheduler} ({type(exc).__name__})") from None
            except ValueError as exc:
                raise EngineError(f"bad scheduler address {scheduler!r}: {exc}") from None
            with client:
                yield client
            return
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=":0",
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
