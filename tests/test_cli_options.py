"""The command line's options as a user meets them, each in a real process: an option that does not
apply is one line and exit status 2, renamed options keep their old spelling for now, choices and
ranges show in --help, --version, plurals, empty input and --encoding."""
import forked_cli
import pytest

from structperc.features.templates import PRESETS
from structperc.readers.registry import FORMATS
from structperc.train import TRAINERS

TRAIN = "The DT B-NP\ncat NN I-NP\nsat VBD O\n\nA DT B-NP\ndog NN I-NP\nran VBD O\n\n"


def structperc(*args, cwd, input=None):
    # a real process each, forked from one that imported the command line once (forked_cli.py)
    return forked_cli.run(args, cwd=cwd, input=input, timeout=600)


def assert_one_line_usage_error(done, *words):
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("structperc: error: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]


# ---------------------------------------------------------------------------------------- options that do not apply
@pytest.mark.parametrize("extra, words", [
    (["--rounds", 3], ["--rounds", "--semi"]),
    (["--lexicon-lower"], ["--lexicon-lower", "--lexicon"]),
    (["--semi", "self", "--unlabeled", "u.txt", "--checkpoint-every", 1], ["--checkpoint-every", "--semi"]),
    (["--semi", "self", "--unlabeled", "u.txt", "--resume", "c.npz"], ["--resume", "--semi"]),
    (["--semi", "self", "--unlabeled", "u.txt", "--cache-dir", "cache"], ["--cache-dir", "--semi"]),
    (["--unlabeled", "u.txt"], ["--unlabeled", "--semi"]),
    (["--mix", "errors"], ["--mix", "parameter mixing"]),
])
def test_train_options_that_do_not_apply_are_one_line_and_exit_2(tmp_path, extra, words):
    (tmp_path / "t.txt").write_text(TRAIN)
    done = structperc("train", "t.txt", "--model", "m.npz", "--columns", "word,pos,chunk", *extra, cwd=tmp_path)
    assert_one_line_usage_error(done, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


@pytest.mark.parametrize("extra, words", [
    (["--learner", "boost", "--epochs", 3], ["--epochs", "boost"]),
    (["--learner", "boost", "--no-average"], ["--no-average", "boost"]),
    (["--learner", "boost", "--seed", 1], ["--seed", "boost"]),
    (["--boost", "--epochs", 3], ["--epochs", "boost"]),
    (["--voted", "--no-average"], ["--no-average", "voted"]),
    (["--kernel", "poly:2", "--no-average"], ["--no-average", "kernel"]),
    (["--learner", "kernel", "--no-average"], ["--no-average", "kernel"]),
    (["--rounds", 5], ["--rounds", "boost"]),
    (["--boost-rounds", 5], ["--boost-rounds", "boost"]),
    (["--epsilon", 0.1], ["--epsilon", "boost"]),
    (["--learner", "voted", "--epsilon", 0.1], ["--epsilon", "boost"]),
    (["--learner", "boost", "--voted"], ["--voted", "--learner"]),
])
def test_rerank_train_options_of_another_learner_are_one_line_and_exit_2(tmp_path, extra, words):
    done = structperc("rerank", "train", "lists.svm", "--model", "r.npz", *extra, cwd=tmp_path)
    assert_one_line_usage_error(done, *words)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------- renamed options
@pytest.mark.parametrize("args, words", [
    (["reproduce", "collins2002", "--output", "a", "--out", "b"], ["--out", "--output"]),
    (["data", "fetch", "conll2000", "--output", "a", "--dest", "b"], ["--dest", "--output"]),
    (["nbest", "x.txt", "--model", "m.npz", "--candidates", 2, "--k", 3], ["--k", "--candidates"]),
    (["nbest", "x.txt", "--model", "m.npz", "--output-format", "svmrank", "--format", "block"],
     ["--format", "--output-format"]),
    (["clusters", "x.txt", "--n-clusters", 2, "--clusters", 3], ["--clusters", "--n-clusters"]),
    (["rerank", "train", "x.svm", "--model", "r.npz", "--learner", "boost", "--boost-rounds", 2, "--rounds", 3],
     ["--rounds", "--boost-rounds"]),
])
def test_an_old_and_a_new_spelling_together_are_one_line_and_exit_2(tmp_path, args, words):
    assert_one_line_usage_error(structperc(*args, cwd=tmp_path), *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command, new, old", [
    (["reproduce"], "--output", "--out"), (["data", "fetch"], "--output", "--dest"),
    (["nbest"], "--candidates", "--k"), (["nbest"], "--output-format", "--format"),
    (["clusters"], "--n-clusters", "--clusters"), (["rerank", "train"], "--boost-rounds", "--rounds"),
    (["rerank", "train"], "--learner", "--voted"), (["rerank", "train"], "--learner", "--boost"),
])
def test_help_shows_the_new_name_only(tmp_path, command, new, old):
    done = structperc(*command, "--help", cwd=tmp_path)
    assert done.returncode == 0
    names = {word.rstrip(",") for line in done.stdout.splitlines() for word in line.split()}
    assert new in names and old not in names


def test_an_old_spelling_still_works_with_one_deprecation_line(tmp_path):
    text = tmp_path / "raw.txt"
    text.write_text("the cat sat\nthe dog sat\na cat ran\n")
    # the new spelling first: on a cold numba cache it compiles the kernels (and says so), once
    new = structperc("clusters", text, "--n-clusters", 2, "--quiet", cwd=tmp_path)
    old = structperc("clusters", text, "--clusters", 2, "--quiet", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr + new.stderr
    assert old.stdout == new.stdout and new.stdout
    assert set(new.stderr.splitlines()) <= {"compiling kernels, once"}
    assert old.stderr.splitlines() == ["structperc: warning: --clusters is deprecated; use --n-clusters"]


# ---------------------------------------------------------------------------------------- choices and ranges
def test_help_lists_the_choices_and_ranges(tmp_path):
    train = structperc("train", "--help", cwd=tmp_path).stdout
    assert "<" + "|".join(TRAINERS) + ">" in train
    assert "<" + "|".join(FORMATS) + ">" in train
    assert "[" + "|".join(PRESETS) + "|FILE]" in train
    for values in ("<self|tri|tri-disagree>", "<uniform|errors>", "<none|bio|iob1|bioes>"):
        assert values in train
    assert "x>=0" in train and "x>=1" in train  # --tag-dict, --min-count; --epochs, --workers
    assert "<best|all>" in structperc("tag", "--help", cwd=tmp_path).stdout
    assert "<perceptron|voted|kernel|boost>" in structperc("rerank", "train", "--help", cwd=tmp_path).stdout


@pytest.mark.parametrize("args, words", [
    (["train", "t.txt", "-m", "m.npz", "--tag-dict", -1], ["--tag-dict", "-1"]),
    (["train", "t.txt", "-m", "m.npz", "--min-count", -5], ["--min-count", "-5"]),
    (["train", "t.txt", "-m", "m.npz", "--epochs", "abc"], ["--epochs: 'abc' is not an integer"]),
    (["train", "t.txt", "-m", "m.npz", "--format", "xyz"], ["--format", "'xyz'", "conllu"]),
    (["train", "t.txt", "-m", "m.npz", "--trainer", "perceptorn"], ["--trainer", "perceptorn", "crf"]),
    (["train", "t.txt", "-m", "m.npz", "--templates", "nope"], ["--templates", "'nope'", "chunk"]),
    (["tag", "t.txt", "-m", "m.npz", "--marginals", "bestest"], ["--marginals", "'bestest'", "best", "all"]),
    (["train", "missing.txt", "-m", "m.npz"], ["missing.txt"]),
])
def test_a_bad_value_is_one_line_naming_the_option(tmp_path, args, words):
    (tmp_path / "t.txt").write_text(TRAIN)
    assert_one_line_usage_error(structperc(*args, cwd=tmp_path), *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_a_template_file_is_still_accepted(tmp_path):
    (tmp_path / "t.txt").write_text(TRAIN)
    (tmp_path / "templates.txt").write_text("w[0]\nw[-1]|w[0]\n")
    done = structperc("train", "t.txt", "-m", "m.npz", "--columns", "word,pos,chunk", "--templates", "templates.txt",
                      "--epochs", 1, "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.npz").exists()


# ---------------------------------------------------------------------------------------- issue 25, command line
def test_version(tmp_path):
    from importlib.metadata import PackageNotFoundError, version

    import structperc as package

    try:
        expected = version("structperc")
    except PackageNotFoundError:
        expected = package.__version__
    done = structperc("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.split() == ["structperc", expected]


@pytest.fixture(scope="module")
def latin_model(tmp_path_factory):
    """A model trained on a Latin-1 file with --encoding latin-1."""
    folder = tmp_path_factory.mktemp("encoding")
    (folder / "t.txt").write_bytes("café NN B-NP\nnoir JJ I-NP\nsat VBD O\n\nA DT B-NP\ncafé NN I-NP\n\n"
                                   .encode("latin-1"))
    done = structperc("train", "t.txt", "-m", "m.npz", "--columns", "word,pos,chunk", "--encoding", "latin-1",
                      "--epochs", 2, "-q", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def test_tag_summary_plurals_and_empty_input(latin_model):
    folder = latin_model
    (folder / "one.txt").write_text("A DT\ndog NN\n", encoding="latin-1")
    one = structperc("tag", "one.txt", "-m", "m.npz", cwd=folder)
    assert one.returncode == 0, one.stderr
    assert one.stderr.startswith("tagged 1 sentence, 2 tokens in "), one.stderr
    (folder / "empty.txt").write_text("")
    for source in (["empty.txt"], ["-"]):
        empty = structperc("tag", *source, "-m", "m.npz", "-q", cwd=folder, input="")
        assert empty.returncode == 0 and empty.stdout == "" and empty.stderr == "", empty.stderr


def test_encoding_defaults_to_the_models_and_can_be_given(latin_model):
    folder = latin_model
    (folder / "latin.txt").write_bytes("café NN\n".encode("latin-1"))
    (folder / "utf8.txt").write_bytes("café NN\n".encode("utf-8"))
    latin = structperc("tag", "latin.txt", "-m", "m.npz", "-q", cwd=folder)
    assert latin.returncode == 0 and latin.stdout.split()[0] == "café", latin.stderr
    utf8 = structperc("tag", "utf8.txt", "-m", "m.npz", "-q", "--encoding", "utf-8", cwd=folder)
    assert utf8.returncode == 0 and utf8.stdout.split()[0] == "café", utf8.stderr
    # a model trained on UTF-8 (the default) refuses Latin-1 bytes with one line naming --encoding
    (folder / "u.txt").write_text("café NN B-NP\nnoir JJ I-NP\n\n", encoding="utf-8")
    done = structperc("train", "u.txt", "-m", "u.npz", "--columns", "word,pos,chunk", "--epochs", 1, "-q", cwd=folder)
    assert done.returncode == 0, done.stderr
    for command in (["tag", "latin.txt"], ["eval", "latin.txt"]):
        bad = structperc(*command, "-m", "u.npz", cwd=folder)
        lines = bad.stderr.splitlines()
        assert bad.returncode == 2 and len(lines) == 1 and "--encoding" in lines[0] and "latin.txt" in lines[0]
