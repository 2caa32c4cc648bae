"""The examples of README.md and docs/*.md, run as tests (sybil): a command or snippet that stops working
fails the suite.

- ```` ```python ```` blocks run in one namespace per page, in order.
- ```` ```console ```` blocks: each ``$ command`` (``\\`` continues a line) runs in bash, and must exit 0.
  The lines after it are its expected output: each must match a line of stdout or stderr, where
  ``...`` stands for any text. A line ``(exit status N)`` expects status N instead of 0. A command
  that prints a deprecation warning fails, unless its expected output shows that warning.
- Every page runs in a fresh folder that holds small slices of the corpora at the paths the pages
  use (``corpora/conll2000/train.txt``, ...), with ``../shared/corpora`` pointing at the mirror, so
  ``data fetch`` works as it does in a checkout. ``structperc`` on the PATH runs this checkout: ``python -m
  structperc`` in a process forked from one that imported the command line once (``forked_cli.py``), with
  the command's own arguments, environment, folder and standard streams.
- The named models of a page are stand-ins (``standins.py``): the shipped recipes over slices of the
  mirror's corpora, built in seconds into the page's own cache, whose corpus copies are already there
  (``tests/test_models.py`` builds a real one after ``make demo``, under ``make test-slow``).
- ``<!-- slow -->`` just above a block marks it slow: it runs under ``make test-slow`` only.
"""
import fnmatch
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from unittest import SkipTest

import forked_cli
import pytest
from mirror import BESIDE, mirror_folder
from standins import write_standins
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[1]
MIRROR = mirror_folder() or BESIDE
SLOW_MARK = "<!-- slow -->"

# (mirror path, sandbox path, sentences kept; lines kept for raw text, whose blank lines are only
# paragraph breaks): slices small enough that every page runs in seconds
SLICES = [
    ("conll2000/train.txt", "corpora/conll2000/train.txt", 400),
    ("conll2000/test.txt", "corpora/conll2000/test.txt", 100),
    ("conll2002_nl/ned.train", "corpora/conll2002_nl/ned.train", 400),
    ("conll2002_nl/ned.testa", "corpora/conll2002_nl/ned.testa", 100),
    ("conll2002_nl/ned.testb", "corpora/conll2002_nl/ned.testb", 100),
    ("ud_english_ewt/en_ewt-ud-train.conllu", "corpora/ud_english_ewt/en_ewt-ud-train.conllu", 300),
    ("ud_english_ewt/en_ewt-ud-dev.conllu", "corpora/ud_english_ewt/en_ewt-ud-dev.conllu", 100),
    ("ud_english_ewt/en_ewt-ud-test.conllu", "corpora/ud_english_ewt/en_ewt-ud-test.conllu", 100),
    ("unlabeled_en/abc.txt", "corpora/unlabeled_en/abc.txt", 300),
]


def _slice(source, target, n_sentences):
    """The first ``n_sentences`` blank-line-separated sentences of a corpus ``source`` (or lines, for
    the raw text of unlabeled_en)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8")
    if "\n\n" in text and not source.parent.name.startswith("unlabeled"):
        chunks = [c for c in text.split("\n\n") if c.strip() and not c.startswith("-DOCSTART-")]
        target.write_text("\n\n".join(chunks[:n_sentences]) + "\n\n", encoding="utf-8")
    else:
        target.write_text("\n".join(text.splitlines()[:n_sentences]) + "\n", encoding="utf-8")


_STANDINS = {}


def _standins():
    """(the stand-ins' corpus slices, their recipes file): written once per session."""
    if not _STANDINS:
        import atexit

        folder = Path(tempfile.mkdtemp(prefix="structperc-standins-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _STANDINS["mirror"], _STANDINS["recipes"] = write_standins(MIRROR, folder)
    return _STANDINS["mirror"], _STANDINS["recipes"]


def _use_standins(named):
    """Point ``named`` (the page's environment) at the stand-in recipes, and put their corpora where a
    build looks before any mirror: the page's cache (``models.build.corpus_folder``)."""
    from structperc.models import cache

    mirror, recipes = _standins()
    named["STRUCTPERC_RECIPES"] = str(recipes)
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = named["XDG_CACHE_HOME"]
    try:
        shutil.copytree(mirror, cache.cache_root() / "corpora")
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _env(path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), PATH=path)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def setup(namespace):
    """A fresh folder per page with the corpus slices, a ``structperc`` on the PATH, and the
    working directory there (restored by ``teardown``)."""
    if not MIRROR.is_dir():
        raise SkipTest(f"no corpus mirror at {MIRROR} (set STRUCTPERC_MIRROR)")
    folder = Path(tempfile.mkdtemp(prefix="structperc-docs-"))
    work = folder / "work"
    (work / "bin").mkdir(parents=True)
    (folder / "shared").symlink_to(MIRROR.parent)
    for source, target, n in SLICES:
        _slice(MIRROR / source, work / target, n)
    forked_cli.launcher(work / "bin" / "structperc")
    env = _env(f"{work / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env["STRUCTPERC_CORPORA"] = str(work / "corpora")  # data fetch writes into the page's folder
    # named models are built into the page's folder from the mirror, never into the user's cache; the
    # page's Python blocks run in this process, so its environment says so too (until teardown)
    named = {"XDG_CACHE_HOME": str(folder / "cache"), "STRUCTPERC_MIRROR": str(MIRROR)}
    _use_standins(named)
    env.update(named)
    previous_env = {key: os.environ.get(key) for key in named}
    os.environ.update(named)
    namespace.update(folder=folder, work=work, previous_cwd=os.getcwd(), env=env,
                     previous_env=previous_env)
    os.chdir(work)


def teardown(namespace):
    if "previous_cwd" not in namespace:  # skipped in ``setup``: nothing to undo
        return
    os.chdir(namespace["previous_cwd"])
    for key, value in namespace["previous_env"].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(namespace["folder"], ignore_errors=True)


def _commands(source):
    """(command, expected output lines, expected exit status) for each ``$`` line of a console block."""
    commands = []
    for line in source.splitlines():
        if line.startswith("$ "):
            commands.append([line[2:], [], 0])
        elif commands and commands[-1][0].endswith("\\"):
            commands[-1][0] = commands[-1][0][:-1] + " " + line.strip()
        elif commands and line.startswith("(exit status "):
            commands[-1][2] = int(line.removeprefix("(exit status ").rstrip(")"))
        elif commands and line.strip():
            commands[-1][1].append(line.strip())
    return commands


def run_console(example):
    for command, expected, status in _commands(example.parsed):
        done = subprocess.run(["bash", "-c", command], cwd=example.namespace["work"], env=example.namespace["env"],
                              capture_output=True, text=True, timeout=900)
        output = [line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines()]
        if done.returncode != status:
            return f"`{command}` exited {done.returncode}, expected {status}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        if "is deprecated; use" in done.stderr and not any("deprecated" in want for want in expected):
            return f"`{command}` uses a deprecated spelling:\n{done.stderr[-1000:]}"
        for want in expected:
            pattern = fnmatch.translate(want.replace("[", "[[]").replace("...", "*"))
            if not any(fnmatch.fnmatch(line, want.replace("[", "[[]").replace("...", "*")) for line in output):
                return f"`{command}`: no output line matches {want!r} ({pattern}):\n" + "\n".join(output[-40:])
    return None


def is_slow(example):
    """True when a ``<!-- slow -->`` line stands among the directives just above the block."""
    above = example.document.text[: example.region.start].rstrip().splitlines()[-3:]
    return SLOW_MARK in [line.strip() for line in above]


pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser(), CodeBlockParser("console", run_console), SkipParser()],
    patterns=["README.md", "docs/*.md"],
    path=str(ROOT),
    setup=setup,
    teardown=teardown,
).pytest()


@pytest.hookimpl(tryfirst=True)  # before the -m selection of pytest's mark plugin reads the marks
def pytest_collection_modifyitems(items):
    for item in items:
        example = getattr(item, "example", None)
        if example is not None and is_slow(example):
            item.add_marker(pytest.mark.slow)
