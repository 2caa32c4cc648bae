"""The command line through typer's CliRunner: train, tag, eval, info, and bad input."""
import json

import numpy as np
import pytest
import forked_cli
from typer.testing import CliRunner

from structperc.cli.main import app

TRAIN = """Confidence NN B-NP
in IN B-PP
the DT B-NP
pound NN I-NP
is VBZ B-VP
widely RB I-VP
expected VBN I-VP
. . O

He PRP B-NP
reckons VBZ B-VP
the DT B-NP
current JJ I-NP
account NN I-NP
deficit NN I-NP
. . O

The DT B-NP
pound NN I-NP
fell VBD B-VP
. . O
"""


@pytest.fixture()
def files(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN)
    return tmp_path, train


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def train_np(tmp_path, train, *extra):
    model = tmp_path / "np.npz"
    result = run("train", train, "--model", model, "--columns", "word,pos,chunk", "--only-types", "NP",
                 "--constrain", "bio", "--epochs", 5, "--quiet", *extra)
    assert result.exit_code == 0, result.output
    return model


def test_train_tag_eval_round_trip(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    tagged = run("tag", train, "--model", model, "--quiet")
    assert tagged.exit_code == 0, tagged.output
    rows = [line.split() for line in tagged.stdout.splitlines() if line.strip()]
    assert len(rows) == 19 and all(len(r) == 4 for r in rows)
    # the gold column is mapped to NP-only like the training labels, the prediction is last
    assert {r[2] for r in rows} <= {"B-NP", "I-NP", "O"}
    assert {r[3] for r in rows} <= {"B-NP", "I-NP", "O"}
    result = run("eval", train, "--model", model, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    for key in ("accuracy", "precision", "recall", "f1", "tokens", "sentences", "seconds", "per_type"):
        assert key in scores
    assert scores["tokens"] == 19 and scores["sentences"] == 3
    # the training data is separable with these features: the perceptron fits it
    assert scores["accuracy"] == 100.0 and scores["f1"] == 100.0
    agree = sum(r[2] == r[3] for r in rows) / len(rows)
    assert agree * 100 == pytest.approx(scores["accuracy"])


def test_tag_reads_stdin_without_label_column_and_writes_output_file(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    plain = "\n".join(" ".join(line.split()[:2]) if line.strip() else "" for line in TRAIN.splitlines()) + "\n"
    out = tmp_path / "out.txt"
    result = run("tag", "-", "--model", model, "--output", out, "--quiet", input=plain)
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in out.read_text().splitlines() if line.strip()]
    assert len(rows) == 19 and all(len(r) == 3 for r in rows)


def test_info_lists_labels_and_top_features(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    result = run("info", model, "--json", "--top", 3)
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["labels"] == ["B-NP", "I-NP", "O"]
    assert info["input"]["columns"] == ["word", "pos", "chunk"]
    assert all(len(v) == 3 for v in info["top_features"].values())


def test_help_has_examples():
    for command in ("train", "tag", "eval", "info"):
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.output


@pytest.mark.parametrize(
    "content, where",
    [
        ("a DT B-NP\nb NN\n", ":2:"),                       # wrong column count
        ("", "no sentences"),                                 # empty file
        (b"a DT B-NP\nb\xff NN I-NP\n", ":2"),               # undecodable bytes
    ],
)
def test_bad_training_input_exits_2_with_file_and_line_and_no_model(tmp_path, content, where):
    bad = tmp_path / "bad.txt"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    model = tmp_path / "m.npz"
    result = run("train", bad, "--model", model, "--columns", "word,pos,chunk", "--quiet")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert where in result.output
    assert "bad.txt" in result.output
    assert not model.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_error_in_the_middle_of_tag_output_leaves_no_output_and_no_temp_file(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    # the bad line comes after a whole batch, when the output file has been opened and written to
    good = "\n".join(" ".join(line.split()[:2]) if line.strip() else "" for line in TRAIN.splitlines()) + "\n"
    bad = tmp_path / "bad.txt"
    bad.write_text(good * 2000 + "a DT B-NP extra column\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    out = tmp_path / "out.txt"
    result = run("tag", bad, "--model", model, "--output", out, "--quiet")
    assert result.exit_code == 2 and "bad.txt:" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_label_column_missing_in_eval(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    unlabeled = tmp_path / "plain.txt"
    unlabeled.write_text("The DT\npound NN\n")
    result = run("eval", unlabeled, "--model", model)
    assert result.exit_code == 2
    assert "plain.txt:1" in result.output


def test_corrupt_and_missing_model_files(tmp_path):
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a zip file")
    for path in (corrupt, tmp_path / "missing.npz"):
        result = run("info", path)
        assert result.exit_code == 2
        assert str(path.name) in result.output and "Traceback" not in result.output


def test_wrong_model_version_is_refused(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    with np.load(model) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["metadata"]))
    meta["format_version"] = 999
    arrays["metadata"] = np.array(json.dumps(meta))
    np.savez(model, **arrays)
    result = run("tag", train, "--model", model)
    assert result.exit_code == 2
    assert "version" in result.output


def test_unknown_trainer_and_template_are_clear_errors(files):
    tmp_path, train = files
    result = run("train", train, "--model", tmp_path / "m.npz", "--trainer", "nope")
    assert result.exit_code == 2 and "nope" in result.output
    result = run("train", train, "--model", tmp_path / "m.npz", "--templates", "w[x]")
    assert result.exit_code == 2 and "w[x]" in result.output


def test_marginals_and_probability_for_a_crf_model(files):
    tmp_path, train = files
    model = train_np(tmp_path, train, "--trainer", "crf")
    result = run("tag", train, "--model", model, "--marginals", "all", "--probability", "--quiet")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    headers = [line for line in lines if line.startswith("# probability")]
    assert len(headers) == 3
    rows = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    for row in rows:
        probabilities = [float(field.split(":")[1]) for field in row[4:]]
        assert len(probabilities) == 3 and sum(probabilities) == pytest.approx(1.0, abs=1e-3)
    best = run("tag", train, "--model", model, "--marginals", "best", "--quiet")
    assert best.exit_code == 0, best.output
    for row in (line.split() for line in best.stdout.splitlines() if line.strip()):
        assert 0.0 < float(row[4]) <= 1.0


def test_marginals_refused_for_a_perceptron_model(files):
    tmp_path, train = files
    model = train_np(tmp_path, train)
    out = tmp_path / "out.txt"
    result = run("tag", train, "--model", model, "--marginals", "best", "--output", out)
    assert result.exit_code == 2
    assert "crf or memm" in result.output
    assert not out.exists()


def test_bare_marginals_flag_means_best():
    from structperc.cli.main import _bare_marginals

    assert _bare_marginals(["tag", "f", "--marginals", "-m", "m"]) == ["tag", "f", "--marginals", "best", "-m", "m"]
    assert _bare_marginals(["tag", "f", "--marginals", "all"]) == ["tag", "f", "--marginals", "all"]
    assert _bare_marginals(["tag", "f", "--marginals"]) == ["tag", "f", "--marginals", "best"]


@pytest.mark.parametrize("args, words", [
    (["train", "x.txt", "--model", "m.npz", "--bogus"], ["--bogus", "structperc train --help"]),
    (["train", "x.txt"], ["--model", "structperc train --help"]),
    (["train", "x.txt", "--model", "m.npz", "--workers", "0"], ["--workers", "0"]),
    (["rerank", "apply"], ["nbest_file", "structperc rerank apply --help"]),
    (["nosuchcommand"], ["nosuchcommand", "structperc --help"]),
])
def test_a_usage_error_is_one_line_naming_the_help(tmp_path, args, words):
    """Errors of the option parser (an unknown option, a missing or bad value, an unknown command)
    are one line with exit status 2, as input errors are, in a real process (forked_cli.py)."""
    done = forked_cli.run(args, cwd=tmp_path, timeout=120)
    out, err = done.stdout, done.stderr
    assert done.returncode == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("structperc: error: "), err
    assert all(word in lines[0] for word in words), err
    assert not (tmp_path / "m.npz").exists()
