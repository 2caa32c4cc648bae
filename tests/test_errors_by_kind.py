"""Errors by kind: the package's own errors are the user's (one line, status 2); anything else is a bug
(one line asking for a report and naming the file with the traceback, status 1); a shard's exception
reaches the client with its type and message; ensembles refuse or refit, never crash late."""
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import builders
from builders import random_sentences, structperc_process
from structperc.cli.main import app
from structperc.errors import ConfigError
from structperc.estimator.core import TaggerCore
from structperc.estimator.fitting import Fitting
from structperc.train import Problem
from structperc.train.perceptron import PerceptronRule

TRAIN = "the DT B-NP\ncat NN I-NP\nsat VBD O\n\na DT B-NP\ndog NN I-NP\nran VBD O\n"


def _train_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(TRAIN)
    return path


def _train(tmp_path, *extra):
    return CliRunner().invoke(app, ["train", str(_train_file(tmp_path)), "--model", str(tmp_path / "m.npz"),
                                    "--columns", "word,pos,chunk", "--quiet", *map(str, extra)])


@pytest.mark.parametrize("bug", [KeyError("workers"), ValueError("a bug, not bad input"), AttributeError("q")])
def test_a_bug_is_status_1_with_a_report_request_and_the_traceback_in_a_file(tmp_path, monkeypatch, bug):
    def broken(*args, **kwargs):
        raise bug

    monkeypatch.setattr(Fitting, "train", broken)
    result = _train(tmp_path)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"internal error: {type(bug).__name__}" in lines[0] and "report" in lines[0]
    path = Path(re.search(r"written to (\S+)$", lines[0]).group(1))
    assert path.exists() and "Traceback" in path.read_text() and "broken" in path.read_text()
    path.unlink()
    assert not (tmp_path / "m.npz").exists()


def test_the_users_errors_stay_status_2(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise ConfigError("this option does not apply")

    monkeypatch.setattr(Fitting, "train", refused)
    result = _train(tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip() == "structperc: error: this option does not apply"


def test_unsupported_combination_is_refused_before_training_in_a_real_process(tmp_path):
    """winnow keeps two log-weight vectors: parameter mixing does not apply, said before any epoch."""
    process = structperc_process("train", _train_file(tmp_path), "--model", tmp_path / "m.npz", "--columns",
                                 "word,pos,chunk", "--trainer", "winnow", "--workers", "2", "--quiet")
    out, err = process.communicate(timeout=300)
    assert process.returncode == 2, err
    assert err.strip().splitlines() == ["structperc: error: the winnow trainer does not support parameter mixing "
                                        "(workers > 1 or a scheduler)"]
    assert not (tmp_path / "m.npz").exists()


def test_winnow_writes_checkpoints_in_a_real_process(tmp_path):
    process = structperc_process("train", _train_file(tmp_path), "--model", tmp_path / "m.npz", "--columns",
                                 "word,pos,chunk", "--trainer", "winnow", "--epochs", 3, "--checkpoint-every", 1,
                                 "--quiet")
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert (tmp_path / "m.npz").exists()


class FailingRule(PerceptronRule):
    """A perceptron whose shards fail in their second epoch, as a bug in a rule would."""

    def run(self, visit_order):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > 1:
            raise ZeroDivisionError("shard arithmetic failed")
        return super().run(visit_order)


def test_a_shards_exception_reaches_the_client_with_its_type_and_message():
    pytest.importorskip("dask.distributed")
    from structperc.train.mixing import dask_client, train_mixed

    model, enc = builders.small_model(3, n_sentences=12, max_len=5)
    with dask_client(workers=2) as client:
        with pytest.raises(ZeroDivisionError, match="shard arithmetic failed"):
            train_mixed(FailingRule(), Problem(model, model.data(enc)), 3, client, seed=1)


def _members():
    rng = np.random.default_rng(0)
    X, y = random_sentences(rng, 30, 3, tags=("B-NP", "I-NP", "O"))
    options = dict(templates=["w[0]", "w[-1]"], columns=["word", "pos"], epochs=3)
    return X, y, [TaggerCore(**options).fit(X, y), TaggerCore(trainer="crf", **options).fit(X, y)]


def test_a_voting_model_refits_its_members():
    from structperc.ensembles.vote import VotingTagger

    X, y, members = _members()
    voting = VotingTagger(members)
    before = [m.model_.weights.copy() for m in members]
    voting.fit(X[:20], y[:20])
    assert all(not np.array_equal(b, m.model_.weights) for b, m in zip(before, voting.members))
    expected = TaggerCore(templates=["w[0]", "w[-1]"], columns=["word", "pos"], epochs=3).fit(X[:20], y[:20])
    assert voting.members[0].predict(X) == expected.predict(X)
    assert len(voting.predict(X)) == len(X)


def test_other_ensembles_refuse_fit_and_partial_fit():
    from structperc.ensembles.base import EnsembleTagger

    X, y, members = _members()
    ensemble = EnsembleTagger(members)
    with pytest.raises(ConfigError, match="built from fitted models"):
        ensemble.fit(X, y)
    with pytest.raises(ConfigError, match="built from fitted models"):
        ensemble.partial_fit(X, y)
