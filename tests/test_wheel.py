"""The package as a user gets it. ``python -m build`` makes an sdist and, from the sdist, a wheel (a copy
of the source tree is built, so the checkout is never written); ``twine check`` passes on both. The
wheel goes into a fresh venv in a temporary folder, and from another folder, with none of the
checkout on the path: ``structperc --version``, ``data list``, ``models build en-np`` from the corpora
mirror, and raw text to jsonl with that model. By default, only the first two run from the installed wheel
(the build is marked slow: ``make test-slow``), and the wheel is checked to hold every file of the
package that git has.

What it costs, measured on this project's 2 cores: 17-20 s in all while the machine was otherwise
nearly idle (load 2.5, this test's own included), 56-58 s while four other jobs kept it busy (load
4-5). The build 2-5 s (10 s when it needs an isolated environment: the running one lacks the
build-system's setuptools); the venv and the wheel's installation 1-4 s; ``models build en-np`` 10-36
s, of which 3.6 s remain once numba's cache is warm: a fresh venv compiles every kernel it runs, which
is what a new user waits for too; the raw text 3-6 s. Two shortcuts keep it there:
- The dependencies are the running environment's: a ``.pth`` file in the venv names this interpreter's
  site-packages, and the wheel is installed with ``--no-deps`` (and ``--no-index``: no network).
  Installing them from the index took 45 s instead of 4 (and writes about 570 MB), and tests the index
  as much as the wheel: that variant (``index``) is marked slow. The venv's own site-packages come first on
  its path, and the test checks that ``structperc`` is imported from there.
- en-np reads the POS tags of raw text from en-ewt-xpos, whose build took 23 s more. A stand-in recipe
  of that name (``$STRUCTPERC_RECIPES``) reads the same corpus from the same mirror, the same way, but
  trains on the 2,001 sentences of the development file for 3 epochs.

``Installed.run`` runs a command of the venv in its own folder; a later step can start a server the
same way (``Installed.script`` and ``Installed.env``).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# never copied into the tree that is built: caches, builds, environments, fetched data
JUNK = {".git", ".venv", "venv", "build", "dist", "site", "bench-out", "__pycache__", ".pytest_cache",
        ".hypothesis", ".ruff_cache", ".mypy_cache"}
# settings of the environment that would change what the installed package imports or reads
USER_SETTINGS = ("PYTHON", "STRUCTPERC_", "NUMBA_", "VIRTUAL_ENV", "CONDA_PREFIX", "__PYVENV_LAUNCHER__")
# pip settings that would install somewhere else than the venv
PIP_ELSEWHERE = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_EDITABLE")
TEXT = "Mary left early. She was tired."


def source_junk(folder, names):
    """shutil.copytree's ignore: what a build must not see (fetched corpora, caches, environments)."""
    here = Path(folder)
    ignored = {name for name in names if name in JUNK or name.endswith((".egg-info", ".pyc"))}
    if here == ROOT / "corpora":  # its note, not the corpora fetched into it
        ignored |= {name for name in names if (here / name).is_dir() or name.endswith((".npz", ".tagged"))}
    if here == ROOT / "experiments":
        ignored |= {"cache"} & set(names)
    return ignored


def clean_env(**extra):
    """The environment without the settings that would point the installed package at the checkout
    or at the user's own data, caches and numba options."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(USER_SETTINGS) and key not in PIP_ELSEWHERE}
    return {**env, **extra}


def run(command, timeout=600, **kwargs):
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout,
                          **kwargs)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def at_least(distribution, version):
    """Whether the running environment holds ``distribution`` at ``version`` (a tuple) or later."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        found = tuple(int(part) for part in re.findall(r"\d+", installed(distribution))[:len(version)])
    except PackageNotFoundError:
        return False
    return found >= version


def build_isolation():
    """``python -m build``'s option: no isolated environment (no index, no download) when the running
    one holds the setuptools of pyproject.toml's build-system (the dev extra's), else none."""
    required = re.search(r'requires = \["setuptools>=(\d+)"\]', (ROOT / "pyproject.toml").read_text())
    return ["--no-isolation"] if required and at_least("setuptools", (int(required.group(1)),)) else []


@dataclass
class Dist:
    sdist: Path
    wheel: Path
    version: str


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheel built by ``python -m build`` from a copy of the source tree."""
    folder = tmp_path_factory.mktemp("dist")
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=source_junk)
    run([sys.executable, "-m", "build", *build_isolation(), "--outdir", folder / "out", source], env=clean_env(),
        cwd=folder)
    sdist, = (folder / "out").glob("*.tar.gz")
    wheel, = (folder / "out").glob("*.whl")
    version = re.fullmatch(r"structperc-([^-]+)-py3-none-any\.whl", wheel.name).group(1)
    return Dist(sdist, wheel, version)


@dataclass
class Installed:
    """The wheel installed in a fresh venv; commands run in ``cwd``, a folder outside the checkout,
    with ``env`` (the venv's own cache folders, none of the user's settings)."""
    python: Path
    scripts: Path
    cwd: Path
    env: dict

    def script(self, name):
        return self.scripts / name

    def run(self, *args, input=None, timeout=600, env=None):
        return run([self.script("structperc"), *args], input=input, timeout=timeout, cwd=self.cwd,
                   env=self.env if env is None else env)


@pytest.fixture(scope="module", params=["borrowed", pytest.param("index", marks=pytest.mark.slow)])
def installed(request, dist, tmp_path_factory):
    """A fresh venv holding the wheel; its dependencies the running environment's (``borrowed``), or
    installed from the package index (``index``)."""
    folder = tmp_path_factory.mktemp(f"venv-{request.param}")
    venv = folder / "venv"
    # pip >= 22.3 installs into another interpreter's environment (--python): the venv needs no pip of
    # its own, whose installation (ensurepip) costs 5-7 s
    outer_pip = at_least("pip", (22, 3))
    run([sys.executable, "-m", "venv", *(["--without-pip"] if outer_pip else []), venv], env=clean_env())
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    paths = json.loads(run([python, "-c", "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"],
                           env=clean_env()).stdout)
    pip = [sys.executable, "-m", "pip", "--python", python] if outer_pip else [python, "-m", "pip"]
    # the index's install takes the server's extra, which the tests of `serve` from the wheel need
    install = [*pip, "install", "--quiet", f"{dist.wheel}[serve]" if request.param == "index" else dist.wheel]
    if request.param == "borrowed":
        import site

        # the running environment's site-packages, wherever it is (the checkout's own .venv included): the
        # checkout's source is never one of them
        borrowed = [path for path in site.getsitepackages() + [site.getusersitepackages()] if Path(path).is_dir()]
        # a path line of a .pth file is appended to sys.path; the .pth files in it are not run, so an
        # editable install of the checkout there (a finder that a .pth line starts) stays invisible
        Path(paths["purelib"], "borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
        install += ["--no-deps", "--no-index"]
    run(install, env=clean_env(), cwd=folder)
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(HOME=str(folder / "home"), XDG_CACHE_HOME=str(folder / "cache"))
    return Installed(python, Path(paths["scripts"]), elsewhere, env)


def package_files():
    """The files of the package in the checkout (its modules and data), relative to the root: git's, else
    (a tree without git, such as the sdist's) those on disk but caches: numba's (``.nbi``, ``.nbc``, its
    runtime's ``.npz``) and Python's."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        done = run(["git", "ls-files", "-z", "structperc"], cwd=ROOT)
        return {name for name in done.stdout.split("\0") if name}
    files = set()
    for path in (ROOT / "structperc").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith((".pyc", ".nbi", ".nbc",
                                                                                          ".npz")):
            files.add(path.relative_to(ROOT).as_posix())
    return files


def test_the_wheel_holds_the_package_and_its_data_only(dist):
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = wheel.namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"structperc", f"structperc-{dist.version}.dist-info"}
    for data in ("structperc/data/manifest.json", "structperc/report/report.js", "structperc/report/report.css",
                 "structperc/serve/page/index.html"):
        assert data in names
    assert not [name for name in names if "/tests/" in name or "/corpora/" in name or name.endswith(".npz")]
    # every module and data file of the package, so that what runs from the checkout runs from the wheel
    # (test_the_installed_wheel_builds_a_named_model_and_tags_raw_text runs it, under make test-slow)
    packaged = {name for name in names if name.startswith("structperc/")}
    assert sorted(package_files() - packaged) == []


def test_the_sdist_holds_the_source_tree_without_data(dist):
    with tarfile.open(dist.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for needed in ("pyproject.toml", "MANIFEST.in", "README.md", "Makefile", "conftest.py", "tests/conftest.py",
                   "tests/data/tiny.conll", "tests/test_wheel.py", "docs/models.md", "mkdocs.yml",
                   "structperc/data/manifest.json", "structperc/report/report.js", "corpora/README.md",
                   "experiments/collins2002/__init__.py"):
        assert needed in names, needed
    assert not [name for name in names if name.startswith("corpora/") and name != "corpora/README.md"]
    assert not [name for name in names if "__pycache__" in name or name.startswith((".git/", ".venv/"))]


def test_twine_check_passes(dist):
    done = run([sys.executable, "-m", "twine", "check", "--strict", dist.sdist, dist.wheel], env=clean_env())
    assert done.stdout.count("PASSED") == 2, done.stdout


def stand_in_pos_tagger(folder):
    """A recipes file with a stand-in en-ewt-xpos (see the module's docstring): the shipped recipe's
    corpus, files, reading and templates, trained on the development file for 3 epochs."""
    manifest = json.loads((ROOT / "structperc" / "data" / "manifest.json").read_text(encoding="utf-8"))
    ewt, = [entry for entry in manifest["corpora"] if entry["name"] == "ud_english_ewt"]
    files = {spec["path"]: spec["sha256"] for spec in ewt["files"]}
    recipe = {"name": "en-ewt-xpos", "task": "PTB tags (a small stand-in)", "corpus": "ud_english_ewt",
              "files": {name: files[name] for name in ("en_ewt-ud-dev.conllu", "en_ewt-ud-test.conllu")},
              "train": "en_ewt-ud-dev.conllu", "test": "en_ewt-ud-test.conllu", "format": "conllu", "label": "xpos",
              "templates": "pos-ud", "epochs": 3, "licence": "CC BY-SA 4.0"}
    path = folder / "recipes.json"
    path.write_text(json.dumps([recipe]), encoding="utf-8")
    return path


def test_the_installed_wheel_runs_from_another_folder(installed, dist):
    done = run([installed.python, "-c", "import structperc; print(structperc.__file__)"], cwd=installed.cwd,
               env=installed.env)
    venv = installed.python.parents[1]
    assert venv in Path(done.stdout.strip()).resolve().parents, done.stdout  # the wheel's copy, not the checkout's

    assert installed.run("--version").stdout == f"structperc {dist.version}\n"

    listed = json.loads(installed.run("data", "list", "--json").stdout)
    shipped = json.loads((ROOT / "structperc" / "data" / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in listed] == [entry["name"] for entry in shipped["corpora"]]
    assert "conll2000" in [entry["name"] for entry in listed]


# slow: a fresh venv compiles every kernel it runs (about a minute on a busy machine); by default the installed
# wheel runs in test_the_installed_wheel_runs_from_another_folder, and test_the_wheel_holds_the_package_and_its_data_only
# checks that every module and data file is in it
@pytest.mark.slow
def test_the_installed_wheel_builds_a_named_model_and_tags_raw_text(installed, dist, corpus_mirror):
    record = json.loads(installed.run("models", "build", "en-np", "--mirror", corpus_mirror, "--json").stdout)
    model = Path(installed.env["XDG_CACHE_HOME"]) / "structperc" / dist.version / "models" / "en-np.npz"
    assert model.is_file() and record["name"] == "en-np" and record["size"] == model.stat().st_size
    assert 90 < record["test"]["f1"] <= 100  # NP chunks of CoNLL-2000 test, gold POS tags

    env = {**installed.env, "STRUCTPERC_MIRROR": str(corpus_mirror),
           "STRUCTPERC_RECIPES": str(stand_in_pos_tagger(installed.cwd.parent))}
    done = installed.run("tag", "-", "--model", "en-np", "--output-format", "jsonl", input=TEXT + "\n", env=env)
    assert "building model en-ewt-xpos" in done.stderr  # the input model, built on first use
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [record["text"] for record in records] == ["Mary left early.", "She was tired."]
    for record in records:
        assert [TEXT[token["start"]:token["end"]] for token in record["tokens"]] == [
            token["text"] for token in record["tokens"]]
        assert set(record["tags"]) <= {"B-NP", "I-NP", "O"} and len(record["tags"]) == len(record["tokens"])
        for span in record["spans"]:
            assert span["label"] == "NP" and span["start"] < span["end"]
    assert [(span["start"], span["end"]) for span in records[1]["spans"]][:1] == [(17, 20)]  # "She"
    assert not (installed.cwd / "corpora").exists()  # a named model's corpus is fetched into the cache
    # the installed wheel serves the model it built, until /ready
    serve_until_ready(installed, "en-np", env)


def serve_until_ready(installed, model, env, timeout=180):
    """Start ``structperc serve MODEL`` from the installed venv on a free port of 127.0.0.1, wait for
    /ready (200), tag one sentence through /v1/tag, and stop it with SIGTERM (exit 0)."""
    import signal
    import socket
    import subprocess
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([installed.script("structperc"), "serve", model, "--port", str(port), "--workers", "1"],
                              cwd=installed.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, status = time.monotonic() + timeout, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"{base}/ready", timeout=5) as answer:
                    status = answer.status
            except (urllib.error.URLError, ConnectionError, OSError):
                status = None
            if status == 200:
                break
            time.sleep(0.5)
        assert status == 200, server.stderr.read() if server.poll() is not None else "no /ready in time"
        request = urllib.request.Request(f"{base}/v1/tag", data=json.dumps({"text": TEXT}).encode("utf-8"),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            tagged = json.loads(answer.read())
        assert "NP" in json.dumps(tagged)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
