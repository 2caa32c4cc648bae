"""A model records how to read data as it was trained, whichever way it was trained: the same model
trained from Python (``read_corpus`` then ``fit``) and from the command line (``train``) is scored the
same by the command line's ``eval``, only_types and a non-UTF-8 encoding included."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import forked_cli

ROOT = Path(__file__).resolve().parents[1]


def structperc(*args, cwd):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, cwd=cwd, timeout=600)


def first_sentences(source, target, n, encoding):
    """The first n sentences of a CoNLL-2000 file, a word of each made non-ASCII, in ``encoding``."""
    blocks = [b for b in source.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
    blocks = [block.replace("the ", "thé ", 1) for block in blocks]
    target.write_bytes(("\n\n".join(blocks) + "\n\n").encode(encoding))


def test_a_model_trained_from_python_reads_its_test_file_as_the_one_trained_from_the_cli(tmp_path, corpus_mirror):
    first_sentences(corpus_mirror / "conll2000" / "train.txt", tmp_path / "train.txt", 600, "cp1252")
    first_sentences(corpus_mirror / "conll2000" / "test.txt", tmp_path / "test.txt", 150, "cp1252")
    script = ("from structperc import Tagger, read_corpus\n"
              "train = read_corpus('train.txt', columns=['word', 'pos', 'chunk'], only_types=['NP'], "
              "encoding='cp1252')\n"
              "Tagger(templates='chunk', epochs=3, constrain='bio').fit(train).save('python.npz')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    done = structperc("train", "train.txt", "--model", "cli.npz", "--columns", "word,pos,chunk", "--only-types", "NP",
                      "--encoding", "cp1252", "--templates", "chunk", "--epochs", 3, "--constrain", "bio", "--quiet",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    scores = {}
    for model in ("python.npz", "cli.npz"):
        done = structperc("eval", "test.txt", "--model", model, "--json", cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        scores[model] = {k: v for k, v in json.loads(done.stdout).items() if k not in ("seconds", "tokens_per_second")}
    assert scores["python.npz"] == scores["cli.npz"]
    assert set(scores["cli.npz"]["per_type"]) == {"NP"} and scores["cli.npz"]["f1"] > 80
    # the records themselves: the same reading of the training file
    inputs = [json.loads(structperc("info", model, "--json", "--top", 0, cwd=tmp_path).stdout)["input"]
              for model in ("python.npz", "cli.npz")]
    assert inputs[0] == inputs[1] and inputs[0]["only_types"] == ["NP"] and inputs[0]["encoding"] == "cp1252"


@pytest.mark.slow
def test_the_readmes_python_example_then_its_eval_gives_the_readmes_score(tmp_path, corpus_mirror):
    """README.md's Python example on the full CoNLL-2000, then README.md's `eval` of its np.npz: the
    same F1 as the model the command line trains (`structperc train`, as the README shows it)."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "conll2000").symlink_to(corpus_mirror / "conll2000")
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    python = structperc("eval", "corpora/conll2000/test.txt", "--model", "np.npz", cwd=tmp_path)
    assert python.returncode == 0 and "does not know" not in python.stderr, python.stderr
    done = structperc("train", "corpora/conll2000/train.txt", "--model", "np.npz", "--columns", "word,pos,chunk",
                      "--only-types", "NP", "--templates", "chunk", "--constrain", "bio", "--epochs", 10, "--quiet",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cli = structperc("eval", "corpora/conll2000/test.txt", "--model", "np.npz", cwd=tmp_path)
    f1 = [re.search(r"FB1: +([\d.]+)", run.stdout).group(1) for run in (python, cli)]
    assert f1[0] == f1[1]
