"""A file that does not decode gets a hint naming its likely encoding, one that reads it right: a
Windows-1252 file gets cp1252 (under latin-1 its € would become the control character U+0080)."""
import subprocess
import sys

import pytest
import forked_cli

from structperc.errors import InputFormatError
from structperc.readers import read_corpus
from structperc.readers.encodings import likely_encoding

TEXTS = {  # (text, its encoding, the name the hint must give)
    "English with € and quotes": ("The DT O\nprice NN O\nis VBZ O\n5 CD O\n€ NN O\n“ `` O\ncafé NN O\n\n",
                                  "cp1252", "cp1252"),
    "French": ("Le DT O\ncafé NN O\nà IN O\ncôté NN O\n\n", "cp1252", "cp1252"),
    "Czech": ("Příliš RB O\nžluťoučký JJ O\nkůň NN O\núpěl VBD O\n\n", "cp1250", "cp1250"),
    "Russian": ("Привет NN O\nкак WRB O\nдела NN O\n\n" * 3, "cp1251", "cp1251"),
    "Japanese": ("これは PRP O\n日本語 NN O\nです VB O\n\n" * 3, "shift_jis", "shift_jis"),
}


@pytest.mark.parametrize("name", TEXTS)
def test_the_hint_names_an_encoding_that_reads_the_file_right(tmp_path, name):
    text, encoding, expected = TEXTS[name]
    path = tmp_path / "in.txt"
    path.write_bytes(text.encode(encoding))
    with pytest.raises(InputFormatError) as caught:
        read_corpus(path, columns=["word", "pos", "chunk"])
    message = str(caught.value)
    assert f"give encoding={expected}" in message and "latin-1" not in message, message
    corpus = read_corpus(path, columns=["word", "pos", "chunk"], encoding=expected)  # the hint, followed
    assert corpus.columns["word"] == [line.split()[0] for line in text.splitlines() if line]


def test_utf8_bytes_read_as_ascii_are_named_utf8():
    assert likely_encoding("café ô\n".encode("utf-8"), 3, "ascii") == "utf-8"


def test_reading_a_good_file_does_not_import_the_detector(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The DT O\ncat NN O\n\n", encoding="utf-8")
    code = ("import sys; from structperc.readers import read_corpus; "
            f"read_corpus({str(path)!r}, columns=['word', 'pos', 'chunk']); "
            "print('charset_normalizer' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_command_line_prints_the_hint_on_one_line(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXTS["English with € and quotes"][0].encode("cp1252"))
    done = forked_cli.run(["train", str(path), "--model", str(tmp_path / "m.npz"),
                           "--columns", "word,pos,chunk"], timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "give --encoding cp1252" in lines[0] and f"{path}:" in lines[0], done.stderr
    assert not (tmp_path / "m.npz").exists()


def test_a_binary_file_is_named_not_text_and_the_message_names_encoding(tmp_path):
    """A model file given as input (NUL bytes, no encoding reads it): one line that says it is not text
    and names --encoding."""
    import numpy as np

    model = tmp_path / "model.npz"
    np.savez_compressed(model, weights=np.random.default_rng(0).normal(size=2000))
    done = forked_cli.run(["train", str(model), "--model", str(tmp_path / "m.npz"),
                           "--columns", "word,pos,chunk"], timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not text" in lines[0] and "--encoding" in lines[0], done.stderr
    assert not (tmp_path / "m.npz").exists()
