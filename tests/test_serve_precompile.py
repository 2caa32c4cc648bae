"""serve's warm-up shared between the master and child processes when numba's cache is cold
(``structperc.serve.precompile``): which jobs, in what order, and that the master then warms its models
without compiling a kernel."""
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from structperc.serve.precompile import compile_jobs, compile_side_by_side

ROOT = Path(__file__).resolve().parents[1]


def described(source, probabilistic, kbest, explain=True):
    return SimpleNamespace(source=source, description={"probabilistic": probabilistic, "kbest": kbest,
                                                       "explain": explain})


def test_jobs_are_the_groups_each_model_offers_the_longest_first():
    pos, ner = described("pos", False, False), described("ner", True, True)
    assert compile_jobs([pos, ner]) == [("ner", ("tag", "spans")), ("pos", ("tag",)), ("ner", ("kbest",)),
                                        ("ner", ("marginals",)), ("pos", ("explain",)), ("ner", ("explain",))]


def test_one_process_at_a_time_leaves_it_all_to_the_master():
    assert compile_side_by_side([described("pos", False, False)], processes=4) is False  # one job
    assert compile_side_by_side([described("pos", False, True), described("ner", True, True)], processes=1) is False


SIDE_BY_SIDE = """
import sys
from numba.core import event
from structperc import Tagger
from structperc.serve.precompile import compile_side_by_side
from structperc.serve.served import read_served, warm

folder = sys.argv[1]
X = [["Jan", "woont", "in", "Gent"], ["Piet", "zag", "Marie"]] * 5
y = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O", "B-PER"]] * 5
Tagger(trainer="crf", templates="ner", epochs=1).fit(X, y).save(folder + "/ner.npz")
Tagger(epochs=1, order=2).fit(X, [["N", "V", "P", "N"], ["N", "V", "N"]] * 5).save(folder + "/pos.npz")
models = [read_served(folder + "/pos.npz"), read_served(folder + "/ner.npz")]
assert compile_side_by_side(models, processes=2)
compiled = []
class Watch(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Watch())
for served in models:
    warm(served)
assert not compiled, compiled
"""


@pytest.mark.slow
def test_side_by_side_the_master_then_warms_every_model_without_compiling(tmp_path):
    """With an empty numba cache: the master compiles its jobs, children theirs, and the warm-up of
    every model then loads what the children compiled (a minute of compiling)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", SIDE_BY_SIDE, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
