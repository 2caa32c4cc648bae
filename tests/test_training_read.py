"""Reading a training file in parts by forked processes (``training_read``): the corpus, the
encoding and the errors of a serial read, whatever the number of parts."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import structperc.readers.parallel as training_read
from structperc.features.encode import FeatureEncoder
from structperc.errors import InputFormatError
from structperc.readers import read_corpus
from structperc.readers.parallel import _ranges, read_training_columns
from structperc.utils.interning import InternedColumn, intern_column

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["the", "pound", "fell", "Rates", "rose", "in", "May", ",", "7.5", "de", "café"]


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    """Cut files of a few kilobytes too, and read them in batches of a few sentences (the forked
    readers inherit the settings)."""
    monkeypatch.setattr(training_read, "_BATCH", 7)
    monkeypatch.setattr(training_read, "_MIN_PART_BYTES", 16)
    monkeypatch.setattr(training_read, "_MIN_CHILD_BYTES", 16)


def conll_text(rng, n_sentences, crlf=False, docstart=False):
    lines = ["-DOCSTART- -X- O", ""] if docstart else []
    for s in range(n_sentences):
        for i in rng.integers(0, len(WORDS), int(rng.integers(1, 9))):
            lines.append(f"{WORDS[i]}{int(rng.integers(0, 40))} P{i % 4} {['B-NP', 'I-NP', 'O'][i % 3]}")
        lines.append("")
        if docstart and s % 17 == 16:
            lines += ["-DOCSTART- -X- O", ""]
    text = "\n".join(lines) + "\n"
    return text.replace("\n", "\r\n") if crlf else text


def conllu_text(rng, n_sentences):
    lines = []
    for s in range(n_sentences):
        lines += [f"# sent_id = s{s}", "# text = x"]
        n = int(rng.integers(1, 8))
        for k, i in enumerate(rng.integers(0, len(WORDS), n), start=1):
            lines.append(f"{k}\t{WORDS[i]}{int(rng.integers(0, 30))}\t_\tX{i % 5}\tP{i % 4}\t_\t0\troot\t_\t_")
        lines.append("")
    return "\n".join(lines) + "\n"


def assert_same_corpus(parted, whole):
    assert list(parted.columns) == list(whole.columns) and parted.label == whole.label
    for name, column in parted.columns.items():
        assert isinstance(column, InternedColumn)
        assert list(column) == whole.columns[name], name
        ids, distinct = intern_column(whole.columns[name])  # the encoder's first-seen numbering
        np.testing.assert_array_equal(column.ids, ids)
        assert column.distinct == distinct
    np.testing.assert_array_equal(parted.sentence_offsets, whole.sentence_offsets)
    np.testing.assert_array_equal(parted.line_numbers, whole.line_numbers)


@pytest.mark.parametrize("parts", [1, 2, 3, 5])
@pytest.mark.parametrize("kind", ["conll", "conll-crlf", "conll-docstart-bom", "conllu"])
def test_parts_read_the_corpus_of_a_serial_read(tmp_path, kind, parts):
    rng = np.random.default_rng(parts)
    if kind == "conllu":
        path, options = tmp_path / "train.conllu", {}
        path.write_text(conllu_text(rng, 120), encoding="utf-8")
    else:
        path, options = tmp_path / "train.txt", {"columns": ["word", "pos", "chunk"]}
        text = conll_text(rng, 150, crlf=kind == "conll-crlf", docstart="docstart" in kind)
        path.write_text(("\ufeff" if "bom" in kind else "") + text, encoding="utf-8", newline="")
    ranges = _ranges(path, parts, options)  # the file is cut (one part: whole), so forked readers run
    assert ranges is not None and len(ranges) == parts
    assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
    assert_same_corpus(read_training_columns(path, parts=parts, **options), read_corpus(path, **options))


@pytest.mark.parametrize("parts", [2, 3])
def test_parts_encode_as_the_serial_read(tmp_path, parts):
    path = tmp_path / "train.txt"
    path.write_text(conll_text(np.random.default_rng(7), 200))
    options = {"columns": ["word", "pos", "chunk"]}
    whole = read_corpus(path, **options)
    expected = FeatureEncoder("chunk").fit_transform(whole, whole.columns["chunk"])
    corpus = read_training_columns(path, parts=parts, **options)
    encoded = FeatureEncoder("chunk").fit_transform(corpus, release=True)
    for name in ("sentence_offsets", "feature_offsets", "feature_ids", "labels"):
        np.testing.assert_array_equal(getattr(encoded, name), getattr(expected, name), err_msg=name)


def _serial_error(path, **options):
    with pytest.raises(InputFormatError) as serial:
        read_corpus(path, **options)
    return str(serial.value)


def test_an_error_in_a_later_part_is_the_serial_error(tmp_path):
    """A forked reader meets it; the error raised is the one a serial read raises (file:line)."""
    lines = conll_text(np.random.default_rng(1), 150).splitlines()
    bad = len(lines) * 5 // 6
    while not lines[bad]:
        bad += 1
    lines[bad] += " extra"
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    options = {"columns": ["word", "pos", "chunk"]}
    assert len(_ranges(path, 3, options)) == 3
    with pytest.raises(InputFormatError) as parted:
        read_training_columns(path, parts=3, **options)
    assert str(parted.value) == _serial_error(path, **options) and f":{bad + 1}:" in str(parted.value)


def test_parts_that_disagree_on_the_columns_give_the_serial_error(tmp_path):
    """The second half has a column more: read alone it would look like a good file."""
    first = conll_text(np.random.default_rng(2), 80)
    second = "\n".join(line + " x" if line else line for line in conll_text(np.random.default_rng(3), 80).splitlines())
    path = tmp_path / "train.txt"
    path.write_text(first + second + "\n")
    with pytest.raises(InputFormatError) as parted:
        read_training_columns(path, parts=2)
    assert str(parted.value) == _serial_error(path)


@pytest.mark.parametrize("parts", [1, 2])
def test_meanwhile_runs_here_while_the_readers_run(tmp_path, parts):
    """``fit_file`` imports dask there: after the fork, with every reader started."""
    import multiprocessing

    path = tmp_path / "train.txt"
    # each part's answer (about 200 kB pickled) overfills a pipe (64 kB), so that no reader can send it
    # and exit before this process reads it, after ``meanwhile``: with a small file, a loaded machine
    # let a reader end first, and it was not counted
    path.write_text(conll_text(np.random.default_rng(8), 4000))
    seen = []
    corpus = read_training_columns(path, parts=parts, meanwhile=lambda: seen.append(
        len(multiprocessing.active_children())))
    assert seen == [parts]
    assert_same_corpus(corpus, read_corpus(path))
    tagged = tmp_path / "t.pos"  # read here, serially: nothing runs meanwhile
    tagged.write_text("".join("a/X b/Y\n\n" for _ in range(300)))
    read_training_columns(tagged, parts=parts, meanwhile=lambda: seen.append("serial"), format="tagged")
    assert seen == [parts]


def test_a_small_file_in_one_part_is_read_here(tmp_path, monkeypatch):
    path = tmp_path / "train.txt"
    path.write_text(conll_text(np.random.default_rng(6), 40))
    monkeypatch.setattr(training_read, "_MIN_CHILD_BYTES", path.stat().st_size + 1)
    assert _ranges(path, 1, {}) is None
    assert _ranges(path, 2, {}) is not None  # parts have their own, smaller minimum
    monkeypatch.setattr(training_read, "_read_parallel", None)  # no fork: a call would fail
    assert_same_corpus(read_training_columns(path, parts=1), read_corpus(path))


def test_files_that_cannot_be_cut_are_read_whole(tmp_path):
    one_sentence = tmp_path / "one.txt"
    one_sentence.write_text("".join(f"w{i} P B-NP\n" for i in range(500)))
    assert _ranges(one_sentence, 2, {}) is None
    assert_same_corpus(read_training_columns(one_sentence, parts=2), read_corpus(one_sentence))
    tagged = tmp_path / "t.pos"
    tagged.write_text("".join("a/X b/Y\n\n" for _ in range(300)))
    assert _ranges(tagged, 2, {"format": "tagged"}) is None
    utf16 = tmp_path / "u16.txt"  # newlines are not single bytes: no cut by bytes
    utf16.write_text(conll_text(np.random.default_rng(5), 50), encoding="utf-16")
    assert _ranges(utf16, 2, {"encoding": "utf-16"}) is None
    assert_same_corpus(read_training_columns(utf16, parts=2, encoding="utf-16"),
                       read_corpus(utf16, encoding="utf-16"))


def test_sigint_while_the_parts_are_read_ends_every_reader(tmp_path):
    """A real SIGINT to the reading process while its forked readers run: KeyboardInterrupt, and no
    reader process is left."""
    path = tmp_path / "train.txt"
    path.write_text(conll_text(np.random.default_rng(4), 3000))
    script = f"""
import multiprocessing, os, signal, sys, threading, time
import structperc.readers.parallel as tr
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job may have inherited SIG_IGN
tr._MIN_PART_BYTES = 16
PARENT = os.getpid()
real = tr._read_part
def slow(path, byte_range, options):  # the forked readers take their time
    time.sleep(60)
    return real(path, byte_range, options)
tr._read_part = slow
MAIN = threading.main_thread().ident
def interrupt():  # once the three readers run, while the reading process waits for them
    while len(multiprocessing.active_children()) < 3:
        time.sleep(0.01)
    signal.pthread_kill(MAIN, signal.SIGINT)  # to the waiting thread itself, not to this one
threading.Thread(target=interrupt, daemon=True).start()
try:
    tr.read_training_columns({str(path)!r}, parts=3, columns=["word", "pos", "chunk"])
except KeyboardInterrupt:
    print("interrupted", len(multiprocessing.active_children()))
    sys.exit(0)
print("not interrupted")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "interrupted 0", out.stdout + out.stderr


def test_input_errors_pickle_whole():
    """A reader in another process can send its error back."""
    import pickle

    error = pickle.loads(pickle.dumps(InputFormatError("a.txt", 7, "expected 3 columns, found 2")))
    assert isinstance(error, InputFormatError) and error.line == 7
    assert str(error) == "a.txt:7: expected 3 columns, found 2"
