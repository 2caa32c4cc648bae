"""Named models: a tiny recipe (``$STRUCTPERC_RECIPES``) on a tiny corpus built twice to the same bytes,
a changed file refused and rebuilt, two real processes building the same name at once, a real SIGINT
during a build, the error without network and mirror, research-only notices, names wherever a model
path goes, names that are no model names refused before they become paths, an unknown name as one
line. Every test has its own cache (``XDG_CACHE_HOME`` in tmp_path), never the user's."""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import forked_cli
from builders import structperc_process

from structperc.errors import DataFetchError, StructpercWarning

TAGS = ("DET", "NOUN", "VERB")


def conllu(n_sentences, seed):
    """CoNLL-U of random sentences whose words each have one tag (word k of tag k % 3)."""
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_sentences):
        words = rng.integers(0, 30, size=rng.integers(2, 8))
        rows = [f"{i}\tw{k}\t_\t{TAGS[k % 3]}\t_\t_\t_\t_\t_\t_" for i, k in enumerate(words, 1)]
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A mirror holding corpus tiny_pos, recipes over it, and an environment that points at both
    and at a cache and corpora folder of this test's own."""
    mirror = tmp_path / "mirror"
    (mirror / "tiny_pos").mkdir(parents=True)
    files = {"train.conllu": conllu(60, 0), "test.conllu": conllu(20, 1), "big.conllu": conllu(4000, 2)}
    entries = []
    for name, text in files.items():
        (mirror / "tiny_pos" / name).write_text(text, encoding="utf-8")
        entries.append({"path": name, "sha256": sha256(mirror / "tiny_pos" / name),
                        "url": f"http://127.0.0.1:9/tiny_pos/{name}"})  # nothing listens: no network
    manifest = {"corpora": [{"name": "tiny_pos", "format": "conllu", "licence": "test data", "files": entries}]}
    shas = {e["path"]: e["sha256"] for e in entries}
    base = {"task": "test tags", "corpus": "tiny_pos", "test": "test.conllu", "format": "conllu", "label": "upos",
            "templates": "pos", "licence": "test data", "manifest": manifest}
    recipes = [
        {**base, "name": "tiny-upos", "files": {k: shas[k] for k in ("train.conllu", "test.conllu")},
         "train": "train.conllu", "epochs": 3, "build_seconds": 7},
        {**base, "name": "tiny-research", "files": {k: shas[k] for k in ("train.conllu", "test.conllu")},
         "train": "train.conllu", "epochs": 2, "licence": "research use only (test)", "research_only": True},
        # trains until interrupted: its epochs over a separable file log 0.00s each
        {**base, "name": "tiny-slow", "files": {k: shas[k] for k in ("big.conllu", "test.conllu")},
         "train": "big.conllu", "epochs": 10 ** 7},
    ]
    (tmp_path / "recipes.json").write_text(json.dumps(recipes), encoding="utf-8")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "STRUCTPERC_RECIPES": str(tmp_path / "recipes.json"),
           "STRUCTPERC_CORPORA": str(tmp_path / "corpora"), "STRUCTPERC_MIRROR": str(mirror)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    from structperc.models import cache

    return {"mirror": mirror, "env": {**os.environ, **env}, "models": cache.models_dir()}


def test_the_cache_is_under_xdg_cache_home_and_the_version(tiny, tmp_path):
    from structperc import __version__
    from structperc.models import cache

    assert cache.models_dir() == tmp_path / "cache" / "structperc" / __version__ / "models"


def test_a_recipe_built_twice_gives_the_same_bytes(tiny):
    from structperc.models import cache, recipe_of
    from structperc.models.build import build

    first = build(recipe_of("tiny-upos"))
    data = cache.model_file("tiny-upos").read_bytes()
    time.sleep(1.1)  # a zip member dated by the clock would now differ
    second = build(recipe_of("tiny-upos"))
    assert cache.model_file("tiny-upos").read_bytes() == data
    assert first["sha256"] == second["sha256"] == hashlib.sha256(data).hexdigest()
    assert 90 < first["test"]["accuracy"] <= 100  # each word has one tag


def test_a_model_changed_on_disk_is_refused_and_rebuilt(tiny):
    from structperc.models import cache, load_named

    said = []
    tagger = load_named("tiny-upos", report=said.append)
    assert said[0] == "building model tiny-upos from its recipe (once); a build took 7 s where the recipe was measured"
    good = cache.model_file("tiny-upos").read_bytes()
    assert [label for _, label in tagger.tag(["w0", "w1", "w2"])] == ["DET", "NOUN", "VERB"]
    with open(cache.model_file("tiny-upos"), "r+b") as handle:  # one byte of the weights flipped
        handle.seek(len(good) // 2)
        byte = handle.read(1)
        handle.seek(len(good) // 2)
        handle.write(bytes([byte[0] ^ 1]))
    record, why = cache.check_built("tiny-upos")
    assert record is None and "changed on disk" in why
    said.clear()
    load_named("tiny-upos", report=said.append)
    assert "changed on disk" in said[0] and "building it again" in said[0]
    assert said[1].startswith("building model tiny-upos from its recipe (once); the last build took")
    assert cache.model_file("tiny-upos").read_bytes() == good


def test_a_model_built_from_another_recipe_is_built_again(tiny, tmp_path):
    from structperc.models import cache, list_models, load_named

    load_named("tiny-upos", report=lambda text: None)
    recipes = json.loads((tmp_path / "recipes.json").read_text(encoding="utf-8"))
    recipes[0]["epochs"] = 4  # the recipe changed since the build
    (tmp_path / "recipes.json").write_text(json.dumps(recipes), encoding="utf-8")
    assert not {e["name"]: e for e in list_models()}["tiny-upos"]["built"]
    said = []
    load_named("tiny-upos", report=said.append)
    assert "was built from another recipe of tiny-upos" in said[0] and "building it again" in said[0]
    assert cache.read_record("tiny-upos")["recipe"]["epochs"] == 4
    said.clear()
    load_named("tiny-upos", report=said.append)
    assert said == []
    recipes[0]["build_seconds"] = 70  # a hint shown before a build, not part of what makes the model
    (tmp_path / "recipes.json").write_text(json.dumps(recipes), encoding="utf-8")
    load_named("tiny-upos", report=said.append)
    assert said == [] and {e["name"]: e for e in list_models()}["tiny-upos"]["built"]


def test_a_name_works_where_a_model_path_does(tiny):
    import structperc

    sentences = structperc.load_model("tiny-upos").tag("w3 w4.\nw5")
    assert [[word for word, _ in sentence] for sentence in sentences] == [["w3", "w4", "."], ["w5"]]
    assert [sentences[0][0][1], sentences[0][1][1]] == ["DET", "NOUN"]
    done = forked_cli.run(["tag", "-", "--model", "tiny-upos", "--output-format", "jsonl"], input="w0 w1\n",
                          env=tiny["env"], timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tags"] == ["DET", "NOUN"]
    done = forked_cli.run(["models", "list", "--json"], env=tiny["env"], timeout=300)
    entries = {e["name"]: e for e in json.loads(done.stdout)}
    assert entries["tiny-upos"]["built"] and set(entries["tiny-upos"]["test"]) == {"accuracy"}
    assert not entries["tiny-slow"]["built"] and entries["tiny-slow"]["test"] is None
    assert {"en-ewt-upos", "en-ewt-xpos", "en-ewt-upos-feats", "en-conll2000-chunk", "en-np",
            "nl-conll2002-ner"} <= set(entries)
    done = forked_cli.run(["tag", "-", "--model", "tiny-nope"], input="w0\n", env=tiny["env"], timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith("structperc: error: tiny-nope: no such model file, nor a model's name (names: ")
    assert "tiny-upos" in done.stderr and done.stderr.count("\n") == 1


def test_without_network_and_mirror_an_unbuilt_name_is_one_clear_error(tiny, monkeypatch):
    import structperc

    monkeypatch.delenv("STRUCTPERC_MIRROR")
    with pytest.raises(DataFetchError, match=r"data fetch tiny_pos --mirror DIR.*--mirror DIR") as raised:
        structperc.load_model("tiny-upos")
    assert str(raised.value).count("STRUCTPERC_MIRROR") == 1  # the advice is given once
    env = {k: v for k, v in tiny["env"].items() if k != "STRUCTPERC_MIRROR"}
    done = forked_cli.run(["models", "build", "tiny-upos"], env=env, timeout=300)
    assert done.returncode == 2
    error = [line for line in done.stderr.splitlines() if line.startswith("structperc: error:")]
    assert len(error) == 1 and "structperc data fetch tiny_pos" in error[0] and "Traceback" not in done.stderr
    assert not list(tiny["models"].glob("*.npz"))


def test_an_unknown_model_name_is_one_line_and_status_2(tiny):
    done = forked_cli.run(["models", "build", "no-such-model"], env=tiny["env"], timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.startswith("structperc: error: unknown model 'no-such-model'; known models: ")
    assert "en-np" in done.stderr and "tiny-upos" in done.stderr


ESCAPES = ("../escape", "../../escape", "a/../../escape", "/tmp/escape", "..", ".escape", "Escape", "escape\n",
           "es cape", "a\\escape", "")


@pytest.mark.parametrize("name", ESCAPES)
def test_a_name_that_is_not_a_model_name_never_becomes_a_path(tiny, name):
    from structperc.errors import ModelNameError
    from structperc.models import cache

    for make_path in (cache.model_file, cache.record_file):
        with pytest.raises(ModelNameError, match="is not a model name"):
            make_path(name)
    with pytest.raises(ModelNameError, match="is not a model name"):
        with cache.build_lock(name):
            pass


def test_a_recipe_named_with_a_slash_or_dots_cannot_reach_outside_the_cache(tiny, tmp_path, monkeypatch):
    """A recipe of $STRUCTPERC_RECIPES that would write ``<cache>/structperc/escape.npz`` (or further up) is
    refused, through the API and the command line, and nothing is written outside the models' folder."""
    from structperc.errors import ModelNameError
    from structperc.models.recipes import all_recipes

    good = json.loads((tmp_path / "recipes.json").read_text(encoding="utf-8"))[0]
    for name in ("../escape", "../../../escape", "sub/escape"):
        recipes = tmp_path / "bad-recipes.json"
        recipes.write_text(json.dumps([{**good, "name": name}]), encoding="utf-8")
        env = {**tiny["env"], "STRUCTPERC_RECIPES": str(recipes)}
        done = forked_cli.run(["models", "build", name], env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"structperc: error: {recipes}: a recipe of $STRUCTPERC_RECIPES: {name!r} is not a "
                               f"model name: lower-case letters, digits, '.', '_' and '-', starting with a letter or "
                               f"digit\n")
        monkeypatch.setenv("STRUCTPERC_RECIPES", str(recipes))
        with pytest.raises(ModelNameError):
            all_recipes()
    assert not [p for p in tmp_path.rglob("*escape*")]


def test_the_shipped_names_are_model_names():
    from structperc.models import RECIPES
    from structperc.models.cache import MODEL_NAME

    assert RECIPES and all(MODEL_NAME.fullmatch(name) for name in RECIPES)


def test_a_research_only_model_says_so_once_when_built_and_loaded(tiny):
    from structperc.models import load_named

    said = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_named("tiny-research", report=said.append)
    assert not [line for line in said if "research use" in line]
    assert [str(w.message) for w in caught if issubclass(w.category, StructpercWarning)] == [
        "model tiny-research: research use only (test)"]
    # the command line: built and loaded, the notice is one line
    tiny["models"].joinpath("tiny-research.json").unlink()
    done = forked_cli.run(["tag", "-", "--model", "tiny-research", "--output-format", "jsonl"], input="w0 w1\n",
                          env=tiny["env"], timeout=300)
    assert done.returncode == 0, done.stderr
    assert "building model tiny-research" in done.stderr
    assert done.stderr.count("research use only (test)") == 1, done.stderr


# the commands' loader (no scikit-learn import), as `structperc tag --model tiny-upos` loads it
LOAD = ("import hashlib; from structperc.models import load_named, model_path; load_named('tiny-upos'); "
        "print(hashlib.sha256(model_path('tiny-upos').read_bytes()).hexdigest())")


def test_two_processes_loading_one_unbuilt_name_end_with_the_same_good_file(tiny):
    from structperc.models import cache

    processes = [subprocess.Popen([sys.executable, "-c", LOAD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=tiny["env"]) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err for _, err in outputs]
    shas = {out.strip() for out, _ in outputs}
    assert len(shas) == 1
    record, why = cache.check_built("tiny-upos")
    assert why is None and {record["sha256"]} == shas
    # one built it, the other waited for the lock and loaded that file
    assert sum("building model tiny-upos" in err for _, err in outputs) == 1
    assert sorted(p.name for p in tiny["models"].iterdir()) == ["tiny-upos.json", "tiny-upos.lock", "tiny-upos.npz"]


def test_ctrl_c_during_a_build_leaves_nothing_a_load_takes_for_a_model(tiny):
    from structperc.models import cache

    # the fixture's variables are in os.environ too; the child takes SIGINT as Ctrl-C even when this
    # run was started as a background job (SIGINT ignored)
    process = structperc_process("models", "build", "tiny-slow")
    seen = []
    for line in process.stderr:  # the epochs' lines: training is under way
        seen.append(line)
        if line.startswith("epoch   2"):
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)
    assert process.returncode == 130, "".join(seen) + rest
    assert rest.strip().endswith("interrupted; no model written")
    assert sorted(p.name for p in tiny["models"].iterdir()) == ["tiny-slow.lock"]
    record, why = cache.check_built("tiny-slow")
    assert record is None and why == "not built"


@pytest.mark.slow
def test_after_make_demo_raw_text_goes_to_jsonl_with_the_named_model(tmp_path, corpus_mirror):
    """`make demo`, then the command it prints last, as printed, which builds en-ewt-upos on first use
    from the mirror (in this test's cache: `make demo` leaves it unbuilt and says how)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(["make", "-s", "demo", f"MIRROR_DIR={corpus_mirror}"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    command = lines[lines.index("Next, raw text (the named model en-ewt-upos is built on first use):") + 1].strip()
    assert f"--mirror {corpus_mirror}" in command
    command = command.replace("echo 'Mary left early.'", "echo 'Mary left early. She was tired.'")
    done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["text"] for r in records] == ["Mary left early.", "She was tired."]
    assert records[0]["tags"] == ["PROPN", "VERB", "ADV", "PUNCT"]
    assert [(t["start"], t["end"]) for t in records[1]["tokens"]] == [(17, 20), (21, 24), (25, 30), (30, 31)]


def test_a_named_models_first_use_in_a_pipe_says_each_step_and_epoch(tiny):
    """Outside a terminal: the build's announcement with its estimate, then a line per step and per
    epoch, before the command's own output."""
    done = forked_cli.run(["tag", "-", "--model", "tiny-upos", "--output-format", "jsonl"], input="w0 w1\n",
                          env=tiny["env"], timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line != "compiling kernels, once"]
    assert lines[0] == "building model tiny-upos from its recipe (once); a build took 7 s where the recipe was measured"
    assert any(line.startswith("tiny_pos/train.conllu: copying from ") for line in lines)
    assert "tiny-upos: training on tiny_pos/train.conllu, 3 epochs" in lines
    epochs = [line for line in lines if line.startswith("epoch")]
    assert [line.split()[:2] for line in epochs] == [["epoch", "1"], ["epoch", "2"], ["epoch", "3"]]
    # from the second epoch, what the epochs left would take at its pace (none after the first: it compiles)
    assert "left)" not in epochs[0] and re.search(r"\(about \d+ s left\)$", epochs[1]) and "left)" not in epochs[2]
    assert "tiny-upos: scoring on tiny_pos/test.conllu" in lines
    assert any(line.startswith("tiny-upos: test accuracy ") for line in lines)
    assert lines[-1].startswith("tagged 1 sentence")
    # built: the next use says nothing of it
    done = forked_cli.run(["tag", "-", "--model", "tiny-upos", "--quiet", "--output-format", "jsonl"],
                          input="w0 w1\n", env=tiny["env"], timeout=300)
    assert done.returncode == 0 and done.stderr == ""


def test_every_command_that_takes_a_model_takes_mirror(tiny):
    """Without $STRUCTPERC_MIRROR and without network, --mirror builds a named model on first use."""
    import typer

    from structperc.cli.main import app

    def commands(group, path=()):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):  # a group
                yield from commands(command, path + (name,))
            else:
                yield path + (name,), command

    taking = {path: {p.name for p in command.params} for path, command in commands(typer.main.get_command(app))
              if "model" in {p.name for p in command.params} or path == ("info",)}
    for writes_or_reranks in (("train",), ("rerank", "train"), ("rerank", "apply")):
        taking.pop(writes_or_reranks)  # --model: the file it writes, or a reranker; never a named model
    assert {("tag",), ("eval",), ("explain",), ("info",), ("nbest",)} <= set(taking)
    assert [path for path, params in taking.items() if "mirror" not in params] == []
    env = {k: v for k, v in tiny["env"].items() if k != "STRUCTPERC_MIRROR"}
    done = forked_cli.run(["tag", "-", "--model", "tiny-upos", "--mirror", tiny["mirror"], "--output-format", "jsonl"],
                          input="w0 w1\n", env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tags"] == ["DET", "NOUN"]


def test_the_demos_closing_hint_works_as_printed_offline_with_the_mirror(tmp_path, corpus_mirror):
    """`make demo`'s last step, with en-ewt-upos not built: the command it prints runs as printed with
    no network and no $STRUCTPERC_MIRROR (a stand-in en-ewt-upos over a slice of the mirror's EWT)."""
    from standins import write_standins

    root = Path(__file__).resolve().parents[1]
    mirror, recipes = write_standins(corpus_mirror, tmp_path, train_sentences=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTPERC_")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), STRUCTPERC_RECIPES=str(recipes),
               STRUCTPERC_CORPORA=str(tmp_path / "corpora"), PYTHONPATH=str(root),
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9")  # no network
    structperc = f"{sys.executable} -m structperc"
    done = subprocess.run(["make", "-s", "demo-raw-text", f"MIRROR_DIR={mirror}", f"SP={structperc}",
                           f"BIN={Path(sys.executable).parent}"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Next, raw text (the named model en-ewt-upos is built on first use):"
    command = lines[1].strip()
    done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["text"] == "Mary left early." and len(record["tags"]) == 4
    assert "building model en-ewt-upos" in done.stderr
