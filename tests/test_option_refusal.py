"""A learning rule's option is checked where it is declared (``train.base.Param``): a bad value is
refused when the rule is made, before any file is read, so that ``--gamma -1`` on a corpus of a
million tokens fails as fast as on a tiny one."""
import subprocess
import sys
import time

import pytest

from structperc import Tagger
from structperc.errors import ConfigError
from structperc.train import RULE_OPTIONS, TRAINERS, make_rule

BAD = {"gamma": -1.0, "variance": 0.0, "promotion": 0.5, "demotion": 1.5, "initial_weight": -2.0,
       "aggressiveness": 0.0, "pa_type": 7, "cost": -1.0, "l2": -0.5, "eta0": 0.0, "batch_size": 0}


def _corpus(path, n_tokens):
    line = "word\tNN\n"
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n_tokens // 10):
            out.write(line * 10 + "\n")
    return path


@pytest.mark.parametrize("option", sorted(BAD))
def test_every_rule_taking_an_option_refuses_its_bad_value(option):
    takers = [name for name, rule in TRAINERS.items() if option in rule.params]
    assert takers, option
    for name in takers:
        with pytest.raises(ConfigError, match=option):
            make_rule(name, **{option: BAD[option]})


def test_declared_checks_cover_the_options_that_have_a_range():
    assert {name for name, param in RULE_OPTIONS.items() if param.check is not None} >= set(BAD) - {"pa_type"}


def _train(path, tmp_path):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "structperc", "train", str(path), "--model", str(tmp_path / "m.npz"),
                           "--columns", "word,pos", "--trainer", "arow", "--gamma", "-1"],
                          capture_output=True, text=True, timeout=120)
    return done, time.perf_counter() - start


def test_a_bad_option_is_refused_before_a_million_tokens_are_read(tmp_path):
    big = _corpus(tmp_path / "big.txt", 1_000_000)
    small = _corpus(tmp_path / "small.txt", 20)
    done, seconds = _train(big, tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "gamma must be > 0" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "m.npz").exists()
    _, small_seconds = _train(small, tmp_path)
    # the same process start either way: the file's size costs nothing before the refusal
    assert seconds - small_seconds < 1.0, (seconds, small_seconds)
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="gamma must be > 0"):
        Tagger(trainer="arow", gamma=-1).fit_file(big, columns=["word", "pos"])
    assert time.perf_counter() - start < 1.0
