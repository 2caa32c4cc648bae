"""The stopping rule of runs given no number of epochs (``train.base.Plateau``): hand-worked
cases, the training loop driven by scripted epochs, and ``Tagger`` with its defaults."""
import numpy as np
import pytest

from builders import random_sentences
from structperc.estimator.tagger import Tagger
from structperc.train import TRAINERS
from structperc.train.base import EpochRecord, Plateau, run_epochs


def records(key, values):
    return [EpochRecord(i + 1, 0.0, {key: v}) for i, v in enumerate(values)]


def first_stop(rule, key, values):
    """The first epoch after which ``rule`` stops on ``values``, or None."""
    history = records(key, values)
    return next((e for e in range(1, len(values) + 1) if rule(history[:e])), None)


def test_mistakes_stop_after_patience_epochs_without_a_new_low():
    rule = Plateau("mistakes", higher=False, patience=2, least=5)
    # new lows at epochs 1, 2, 5; epochs 3 and 4 make two without one, but fewer than 5 epochs have run
    assert first_stop(rule, "mistakes", [10, 8, 8, 9, 7, 7, 7, 1]) == 7
    assert first_stop(rule, "mistakes", [10, 9, 8, 7, 6, 5, 4, 3]) is None  # a new low every epoch
    assert first_stop(rule, "mistakes", [0] * 8) == 5  # perfect from the start: the least epochs only
    assert first_stop(Plateau("mistakes", higher=False, patience=3, least=1), "mistakes", [5, 6, 6, 6]) == 4


def test_an_objective_must_rise_by_the_threshold_to_count():
    rule = Plateau("objective", higher=True, threshold=0.01, patience=2, least=3)
    # -49.9 and -49.8 beat -50 by less than 1 % of 50: no new best, so the run stops after epoch 4
    assert first_stop(rule, "objective", [-100, -50, -49.9, -49.8, -30]) == 4
    assert first_stop(rule, "objective", [-100, -50, -49, -48, -47]) is None  # each rises by > 1 %
    assert first_stop(Plateau("objective", higher=True, patience=2, least=3), "objective",
                      [-100, -50, -49.9, -49.8, -30]) is None  # threshold 0: any rise is a new best


def test_a_figure_the_run_does_not_report_never_stops_it():
    assert first_stop(Plateau("objective", higher=True, least=1, patience=1), "loss", [1.0] * 6) is None


class ScriptedEngine:
    """An engine whose epochs report the given figures; its weights are the epoch's number."""

    class Model:
        weights = None

    class Problem:
        pass

    def __init__(self, values):
        self.values, self.done = values, 0
        self.problem = self.Problem()
        self.problem.model = self.Model()

    def start(self, state=None, skip=0):
        pass

    def epoch(self, epoch):
        self.done = epoch
        return {"sentence_errors": self.values[epoch - 1]}

    def weights(self):
        return np.array([float(self.done)])

    final_weights = weights

    def converged(self):
        return False

    def save_state(self):
        return {}

    def close(self):
        self.closed = True


@pytest.mark.parametrize("stop", [None, Plateau("sentence_errors", higher=False, patience=2, least=3)])
def test_the_loop_ends_where_the_rule_says_and_keeps_that_epochs_weights(stop):
    values = [9, 5, 5, 6, 1, 1, 1, 1]
    seen = []
    engine = ScriptedEngine(values)
    history, best = run_epochs(engine, len(values), callback=seen.append, stop=stop)
    expected = len(values) if stop is None else first_stop(stop, "sentence_errors", values)
    assert expected == (8 if stop is None else 4)
    assert [r.epoch for r in history] == list(range(1, expected + 1)) and best == expected
    assert engine.problem.model.weights[0] == expected
    assert [r.final for r in seen] == [False] * (expected - 1) + [True]  # the callback knows the last epoch


def small_corpus(n_sentences=60, seed=0):
    rng = np.random.default_rng(seed)
    return random_sentences(rng, n_sentences, 3, tags=("B-X", "I-X", "O"))


@pytest.mark.parametrize("trainer", ["perceptron", "crf"])
def test_tagger_without_epochs_stops_by_its_rules_plateau(trainer):
    X, y = small_corpus()
    rule = TRAINERS[trainer]
    tagger = Tagger(templates=["w[0]", "pos[0]", "w[-1]"], trainer=trainer).fit(X, y)
    history = tagger.history_
    assert 1 <= len(history) <= rule.epochs
    ended_by_rule = rule.stopping(history)
    assert ended_by_rule or len(history) == rule.epochs
    assert not any(rule.stopping(history[:e]) for e in range(1, len(history)))  # not later than the rule says
    assert tagger.n_iter_ == len(history) and tagger.epochs is None
    assert tagger.model_.metadata["training"]["epochs_done"] == len(history)


def test_given_epochs_run_them_all_without_the_rule():
    X, y = small_corpus()
    auto = Tagger(templates=["w[0]", "pos[0]"]).fit(X, y)
    assert len(auto.history_) < TRAINERS["perceptron"].epochs  # this corpus stops the default run early
    fixed = Tagger(templates=["w[0]", "pos[0]"], epochs=len(auto.history_) + 3).fit(X, y)
    assert len(fixed.history_) == len(auto.history_) + 3
    # the same seed visits the same sentences: the first epochs of both runs agree
    assert [r.stats for r in fixed.history_[:len(auto.history_)]] == [r.stats for r in auto.history_]


def test_a_resumable_run_stopped_by_the_rule_keeps_its_state_and_continues():
    X, y = small_corpus()
    tagger = Tagger(templates=["w[0]", "pos[0]"], resumable=True).fit(X, y)
    done = len(tagger.history_)
    assert done < TRAINERS["perceptron"].epochs and tagger.model_.training_state
    tagger.set_params(epochs=2).partial_fit(X, y)
    assert tagger.model_.metadata["training"]["epochs_done"] == done + 2


@pytest.mark.parametrize("trainer", ["perceptron", "memm"])
def test_a_default_run_records_its_epochs_so_that_training_continues_from_them(trainer):
    X, y = small_corpus()
    tagger = Tagger(templates=["w[0]", "pos[0]"], trainer=trainer).fit(X, y)
    done = len(tagger.history_)  # memm has no stopping rule: its 10 epochs
    assert tagger.model_.metadata["training"]["epochs_done"] == done
    tagger.set_params(epochs=2).partial_fit(X, y)
    assert tagger.model_.metadata["training"]["epochs_done"] == done + 2
