"""The Corpus type (structperc.corpus) and the readers and writer (structperc.readers)."""

import glob
import io
import os
from pathlib import Path

import numpy as np
import pytest

from structperc.chunks import map_only_types
from structperc.corpus import concatenate, index_ranges
from structperc.readers import (
    FORMATS,
    detect_format,
    iter_corpus,
    read_corpus,
    read_ptb_files,
    write_tagged,
)
from structperc.readers.conll import default_columns
from structperc.errors import ConfigError, InputFormatError

DATA = Path(__file__).parent / "data"


def write(tmp_path, text, name="c.txt", mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sentences(corpus, column):
    values = corpus.columns[column]
    offsets = corpus.sentence_offsets
    return [values[offsets[i]:offsets[i + 1]] for i in range(corpus.n_sentences)]


def naive_conll_sentences(text):
    """Reference reader: list of sentences, each a list of field lists."""
    result, current = [], []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                result.append(current)
            current = []
        else:
            current.append(fields)
    if current:
        result.append(current)
    return result


# ---------------------------------------------------------------- index ranges


@pytest.mark.parametrize("seed", range(10))
def test_index_ranges_is_the_concatenation_of_aranges(seed):
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 50, rng.integers(0, 8))
    ends = starts + rng.integers(0, 5, len(starts))  # empty ranges included
    expected = [i for a, b in zip(starts, ends) for i in range(a, b)]
    got = index_ranges(starts, ends)
    assert got.dtype == np.int64 and got.tolist() == expected


# ---------------------------------------------------------------- conll


def test_conll_fixture_docstart_and_blank_lines():
    corpus = read_corpus(DATA / "tiny.conll", columns=["word", "pos", "chunk"])
    assert corpus.format == "conll"
    assert corpus.label == "chunk"
    assert corpus.n_sentences == 2
    assert corpus.n_tokens == 6
    assert sentences(corpus, "word") == [["The", "cat", "sat", "."], ["On", "Monday"]]
    assert corpus.labels() == ["B-NP", "I-NP", "B-VP", "O", "B-PP", "B-NP"]
    assert corpus.line_numbers.tolist() == [3, 4, 5, 6, 10, 11]
    assert corpus.sentence_offsets.dtype == np.int64
    assert corpus.line_numbers.dtype == np.int64


def test_conll_default_columns_and_tabs(tmp_path):
    path = write(tmp_path, "a\tDT\tx\tB-NP\nb\tNN  \t y\tI-NP\n\n\n\nc\tVB\tz\tO\n")
    corpus = read_corpus(path)
    assert list(corpus.columns) == ["word", "pos", "col2", "label"]
    assert corpus.label == "label"
    assert sentences(corpus, "col2") == [["x", "y"], ["z"]]
    assert corpus.lines[1] == "b\tNN  \t y\tI-NP"


def test_default_columns():
    assert default_columns(1) == ["word"]
    assert default_columns(2) == ["word", "label"]
    assert default_columns(3) == ["word", "pos", "label"]
    assert default_columns(5) == ["word", "pos", "col2", "col3", "label"]


def test_detect_format_and_unknown_format(tmp_path):
    assert detect_format("x/train.conllu") == "conllu"
    assert detect_format("wsj_0001.pos") == "ptb"
    assert detect_format("train.txt") == "conll"
    assert detect_format("-") == "conll"
    assert detect_format("news.TAGGED") == "tagged"
    assert set(FORMATS) == {"conll", "conllu", "ptb", "tagged", "raw"}
    with pytest.raises(ConfigError, match="'xml'.*conll"):
        read_corpus(DATA / "tiny.conll", format="xml")


def test_conll_round_trip(tmp_path):
    text = "-DOCSTART- -X- O\n\nHe PRP B-NP\nran VBD B-VP\n\n\nFast RB B-ADVP\n. . O\n"
    corpus = read_corpus(write(tmp_path, text), columns=["word", "pos", "chunk"])
    out = io.StringIO()
    write_tagged(out, corpus, corpus.labels())
    reread = naive_conll_sentences(out.getvalue())
    expected = [[fields + [fields[-1]] for fields in sentence]
                for sentence in naive_conll_sentences(text)]
    assert reread == expected
    assert out.getvalue().endswith("O O\n\n")


def test_write_tagged_without_lines_and_extra_columns(tmp_path):
    corpus = read_corpus(write(tmp_path, "a DT B-NP\nb VB B-VP\n"), only_types={"NP"})
    assert corpus.lines is None  # labels were rewritten, so the original lines are stale
    out = io.StringIO()
    write_tagged(out, corpus, ["B-NP", "I-NP"], extra_columns=[["0.9", "0.8"]])
    assert out.getvalue() == "a DT B-NP B-NP 0.9\nb VB O I-NP 0.8\n\n"
    with pytest.raises(ValueError):
        write_tagged(io.StringIO(), corpus, ["O"])


def test_map_only_types():
    labels = ["B-NP", "I-NP", "B-VP", "I-VP", "O", "S-NP", "E-PP", "L-NP", "U-ADJP", "NN"]
    assert map_only_types(labels, {"NP"}) == [
        "B-NP", "I-NP", "O", "O", "O", "S-NP", "O", "L-NP", "O", "NN"]
    assert map_only_types(labels, ["NP", "VP"])[2:4] == ["B-VP", "I-VP"]


def test_reader_only_types_maps_label_column():
    corpus = read_corpus(DATA / "tiny.conll", columns=["word", "pos", "chunk"],
                         only_types={"NP"})
    assert corpus.labels() == ["B-NP", "I-NP", "O", "O", "O", "B-NP"]
    assert corpus.columns["pos"][2] == "VBD"


def test_require_label_false_accepts_missing_label(tmp_path):
    path = write(tmp_path, "The DT\ncat NN\n\nran VBD\n")
    corpus = read_corpus(path, columns=["word", "pos", "chunk"], label="chunk",
                         require_label=False)
    assert corpus.label is None
    assert corpus.labels() is None
    assert list(corpus.columns) == ["word", "pos"]
    assert corpus.columns["pos"] == ["DT", "NN", "VBD"]
    with pytest.raises(InputFormatError, match=r"c\.txt:1: label column 'chunk' missing: "
                                               r"expected 3 columns, found 2"):
        read_corpus(path, columns=["word", "pos", "chunk"], label="chunk")


def test_require_label_false_with_label_present(tmp_path):
    path = write(tmp_path, "The DT B-NP\n")
    corpus = read_corpus(path, columns=["word", "pos", "chunk"], require_label=False)
    assert corpus.label == "chunk"
    assert corpus.labels() == ["B-NP"]


def test_label_column_other_than_last(tmp_path):
    corpus = read_corpus(write(tmp_path, "The DT B-NP\n"), columns=["word", "pos", "chunk"],
                         label="pos")
    assert corpus.labels() == ["DT"]


# ---------------------------------------------------------------- iteration, subset, concat


def test_iter_corpus_batches_match_read_corpus(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for s in range(137):
        for t in range(int(rng.integers(1, 9))):
            lines.append(f"w{s}_{t} P{t % 3} L{(s + t) % 4}")
        lines.append("" if s % 5 else "\n")
    path = write(tmp_path, "\n".join(lines) + "\n")
    whole = read_corpus(path)
    batches = list(iter_corpus(path, batch_sentences=10))
    assert [b.n_sentences for b in batches] == [10] * 13 + [7]
    assert sum(b.n_tokens for b in batches) == whole.n_tokens
    joined = concatenate(batches)
    assert joined.columns == whole.columns
    assert joined.sentence_offsets.tolist() == whole.sentence_offsets.tolist()
    assert joined.line_numbers.tolist() == whole.line_numbers.tolist()
    assert joined.lines == whole.lines


def test_iter_corpus_small_chunks_keeps_sentences_whole(tmp_path, monkeypatch):
    import structperc.readers.stream as corpus_module

    text = "a X\nb Y\n\nc Z\n\n\nd X\ne Y\nf Z\n"
    path = write(tmp_path, text)
    real = corpus_module.read_chunks
    monkeypatch.setattr(corpus_module, "read_chunks",
                        lambda p, enc, **kw: real(p, enc, chunk_bytes=3, **kw))
    corpus = read_corpus(path)
    assert sentences(corpus, "word") == [["a", "b"], ["c"], ["d", "e", "f"]]
    assert corpus.line_numbers.tolist() == [1, 2, 4, 7, 8, 9]


def test_subset_and_concatenate():
    corpus = read_corpus(DATA / "tiny.conll", columns=["word", "pos", "chunk"])
    picked = corpus.subset([1, 0, 1])
    assert sentences(picked, "word") == [["On", "Monday"], ["The", "cat", "sat", "."],
                                         ["On", "Monday"]]
    assert picked.line_numbers.tolist() == [10, 11, 3, 4, 5, 6, 10, 11]
    assert picked.lines[0] == "On IN B-PP"
    assert corpus.subset([]).n_tokens == 0
    joined = concatenate([corpus.subset([1]), corpus.subset([0])])
    assert joined.columns == picked.subset([0, 1]).columns
    with pytest.raises(IndexError):
        corpus.subset([2])


def test_concatenate_keeps_each_tokens_file(tmp_path):
    a = read_corpus(write(tmp_path, "x A\n", "a.txt"))
    b = read_corpus(write(tmp_path, "\n\ny B\n", "b.txt"))
    both = concatenate([a, b])
    assert both.where(0) == (str(tmp_path / "a.txt"), 1)
    assert both.where(1) == (str(tmp_path / "b.txt"), 3)
    c = read_corpus(write(tmp_path, "x A B\n", "c.txt"))
    with pytest.raises(ValueError):
        concatenate([a, c])


def test_stdin(monkeypatch):
    class FakeStdin:
        buffer = io.BytesIO(b"x A\n\ny B\n")

    monkeypatch.setattr("sys.stdin", FakeStdin())
    corpus = read_corpus("-")
    assert corpus.path == "<stdin>"
    assert corpus.n_sentences == 2


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a B C\nb D E\n\nc F\n", 4, "expected 3 columns, found 2"),
        ("a B C\n\n\nb D E F\n", 4, "expected 3 columns, found 4"),
        ("", None, "no sentences found"),
        ("\n\n  \n-DOCSTART- O\n", None, "no sentences found"),
    ],
)
def test_conll_malformed(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(InputFormatError) as info:
        read_corpus(path)
    assert info.value.line == line
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(info.value) == f"{where}: {message}"


def test_column_count_error_in_later_chunk(tmp_path, monkeypatch):
    import structperc.readers.stream as corpus_module

    real = corpus_module.read_chunks
    monkeypatch.setattr(corpus_module, "read_chunks",
                        lambda p, enc, **kw: real(p, enc, chunk_bytes=8, **kw))
    path = write(tmp_path, "a B\nb C\n\nc D\nd E F\n")
    with pytest.raises(InputFormatError, match=r":5: expected 2 columns, found 3"):
        read_corpus(path)


def test_undecodable_bytes_report_line(tmp_path):
    path = write(tmp_path, b"a B\nb C\n\ncaf\xe9 D\n", mode="wb")
    with pytest.raises(InputFormatError, match=r"c\.txt:4: cannot decode") as info:
        read_corpus(path)
    assert info.value.line == 4
    corpus = read_corpus(path, encoding="latin-1")
    assert corpus.columns["word"][2] == "café"


def test_missing_file(tmp_path):
    with pytest.raises(InputFormatError, match="no such file"):
        read_corpus(tmp_path / "nope.txt")


def test_single_column_requires_label(tmp_path):
    path = write(tmp_path, "a\nb\n")
    with pytest.raises(InputFormatError, match=":1: no label column"):
        read_corpus(path)
    corpus = read_corpus(path, require_label=False)
    assert list(corpus.columns) == ["word"] and corpus.label is None


# ---------------------------------------------------------------- conllu


def test_conllu_skips_multiword_and_empty_nodes():
    corpus = read_corpus(DATA / "tiny.conllu")
    assert corpus.format == "conllu"
    assert corpus.label == "upos"
    assert list(corpus.columns) == ["word", "lemma", "upos", "xpos", "feats", "head", "deprel", "space_after"]
    assert sentences(corpus, "word") == [["Do", "n't", "stop", "."], ["Cats", "sleep", "."]]
    assert corpus.labels() == ["AUX", "PART", "VERB", "PUNCT", "NOUN", "VERB", "PUNCT"]
    assert corpus.columns["feats"][0] == "Mood=Imp|VerbForm=Fin"
    assert corpus.columns["feats"][1] == "_"
    assert corpus.columns["head"][:4] == ["3", "3", "0", "3"]
    assert corpus.line_numbers.tolist() == [4, 5, 6, 7, 10, 11, 13]
    xpos = read_corpus(DATA / "tiny.conllu", label="xpos")
    assert xpos.labels() == ["VBP", "RB", "VB", ".", "NNS", "VBP", "."]


def test_conllu_writer_appends_prediction_with_keep_gold():
    corpus = read_corpus(DATA / "tiny.conllu", label="xpos")
    out = io.StringIO()
    write_tagged(out, corpus, corpus.labels(), keep_gold=True)
    blocks = out.getvalue().split("\n\n")
    first = [line for line in blocks[0].split("\n") if not line.startswith("#")]
    assert first[1].split("\t") == ["1", "Do", "do", "AUX", "VBP", "Mood=Imp|VerbForm=Fin", "3",
                                    "aux", "_", "_", "VBP"]
    assert len(first) == 5  # the multiword token line "1-2" and four words


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_", "expected 10 tab-separated"),
        ("x\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_", "invalid CoNLL-U"),
        ("2\t\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_", "word 2 has an empty FORM column"),  # found by the fuzzer
    ],
)
def test_conllu_malformed(tmp_path, bad_line, message):
    text = ("# sent_id = 1\n1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n" + bad_line + "\n\n")
    path = write(tmp_path, text, "bad.conllu")
    with pytest.raises(InputFormatError, match=rf"bad\.conllu:3: {message}"):
        read_corpus(path)


# ---------------------------------------------------------------- ptb


def test_ptb_fixture():
    corpus = read_corpus(DATA / "tiny.pos")
    assert corpus.format == "ptb"
    assert list(corpus.columns) == ["word", "pos"] and corpus.label == "pos"
    assert sentences(corpus, "word") == [
        ["Pierre", "Vinken", ",", "1/2", "stake", "fell", ".", "''"],
        ["The", "index", "that", "rose", "?"],
        ["Sales", "rose"],
    ]
    assert sentences(corpus, "pos")[0] == ["NNP", "NNP", ",", "CD", "NN", "VBD", ".", "''"]
    assert corpus.line_numbers.tolist()[:3] == [5, 5, 6]
    out = io.StringIO()
    write_tagged(out, corpus, corpus.labels())
    assert out.getvalue().startswith("Pierre NNP NNP\nVinken NNP NNP\n")
    assert out.getvalue().count("\n\n") == 3


@pytest.mark.parametrize("token", ["dog", "dog\\/NN", "/NN", "dog/"])
def test_ptb_token_without_tag(tmp_path, token):
    path = write(tmp_path, f"[ The/DT ]\n\nbig/JJ {token} ./.\n", "x.pos")
    with pytest.raises(InputFormatError, match=r"x\.pos:3: token .* word/TAG"):
        read_corpus(path)


def test_read_ptb_files(tmp_path):
    a = write(tmp_path, "[ A/DT dog/NN ]\nbarks/VBZ ./.\n", "a.pos")
    b = write(tmp_path, "\nIt/PRP rains/VBZ\n", "b.pos")
    corpus = read_ptb_files([a, b])
    assert sentences(corpus, "word") == [["A", "dog", "barks", "."], ["It", "rains"]]
    assert corpus.where(4) == (str(b), 2)


# ---------------------------------------------------------------- real corpora (skipped if absent)


def test_real_conll2000_test(corpus_mirror):
    path = corpus_mirror / "conll2000" / "test.txt"
    corpus = read_corpus(path, columns=["word", "pos", "chunk"])
    assert corpus.n_sentences == 2012
    assert corpus.n_tokens == 47377
    reference = naive_conll_sentences(path.read_text())
    assert corpus.columns["chunk"] == [f[2] for s in reference for f in s]
    np_only = read_corpus(path, columns=["word", "pos", "chunk"], only_types={"NP"})
    assert set(np_only.labels()) == {"B-NP", "I-NP", "O"}


def test_real_ewt_dev(corpus_mirror):
    corpus = read_corpus(corpus_mirror / "ud_english_ewt" / "en_ewt-ud-dev.conllu", label="xpos")
    assert corpus.n_sentences == 2001
    assert corpus.n_tokens == 25147
    assert "NN" in set(corpus.labels())


def test_real_wsj_sample(corpus_mirror):
    paths = sorted(glob.glob(str(corpus_mirror / "wsj_sample" / "tagged" / "*.pos")))
    corpus = read_ptb_files(paths)
    # independent token count: whitespace items that are neither brackets nor ==== separators
    n_items = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip().strip("="):
                    n_items += sum(item not in ("[", "]") for item in line.split())
    assert corpus.n_tokens == n_items == 94200
    # The combined/*.mrg trees hold 3,914 sentences; the .pos files segment slightly differently
    # (headlines without a final period run into the next sentence): 3,934 here, against 4,979
    # when every blank line is taken as a boundary.
    assert corpus.n_sentences == 3934
    assert "|" not in "".join(set(corpus.labels()))
    assert os.path.basename(corpus.where(0)[0]) == "wsj_0001.pos"


@pytest.mark.parametrize("separator_line", [" ", "\t", "  \t ", "\u00a0", "\r"])
def test_whitespace_only_lines_separate_sentences(tmp_path, separator_line):
    path = tmp_path / "ws.txt"
    path.write_text(f"a DT B-NP \nb NN I-NP\n{separator_line}\nc NN B-NP\t\n", encoding="utf-8")
    corpus = read_corpus(path, columns=["word", "pos", "chunk"])
    assert corpus.n_sentences == 2
    assert corpus.columns["chunk"] == ["B-NP", "I-NP", "B-NP"]


def test_conllu_space_after_follows_misc_and_multiword_tokens(tmp_path):
    text = (
        "1-2\tcan't\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
        "1\tca\tcan\tAUX\tMD\t_\t0\troot\t_\t_\n"
        "2\tn't\tnot\tPART\tRB\t_\t1\tadvmod\t_\t_\n"
        "3\t\"\t\"\tPUNCT\t``\t_\t1\tpunct\t_\tSpaceAfter=No\n"
        "4\tgo\tgo\tVERB\tVB\t_\t1\txcomp\t_\tSpaceAfter=No|Other=1\n"
        "4.1\tx\tx\tX\tXX\t_\t_\t_\t4:dep\t_\n"
        "5\t-\t-\tPUNCT\tHYPH\t_\t4\tpunct\t_\tSpaceAfter=No\n"
        "6-7\tits\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "6\tit\tit\tPRON\tPRP\t_\t4\tobj\t_\t_\n"
        "7\ts\tbe\tAUX\tVBZ\t_\t4\tcop\t_\t_\n"
        "8\tnow\tnow\tADV\tRB\t_\t4\tadvmod\t_\t_\n"
    )
    corpus = read_corpus(write(tmp_path, text, "s.conllu"))
    assert corpus.columns["word"] == ["ca", "n't", '"', "go", "-", "it", "s", "now"]
    # "ca" is inside a multiword token, "n't" ends one written with no space after it, "s" ends one
    # with a space, and the empty node 4.1 does not count
    assert corpus.columns["space_after"] == ["0", "0", "0", "0", "0", "0", "1", "1"]
