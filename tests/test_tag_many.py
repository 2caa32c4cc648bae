"""`structperc tag a.txt b.txt --output-dir DIR`: several inputs, one output file each under the input's
name, each the same as tagging that input alone; and the ways of asking for it wrongly, each one line
and status 2 before anything is written."""
import json

import pytest
import forked_cli

TRAIN = "The DT B-NP\ncat NN I-NP\nsat VBD O\n\nA DT B-NP\ndog NN I-NP\nbarked VBD O\n\n"


def structperc(*args, cwd):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    (folder / "train.txt").write_text(TRAIN, encoding="utf-8")
    done = structperc("train", "train.txt", "--model", "m.npz", "--epochs", 2, "--quiet", cwd=folder)
    assert done.returncode == 0, done.stderr
    (folder / "in").mkdir()
    (folder / "in" / "a.txt").write_text("The DT\ncat NN\n\n", encoding="utf-8")
    (folder / "in" / "b.txt").write_text("A DT\ndog NN\nsat VBD\n\nThe DT\n\n", encoding="utf-8")
    (folder / "other").mkdir()
    (folder / "other" / "a.txt").write_text("A DT\n\n", encoding="utf-8")
    return folder


def test_several_inputs_go_to_one_file_each_as_if_tagged_alone(folder):
    done = structperc("tag", "in/a.txt", "in/b.txt", "--model", "m.npz", "--output-dir", "out", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (folder / "out").iterdir()) == ["a.txt", "b.txt"]
    for name in ("a.txt", "b.txt"):
        alone = structperc("tag", f"in/{name}", "--model", "m.npz", "--quiet", cwd=folder)
        assert alone.returncode == 0, alone.stderr
        assert (folder / "out" / name).read_text(encoding="utf-8") == alone.stdout
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["in/a.txt -> out/a.txt",
                                                                         "in/b.txt -> out/b.txt"]
    done = structperc("tag", "in/a.txt", "in/b.txt", "--model", "m.npz", "--output-dir", "out2", "--json", cwd=folder)
    summary = json.loads(done.stdout)
    assert [o["output"] for o in summary["outputs"]] == ["out2/a.txt", "out2/b.txt"]
    assert (summary["sentences"], summary["tokens"]) == (3, 6)


@pytest.mark.parametrize("args, says", [
    (["in/a.txt", "in/b.txt"], "give --output-dir"),
    (["in/a.txt", "in/b.txt", "--output-dir", "bad", "--output", "x.txt"], "--output"),
    (["in/a.txt", "-", "--output-dir", "bad"], "standard input"),
    (["in/a.txt", "in/nope.txt", "--output-dir", "bad"], "in/nope.txt: no such file"),
    (["in/a.txt", "other/a.txt", "--output-dir", "bad"], "would both be written to bad/a.txt"),
    (["in/a.txt", "in/b.txt", "--output-dir", "in"], "would write over it"),
])
def test_asking_wrongly_is_one_line_and_writes_nothing(folder, args, says):
    before = {p: p.read_bytes() for p in folder.rglob("*.txt")}
    done = structperc("tag", *args, "--model", "m.npz", cwd=folder)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (folder / "bad").exists()
    assert {p: p.read_bytes() for p in folder.rglob("*.txt")} == before
