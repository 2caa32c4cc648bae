"""Ctrl-C, as a real SIGINT to a real process: exit status 130, one line, no file left behind."""
import signal
import subprocess
import threading
import time

import numpy as np
from builders import structperc_process

WORDS = ["the", "pound", "fell", "he", "reckons", "current", "account", "deficit", "in", "is", "widely"]
TAGS = ["DT", "NN", "VBD", "PRP", "VBZ", "JJ", "NN", "NN", "IN", "VBZ", "RB"]


def _corpus(path, n_sentences, labels=True, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_sentences):
        for i in rng.integers(0, len(WORDS), int(rng.integers(5, 25))):
            chunk = ["B-NP", "I-NP", "O"][i % 3]
            lines.append(f"{WORDS[i]}{i % 7} {TAGS[i]} {chunk}" if labels else f"{WORDS[i]}{i % 7} {TAGS[i]}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def _unread_bytes(pipe):
    import fcntl
    import struct
    import termios

    return struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def _wait_for(predicate, timeout=300):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _warm(*args, stdin_path):
    """Run a command to completion once, so that its kernels are compiled and cached: the interrupted
    run below must not print the compile notice (make install compiles nothing ahead)."""
    with open(stdin_path) as stdin:
        process = structperc_process(*args, stdin=stdin)
        _, err = process.communicate(timeout=900)
    assert process.returncode == 0, err


def test_sigint_during_train_exits_130_and_writes_no_model(tmp_path):
    corpus = _corpus(tmp_path / "train.txt", 4000)
    model = tmp_path / "m.npz"
    process = structperc_process("train", corpus, "--model", model, "--columns", "word,pos,chunk", "--epochs", 10000)
    lines = []
    # wait until the first epoch has been reported: training is under way
    for line in process.stderr:
        lines.append(line)
        if line.startswith("epoch"):
            break
    assert lines and lines[-1].startswith("epoch"), "".join(lines)
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=300)
    assert process.returncode == 130, rest
    after = [line for line in rest.splitlines() if not line.startswith("epoch")]
    assert after == ["interrupted; no model written"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.txt"]


def test_sigint_during_tag_output_leaves_no_partial_output(tmp_path):
    corpus = _corpus(tmp_path / "train.txt", 50)
    model = tmp_path / "m.npz"
    trained = structperc_process("train", corpus, "--model", model, "--columns", "word,pos,chunk", "--epochs", 2, "--quiet")
    assert trained.wait(timeout=600) == 0, trained.stderr.read()
    _warm("tag", "-", "--model", model, "--quiet", stdin_path=_corpus(tmp_path / "warm.txt", 5, labels=False))
    out = tmp_path / "out.txt"
    before = {p.name for p in tmp_path.iterdir()}
    # the input is a pipe kept open: the tagger writes the first batches (the reader takes 1 MB at a
    # time) and then waits for more
    process = structperc_process("tag", "-", "--model", model, "--output", out, stdin=subprocess.PIPE)
    plain = _corpus(tmp_path / "plain.txt", 20000, labels=False, seed=1).read_text()
    writer = threading.Thread(target=lambda: (process.stdin.write(plain), process.stdin.flush()))
    writer.start()
    temp_files = lambda: [p for p in tmp_path.iterdir() if p.name.startswith(".out.txt.")]  # noqa: E731
    _wait_for(lambda: temp_files() and temp_files()[0].stat().st_size > 0)
    writer.join()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted; no output written"]
    assert {p.name for p in tmp_path.iterdir()} == before | {"plain.txt"}


def test_sigint_in_another_command_exits_130_with_one_line(tmp_path):
    corpus = _corpus(tmp_path / "train.txt", 50)
    model = tmp_path / "m.npz"
    trained = structperc_process("train", corpus, "--model", model, "--columns", "word,pos,chunk", "--epochs", 2, "--quiet")
    assert trained.wait(timeout=600) == 0, trained.stderr.read()
    # labelled: the oracle's ranking kernel, which nbest's compile check counts, runs only with gold labels
    _warm("nbest", "-", "--model", model, "-k", 2, "--quiet", stdin_path=_corpus(tmp_path / "warm.txt", 5))
    # nbest reads the whole of stdin before it starts: interrupt it while it waits
    process = structperc_process("nbest", "-", "--model", model, "-k", 2, stdin=subprocess.PIPE)
    process.stdin.write("the0 DT\n")
    process.stdin.flush()
    # the command is under way once it has read that line out of the pipe (FIONREAD: bytes unread)
    _wait_for(lambda: _unread_bytes(process.stdin) == 0)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"]
