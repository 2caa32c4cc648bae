"""Checkpoints of a training run: a model file of the weights reached, plus the trainer's state.

``write_checkpoint`` stores the loop state (epoch, rule state, history, best dev epoch) beside a normal
model, so that ``tag`` and ``eval`` read a checkpoint too; ``read_checkpoint`` gives it back, and
refuses a checkpoint of another run.
"""
import copy
import json

import numpy as np

from structperc.errors import ConfigError


def plain_json(value):
    """``value`` as it reads back from JSON (numpy scalars as Python numbers, tuples as lists)."""
    return json.loads(json.dumps(value, default=lambda o: o.item()))


CHECKPOINT_PREFIX = "checkpoint__"


def write_checkpoint(path, model, state, run_key, input_metadata):
    """A model file of the weights reached after ``state.epoch`` epochs (``state.weights()``), plus
    ``state`` (a ``LoopState``): its arrays as ``checkpoint__NAME``, the rest in the metadata
    "checkpoint"."""
    snapshot = copy.copy(model)
    snapshot.weights = state.weights()
    arrays, scalars = {}, {}
    for name, value in state.rule_state.items():
        if isinstance(value, np.ndarray):
            arrays[CHECKPOINT_PREFIX + name] = value
        else:
            scalars[name] = value
    if state.best_weights is not None:
        arrays[CHECKPOINT_PREFIX + "best_weights"] = state.best_weights
    history = [{"epoch": r.epoch, "seconds": r.seconds, "stats": r.stats, "dev": r.dev} for r in state.history]
    snapshot.metadata = plain_json({
        "training": {**run_key["params"], "trainer_options": run_key["trainer_options"], "best_epoch": state.epoch,
                     "n_sentences": run_key["n_sentences"], "n_tokens": run_key["n_tokens"]},
        "input": input_metadata,
        "checkpoint": {
            "epoch": state.epoch, "rule_state": scalars, "history": history, "best_epoch": state.best_epoch,
            "best_score": state.best_score if np.isfinite(state.best_score) else None, "run": run_key,
        },
    })
    snapshot.save(path, extra_arrays=arrays)


def read_checkpoint(path, run_key=None, epochs=None):
    """The ``LoopState`` stored in a checkpoint file written by ``fit(checkpoint=...)``.

    run_key : what the run continuing it must share with the run that wrote it (see ``fit``), or
        None (not checked); epochs : the epochs the continuing run ends at, or None.
    """
    from structperc.errors import ModelFileError
    from structperc.utils.npz import read_npz
    from structperc.train import EpochRecord, LoopState

    arrays, meta = read_npz(path, "checkpoint")
    saved = meta.get("checkpoint")
    if not isinstance(saved, dict):
        raise ModelFileError(f"{path}: not a checkpoint (a model file without the trainer's state)")
    if run_key is not None and saved["run"] != run_key:
        differ = sorted(k for k in set(run_key) | set(saved["run"]) if run_key.get(k) != saved["run"].get(k))
        if "params" in differ:
            ours, theirs = run_key["params"], saved["run"]["params"]
            differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k)) + differ[1:]
        raise ConfigError(f"{path}: checkpoint of another run (it differs in: {', '.join(differ)})")
    if epochs is not None and saved["epoch"] > epochs:
        raise ConfigError(f"{path}: checkpoint after epoch {saved['epoch']}, beyond the {epochs} epochs asked for")
    rule_state = {k[len(CHECKPOINT_PREFIX):]: v for k, v in arrays.items() if k.startswith(CHECKPOINT_PREFIX)}
    best_weights = rule_state.pop("best_weights", None)
    rule_state.update(saved["rule_state"])
    history = [EpochRecord(r["epoch"], r["seconds"], r["stats"], r["dev"]) for r in saved["history"]]
    best_score = saved["best_score"] if saved["best_score"] is not None else -np.inf
    return LoopState(saved["epoch"], rule_state, history, saved["best_epoch"], best_score, best_weights)
