"""The kernels' cache stamp (``kernel_cache.sources_stamp``): a kernel's cached machine code goes
stale when any kernel module it imports changes, not only its own file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from structperc._kernels import cache as kernel_cache
from structperc.warmup.run import every_kernel
from structperc._kernels.learn import perceptron

ROOT = Path(__file__).resolve().parents[1]


def test_the_stamp_covers_the_modules_a_kernel_imports_and_no_others(tmp_path):
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("from .c import g  # noqa\nfrom .sub import h\n")
    (tmp_path / "c.py").write_text("X = 1\n")
    (tmp_path / "d.py").write_text("from .a import f\n")
    (tmp_path / "sub").mkdir()  # a package, not a module: not part of the stamp
    names = [Path(p).name for p in kernel_cache.kernel_sources(str(tmp_path / "a.py"))]
    assert names == ["a.py", "b.py", "c.py"]
    before = {m: kernel_cache.sources_stamp(tmp_path / f"{m}.py") for m in "abcd"}
    (tmp_path / "c.py").write_text("X = 22\n")
    after = {m: kernel_cache.sources_stamp(tmp_path / f"{m}.py") for m in "abcd"}
    assert [m for m in "abcd" if after[m] != before[m]] == ["a", "b", "c", "d"]
    (tmp_path / "a.py").write_text("from .b import f  # edited\n")
    again = {m: kernel_cache.sources_stamp(tmp_path / f"{m}.py") for m in "abcd"}
    assert [m for m in "abcd" if again[m] != after[m]] == ["a", "d"]  # b and c do not import a


def test_structperc_kernels_are_stamped_with_the_helpers_they_inline():
    names = {Path(p).name for p in kernel_cache.kernel_sources(perceptron.__file__)}
    assert {"perceptron.py", "decoders.py", "scoring.py", "emission.py", "viterbi.py"} <= names
    locator = perceptron.perceptron_epoch._cache._impl.locator
    assert type(locator).__name__.startswith("Watching")
    assert locator.get_source_stamp() == kernel_cache.sources_stamp(perceptron.__file__)


HELPER = "from numba import njit\n\n\n@njit(cache=True)\ndef helper():\n    return {value}\n"
CALLER = ("from numba import njit\n\nfrom .helper import helper\n\n\n"
          "@njit(cache=True)\ndef caller():\n    return helper() + 10\n")
PACKAGE_INIT = "import os\nfrom structperc._kernels.cache import watch_kernel_sources\n" \
               "watch_kernel_sources(os.path.dirname(__file__))\n"
# each package's caller, in one process: (the value, the cache's hits) by package
SCRIPT = ("import importlib, json, sys\n"
          "callers = {p: importlib.import_module(p + '.caller').caller for p in sys.argv[1:]}\n"
          "print(json.dumps({p: {'value': c(), 'hits': sum(c.stats.cache_hits.values())} for p, c in callers.items()}))\n")


def _run_callers(folder, env, *packages):
    done = subprocess.run([sys.executable, "-c", SCRIPT, *packages], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("cache_dir", [False, True], ids=["beside-the-source", "NUMBA_CACHE_DIR"])
def test_an_edited_helper_recompiles_the_cached_kernels_that_call_it(tmp_path, cache_dir):
    # both packages run in each process: watching one folder leaves numba's own caching of the other as it is
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + str(ROOT))
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    for package, init in (("watched", PACKAGE_INIT), ("plain", "")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(init)
        (tmp_path / package / "helper.py").write_text(HELPER.format(value=1))
        (tmp_path / package / "caller.py").write_text(CALLER)
    both = ("watched", "plain")
    assert _run_callers(tmp_path, env, *both) == {p: {"value": 11, "hits": 0} for p in both}
    assert _run_callers(tmp_path, env, *both) == {p: {"value": 11, "hits": 1} for p in both}  # the cache serves
    for package in both:
        (tmp_path / package / "helper.py").write_text(HELPER.format(value=222))
    # numba alone keeps serving the caller's stale code; the watched package recompiles it
    assert _run_callers(tmp_path, env, *both) == {"plain": {"value": 11, "hits": 1}, "watched": {"value": 232, "hits": 0}}
    assert _run_callers(tmp_path, env, "watched") == {"watched": {"value": 232, "hits": 1}}


NOTICE = "compiling kernels, once"


def _assert_notice(monkeypatch, args, kernels, is_cold):
    """Run the command ``args`` in process with ``cold`` stubbed to say ``is_cold``: it asks about
    ``kernels`` once, and prints the notice exactly when they are cold."""
    from typer.testing import CliRunner

    from structperc.cli.main import app

    asked = []
    monkeypatch.setattr(kernel_cache, "_said", False)  # the notice is said once per process: a fresh one here
    monkeypatch.setattr(kernel_cache, "cold", lambda names: asked.append(tuple(names)) or is_cold)
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (args[0], result.output)
    assert result.output.count(NOTICE) == (1 if is_cold else 0), (args[0], result.output)
    assert asked == [tuple(kernels)], args[0]


@pytest.mark.parametrize("is_cold", [True, False])
def test_clusters_and_rerank_train_say_when_they_compile(tmp_path, monkeypatch, is_cold):
    text = tmp_path / "text.txt"
    text.write_text("the cat sat\nthe dog ran\na cat ran\n")
    svm = tmp_path / "lists.svm"
    svm.write_text("1 qid:1 1:0 2:1\n0 qid:1 1:-1 3:1\n1 qid:2 1:0 2:1\n0 qid:2 1:-2 4:1\n")
    _assert_notice(monkeypatch, ["clusters", text, "--clusters", "2", "--quiet"], kernel_cache.CLUSTERING, is_cold)
    _assert_notice(monkeypatch, ["rerank", "train", svm, "--model", tmp_path / "r.npz", "--learner", "boost", "--boost-rounds", "2",
                                 "--quiet"], kernel_cache.RERANKERS["boost"], is_cold)


def test_nbest_rerank_apply_and_vote_say_when_they_compile(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from structperc.cli.main import app
    from structperc.estimator.tagger import Tagger

    sentences = [[("the", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sat", "VBD", "B-VP")],
                 [("a", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("ran", "VBD", "B-VP"), ("home", "NN", "B-NP")]] * 5
    data = tmp_path / "chunks.txt"
    data.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in sentences))
    models = []
    for trainer in ("crf", "memm"):
        models.append(tmp_path / f"{trainer}.npz")
        Tagger(templates="chunk", trainer=trainer, epochs=2, constrain="bio").fit_file(
            data, columns=["word", "pos", "chunk"]).save(models[-1])
    lists, reranker = tmp_path / "lists.svm", tmp_path / "r.npz"
    for args in (["nbest", data, "--model", models[0], "--candidates", "3", "--format", "svmrank", "--output", lists, "--quiet"],
                 ["rerank", "train", lists, "--model", reranker, "--quiet"]):
        assert CliRunner().invoke(app, [str(a) for a in args]).exit_code == 0
    unlabelled = tmp_path / "words.txt"  # no gold column: no oracle, whose kernel then never runs
    unlabelled.write_text("".join("".join(" ".join(t[:2]) + "\n" for t in s) + "\n" for s in sentences))
    commands = [
        (["nbest", data, "--model", models[0], "--candidates", "3", "--output", tmp_path / "b.txt", "--quiet"],
         kernel_cache.TAGGING + kernel_cache.NBEST),
        (["nbest", unlabelled, "--model", models[0], "--candidates", "3", "--output", tmp_path / "u.txt", "--quiet"],
         kernel_cache.TAGGING + ("decode.nbest.kbest_block",)),
        (["rerank", "apply", lists, "--model", reranker, "--output", tmp_path / "c.txt", "--quiet"],
         kernel_cache.RERANK_APPLYING["perceptron"]),
        (["vote", *models, data, "--method", "soft", "--output", tmp_path / "v.txt", "--quiet"],
         kernel_cache.tagging_kernels("global", spans=False)),
    ]
    for is_cold in (True, False):
        for args, kernels in commands:
            _assert_notice(monkeypatch, args, kernels, is_cold)


def test_every_kernel_a_command_announces_exists():
    import importlib

    for name in every_kernel():
        module, function = name.rsplit(".", 1)
        dispatcher = getattr(importlib.import_module(f"structperc._kernels.{module}"), function)
        assert hasattr(dispatcher, "_cache"), name  # a numba dispatcher with a cache


# runs the command line recording the kernels that the compile notice asks about
RECORDING = """import json, sys
import structperc._kernels.cache as cache
cold = cache.cold
cache.cold = lambda names: sys.stderr.write("ASKED " + json.dumps(list(names)) + "\\n") and cold(names)
from structperc.cli.main import main
sys.argv = ["structperc", *sys.argv[1:]]
main()
"""


def _compiled(cache):
    """The kernels ("module.function") that numba cached under ``cache``: files MODULE.FUNCTION-LINE.pyXY.nbi."""
    return {path.name.split("-")[0] for path in cache.rglob("*.nbi")}


def _nbest_in(cache, args):
    """(kernels asked about, notice printed) of `structperc nbest ARGS` with numba's cache in ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", RECORDING, "nbest", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    asked = [json.loads(line[len("ASKED "):]) for line in done.stderr.splitlines() if line.startswith("ASKED ")]
    assert len(asked) == 1, done.stderr
    return [".".join(name.split(".")[-2:]) for name in asked[0]], NOTICE in done.stderr


@pytest.mark.slow
def test_nbest_announces_the_kernels_it_compiles_from_a_cold_cache_with_and_without_gold(tmp_path):
    """From an empty cache, the kernels that the notice names are the ones compiled: the oracle's
    (``group_argmax``) only for an input with gold labels. A second run, warm, prints no notice."""
    from structperc.estimator.tagger import Tagger

    sentences = [[("the", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sat", "VBD", "O")],
                 [("a", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("ran", "VBD", "O"), ("home", "NN", "B-NP")]] * 3
    labelled, unlabelled = tmp_path / "labelled.txt", tmp_path / "words.txt"
    labelled.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in sentences))
    unlabelled.write_text("".join("".join(" ".join(t[:2]) + "\n" for t in s) + "\n" for s in sentences))
    model = tmp_path / "np.npz"
    Tagger(templates="chunk", epochs=2, constrain="bio").fit_file(labelled, columns=["word", "pos", "chunk"]).save(model)
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    for corpus, oracle in ((unlabelled, False), (labelled, True)):
        args = [corpus, "--model", model, "--candidates", "3", "--output", tmp_path / "lists.txt", "--quiet"]
        before = _compiled(cache)
        listed, notice = _nbest_in(cache, args)
        compiled = _compiled(cache) - before  # by this run (the one before compiled the rest)
        assert notice and compiled, (corpus.name, compiled)
        assert set(listed) <= _compiled(cache), (corpus.name, set(listed) - _compiled(cache))  # named, and run
        assert ("ranking.group_argmax" in listed) == ("ranking.group_argmax" in compiled) == oracle, corpus.name
        assert _nbest_in(cache, args) == (listed, False), corpus.name  # warm: no notice
