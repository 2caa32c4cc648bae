"""The tagged format, the PTB reader's long-sentence warning, the parser protocol and the CLI's
one-line messages for bad input and warnings (in a real subprocess)."""

import warnings

import pytest
import forked_cli

from structperc.errors import ConfigError, InputFormatError, StructpercWarning
from structperc.readers import FORMATS, iter_corpus, read_corpus, read_ptb_files
from structperc.readers.base import Parser
from structperc.readers.ptb import LONG_SENTENCE
from structperc.readers.stream import SentenceBuilder


def sentences(corpus, column):
    values, offsets = corpus.columns[column], corpus.sentence_offsets
    return [values[offsets[i]:offsets[i + 1]] for i in range(corpus.n_sentences)]


def naive_tagged(text, sep="/"):
    """Reference reader: one sentence per non-blank line, tokens split at the last `sep`."""
    result = []
    for line in text.splitlines():
        if line.strip():
            result.append([tuple(item.rsplit(sep, 1)) for item in line.split()])
    return result


def one_sentence_per_line(n_sentences, n_tokens=6):
    """Lines of word/TAG tokens with no sentence-final "." tag (as many tagged corpora)."""
    return "".join(" ".join(f"w{s}_{t}/T{t % 3}" for t in range(n_tokens)) + "\n"
                   for s in range(n_sentences))


# ---------------------------------------------------------------- tagged format


def test_tagged_matches_naive_reader(tmp_path):
    text = ("The/DT cat/NN sat/VBD ./.\n\n   \n1/2/CD a\\/b/NN  x//SYM\r\n"
            "AT&T/NNP rose/VBD\n\n")
    path = tmp_path / "news.tagged"
    path.write_text(text, encoding="utf-8")
    corpus = read_corpus(path)
    assert corpus.format == "tagged"
    assert list(corpus.columns) == ["word", "pos"] and corpus.label == "pos"
    expected = naive_tagged(text.replace("\r", ""))
    assert sentences(corpus, "word") == [[w for w, _ in s] for s in expected]
    assert sentences(corpus, "pos") == [[t for _, t in s] for s in expected]
    assert sentences(corpus, "word")[1] == ["1/2", "a\\/b", "x/"]
    assert corpus.line_numbers.tolist() == [1, 1, 1, 1, 4, 4, 4, 5, 5]
    assert corpus.lines is None


def test_tagged_separator_option(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("a_b_NN c_VB\nd_DT\n", encoding="utf-8")
    corpus = read_corpus(path, format="tagged", tag_sep="_")
    assert sentences(corpus, "word") == [["a_b", "c"], ["d"]]
    assert corpus.labels() == ["NN", "VB", "DT"]
    multi = tmp_path / "y.tagged"
    multi.write_text("a||NN b||VB\n", encoding="utf-8")
    assert read_corpus(multi, tag_sep="||").labels() == ["NN", "VB"]


@pytest.mark.parametrize("token", ["dog", "/NN", "dog/"])
def test_tagged_token_without_separator(tmp_path, token):
    path = tmp_path / "x.tagged"
    path.write_text(f"A/DT big/JJ\n\nbig/JJ {token} ./.\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=rf"x\.tagged:3: token '{token}' is not of the "
                                               r"form word/TAG") as info:
        read_corpus(path)
    assert info.value.line == 3


@pytest.mark.parametrize("bad", ["", " ", "a b"])
def test_tagged_bad_separator(tmp_path, bad):
    path = tmp_path / "x.tagged"
    path.write_text("a/B\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="tag_sep"):
        read_corpus(path, tag_sep=bad)


@pytest.mark.parametrize("fmt", ["conll", "conllu", "ptb"])
def test_tag_sep_only_for_tagged(tmp_path, fmt):
    path = tmp_path / "x.txt"
    path.write_text("a/B\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"option tag_sep applies only to format tagged, not to "
                                          rf"{fmt}"):
        read_corpus(path, format=fmt, tag_sep="/")


def test_tagged_batches_and_only_types(tmp_path):
    path = tmp_path / "x.tagged"
    path.write_text("a/B-NP b/B-VP\nc/I-NP\n\nd/O\n", encoding="utf-8")
    batches = list(iter_corpus(path, batch_sentences=2, only_types={"NP"}))
    assert [b.n_sentences for b in batches] == [2, 1]
    assert batches[0].labels() == ["B-NP", "O", "I-NP"]


# ---------------------------------------------------------------- PTB long-sentence warning


def read_warnings(**kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = read_corpus(**kwargs)
    return corpus, [w for w in caught if issubclass(w.category, StructpercWarning)]


def test_one_sentence_per_line_file_read_as_ptb_warns_once(tmp_path):
    path = tmp_path / "news.pos"
    # 3 x 51 sentences, one per line with blank lines between; only every 51st ends in "./.",
    # so the PTB reader joins each run of 51 into one sentence of 306 tokens
    lines = []
    for group in range(3):
        for s in range(50):
            lines.append(" ".join(f"w{group}_{s}_{t}/T{t % 3}" for t in range(6)))
        lines.append(" ".join(f"w{group}_{t}/T{t % 3}" for t in range(5)) + " ./.")
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    corpus, caught = read_warnings(path=path)
    assert corpus.n_sentences == 3 and corpus.n_tokens == 153 * 6
    assert len(caught) == 1
    warning = caught[0].message
    assert (warning.path, warning.line) == (str(path), 1)
    assert str(warning).startswith(f"{path}:1: a sentence of 306 tokens (lines 1-101)")
    assert "format='tagged'" in str(warning)  # the CLI says --format tagged (line 228)

    tagged, caught = read_warnings(path=path, format="tagged")
    assert tagged.n_sentences == 153 and tagged.n_tokens == 153 * 6 and not caught
    assert tagged.columns == corpus.columns


def test_ptb_warning_once_per_file(tmp_path):
    long_file = tmp_path / "a.pos"
    long_file.write_text(one_sentence_per_line(LONG_SENTENCE // 6 + 1), encoding="utf-8")
    short = tmp_path / "b.pos"
    short.write_text(one_sentence_per_line(LONG_SENTENCE // 6), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_ptb_files([short, long_file, short, long_file])
    assert [(w.message.path, w.message.line) for w in caught] == [(str(long_file), 1)] * 2


def test_ptb_sentence_grows_past_limit_after_reopening(tmp_path):
    """Closing quotes after the final period reopen the sentence; the count includes them."""
    path = tmp_path / "q.pos"
    body = " ".join(f"w{t}/NN" for t in range(LONG_SENTENCE - 1)) + " ./.\n\n''/''\n"
    path.write_text(body, encoding="utf-8")
    corpus, caught = read_warnings(path=path)
    assert corpus.n_sentences == 1 and corpus.n_tokens == LONG_SENTENCE + 1
    assert len(caught) == 1 and f"{LONG_SENTENCE + 1} tokens" in str(caught[0].message)


# ---------------------------------------------------------------- the parser protocol


def test_every_format_is_a_parser_with_extensions():
    assert all(issubclass(parser, Parser) and parser.format == name
               for name, parser in FORMATS.items())
    extensions = [ext for parser in FORMATS.values() for ext in parser.extensions]
    assert len(extensions) == len(set(extensions))


def test_builder_close_and_reopen():
    builder = SentenceBuilder("x", "ptb", keeps_lines=False, lines_follow_relabelling=True)
    builder.cols = [[], []]

    def add(*words):
        for word in words:
            builder.cols[0].append(word)
            builder.cols[1].append("T")
            builder.line_numbers.append(1)

    builder.close_sentence()  # nothing pending: no empty sentence
    assert builder.n_closed == 0
    add("a", "b")
    builder.close_sentence()
    builder.close_sentence()
    assert builder.n_closed == 1 and builder.open_sentence_start == 2
    add("c")
    builder.reopen_last_sentence()
    assert builder.open_sentence_start == 0
    builder.close_sentence()
    add("d", "e", "f")
    builder.close_sentences_at([4, 6])
    batch = builder.take(3, ["word", "pos"], "pos", None)
    assert sentences(batch, "word") == [["a", "b", "c"], ["d"], ["e", "f"]]
    assert builder.n_closed == 0 and builder.open_sentence_start == 0


# ---------------------------------------------------------------- the CLI, as a real process


def run_cli(*args, cwd):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, cwd=cwd, timeout=120)


def test_cli_bad_input_and_warning_are_one_line(tmp_path, warm_cli_kernels):
    bad = tmp_path / "bad.txt"
    bad.write_text("a DT B-NP\nb NN I-NP\n\nc VB\n", encoding="utf-8")
    result = run_cli("train", bad, "--model", tmp_path / "m.npz", "--quiet", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"structperc: error: {bad}:4: expected 3 columns, found 2"]
    assert not (tmp_path / "m.npz").exists()

    wrong_sep = run_cli("train", bad, "--model", tmp_path / "m.npz", "--tag-sep", "_",
                        cwd=tmp_path)
    assert wrong_sep.returncode == 2
    assert wrong_sep.stderr.splitlines() == [
        "structperc: error: option tag_sep applies only to format tagged, not to conll"]

    long_ptb = tmp_path / "news.pos"
    long_ptb.write_text(one_sentence_per_line(60), encoding="utf-8")
    model = tmp_path / "pos.npz"
    result = run_cli("train", long_ptb, "--model", model, "--templates", "pos", "--epochs", 1,
                     "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{long_ptb}:1: warning: a sentence of 360 ")
    assert "--format tagged" in lines[0]


def test_cli_tagged_round_trip_with_separator(tmp_path, warm_cli_kernels):
    train = tmp_path / "train.tagged"
    train.write_text("The_DT dog_NN barks_VBZ\nA_DT cat_NN sleeps_VBZ\n", encoding="utf-8")
    model = tmp_path / "m.npz"
    result = run_cli("train", train, "--model", model, "--tag-sep", "_", "--templates", "pos",
                     "--epochs", 3, "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # the model remembers the separator
    tagged = run_cli("tag", train, "--model", model, "--quiet", cwd=tmp_path)
    assert tagged.returncode == 0, tagged.stderr
    rows = [line.split() for line in tagged.stdout.splitlines() if line]
    assert [row[:2] for row in rows] == [["The", "DT"], ["dog", "NN"], ["barks", "VBZ"],
                                         ["A", "DT"], ["cat", "NN"], ["sleeps", "VBZ"]]
    assert tagged.stdout.count("\n\n") == 2
    wrong = run_cli("eval", train, "--model", model, "--tag-sep", "/", cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines() == [
        f"structperc: error: {train}:1: token 'The_DT' is not of the form word/TAG"]
