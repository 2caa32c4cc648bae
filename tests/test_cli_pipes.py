"""A reader of standard output that goes away (`structperc tag ... | head -1`): the command ends
quietly, nothing on stderr, status 141 (128 + SIGPIPE, what a shell reports for coreutils in the same
pipe), for every command that writes to stdout; real processes and real pipes."""
import os
import subprocess
from pathlib import Path

import forked_cli
import pytest

ROOT = Path(__file__).resolve().parents[1]
STDOUT_CLOSED = 141

SENTENCES = """Confidence NN B-NP
in IN O
the DT B-NP
pound NN I-NP
is VBZ O
widely RB O
expected VBN O
. . O

He PRP B-NP
reckons VBZ O
the DT B-NP
current JJ I-NP
account NN I-NP
deficit NN I-NP
. . O

The DT B-NP
pound NN I-NP
fell VBD O
. . O

"""


def command(*args):
    # `python -m structperc ARGS` as a real process with these streams, forked from one that imported the
    # command line once: the executable hands it its own stdout, the pipe (forked_cli.py)
    return [str(forked_cli.executable()), *map(str, args)]


def environment():
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture(scope="module")
def chunker(tmp_path_factory):
    """(model, input): a model trained on three sentences, and an input of those sentences repeated
    to 20,007 tokens (its tagged output, about 300 KB, overflows any pipe buffer). The kernels that
    tagging, eval and nbest call are compiled here, so that their compile notice is not on the
    stderr that the tests compare."""
    folder = tmp_path_factory.mktemp("pipes")
    train, big, model = folder / "train.txt", folder / "big.txt", folder / "np.npz"
    train.write_text(SENTENCES)
    big.write_text(SENTENCES * (20007 // 19))
    for args in (["train", train, "--model", model, "--columns", "word,pos,chunk", "--epochs", "2", "--quiet"],
                 ["tag", big, "--model", model, "--output", folder / "tagged.txt", "--quiet"],
                 ["nbest", big, "--model", model, "--output", folder / "lists.txt", "--quiet"]):
        done = subprocess.run(command(*args), env=environment(), capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
    return model, big


def test_tag_into_a_pipe_closed_after_one_line_ends_quietly_with_141(chunker, tmp_path):
    model, big = chunker
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "w") as errors:
        process = subprocess.Popen(command("tag", big, "--model", model), env=environment(), stdout=subprocess.PIPE,
                                   stderr=errors)
        first = process.stdout.readline()  # `| head -1`
        process.stdout.close()
        status = process.wait(timeout=300)
    assert first.split()[:3] == [b"Confidence", b"NN", b"B-NP"] and len(first.split()) == 4
    assert stderr.read_text() == ""  # no traceback, no "Exception ignored", no summary line
    assert status == STDOUT_CLOSED  # exited with 141 itself, not killed by SIGPIPE (-13)


@pytest.mark.parametrize("args", [
    ["tag", "{big}", "--model", "{model}", "--quiet"],
    ["eval", "{big}", "--model", "{model}"],
    ["eval", "{big}", "--model", "{model}", "--json"],
    ["nbest", "{big}", "--model", "{model}", "--quiet"],
    ["info", "{model}"],
    ["data", "list"],
    ["--help"],
    ["tag", "--help"],
    ["data", "--help"],
], ids=lambda args: " ".join(args).replace("{big}", "FILE").replace("{model}", "MODEL"))
def test_every_command_into_a_closed_pipe_ends_quietly_with_141(chunker, tmp_path, args):
    """stdout is a pipe whose reader has already gone: the first write (or the final flush) fails."""
    model, big = chunker
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(command(*(a.format(model=model, big=big) for a in args)), env=environment(),
                              stdout=writer, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (STDOUT_CLOSED, "")


def test_commands_that_write_nothing_to_stdout_are_not_affected(chunker, tmp_path):
    """A closed stdout that is never written to changes nothing: tag --output exits 0."""
    model, big = chunker
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(command("tag", big, "--model", model, "--output", tmp_path / "out.txt", "--quiet"),
                              env=environment(), stdout=writer, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "out.txt").read_text().count("\n") > 20000
