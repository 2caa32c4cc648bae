"""Every reader on fuzzed bytes: the outcome is a well-formed Corpus or a StructpercError naming
file:line, never another exception."""

import os
import re
import warnings
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, find, given, settings
from hypothesis import strategies as st

import structperc.readers.stream as stream
from structperc.corpus import Corpus, concatenate
from structperc.errors import StructpercError, StructpercWarning
from structperc.readers import FORMATS, iter_corpus, read_corpus

# Characters that matter to some reader (separators, comment and range marks, CoNLL-U ids,
# Unicode whitespace, NUL, BOM, a lone CR) and a few ordinary ones.
SPECIAL = "\x00\t /\\|#=-._:[]()'\"0123456789\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\ufeff"
FIELD = st.text(alphabet=st.sampled_from(SPECIAL) | st.characters(codec="utf-8"), max_size=8)
# Non-empty text without whitespace: a field that every reader accepts as a word
WORD = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Zs", "Zl", "Zp", "Cc"])
               | st.sampled_from("\x00\ufeff/\\|#=-._:[]"), min_size=1, max_size=6).filter(
    lambda word: not word.isspace() and len(word.split()) == 1 and not word.startswith("#"))
# A lone "\r" is not a line break (it is whitespace inside a line): only some files have one.
ENDINGS = st.sampled_from(["\n", "\r\n"])
ENDINGS_WITH_CR = st.sampled_from(["\n", "\r\n", "\r"])


def conllu_sentence(draw, clean):
    """Token lines of one CoNLL-U sentence: valid when `clean`, else with random bad fields."""
    n_words = draw(st.integers(1, 4))
    lines = []
    for word_id in range(1, n_words + 1):
        if word_id < n_words and draw(st.integers(0, 3)) == 0:
            lines.append(f"{word_id}-{word_id + 1}\t{draw(WORD)}\t_\t_\t_\t_\t_\t_\t_\t"
                         + draw(st.sampled_from(["_", "SpaceAfter=No"])))
        fields = [str(word_id), draw(WORD), draw(WORD), draw(st.sampled_from(["NOUN", "_"])),
                  draw(st.sampled_from(["NN", "_"])), draw(st.sampled_from(["_", "A=B", "A=B|C=D"])),
                  str(draw(st.integers(0, n_words))), "dep", draw(st.sampled_from(["_", "0:root"])),
                  draw(st.sampled_from(["_", "SpaceAfter=No", "A=B|SpaceAfter=No"]))]
        if not clean and draw(st.booleans()):
            k = draw(st.integers(0, 9))
            fields[k] = draw(st.sampled_from(["", "x", "1-", "=", "|", "A", "-1", "1:", "\x00"])
                             | FIELD.filter(lambda f: "\t" not in f))
        if not clean and not draw(st.integers(0, 5)):
            fields = fields[:draw(st.integers(1, 11))]
        lines.append("\t".join(fields))
        if draw(st.integers(0, 5)) == 0:
            lines.append(f"{word_id}.1\t{draw(WORD)}\t_\t_\t_\t_\t_\t_\t{word_id}:dep\t_")
    return lines


def tagged_sentence(draw, format, clean):
    """Lines of word/TAG tokens: valid when `clean`, else with random bad tokens."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        items = []
        for _ in range(draw(st.integers(1, 5))):
            if format == "ptb" and draw(st.integers(0, 5)) == 0:
                items.append(draw(st.sampled_from(["[", "]"])))
                continue
            word = draw(WORD).replace("\\", "")
            tag = draw(st.sampled_from([".", "''", ")", "NN", "NN|JJ", "-RRB-"]))
            if not clean and draw(st.integers(0, 3)) == 0:
                word = draw(st.sampled_from(["", "\\", "x\\/y"]) | FIELD)
                tag = draw(st.sampled_from(["", "/", "|", "."]) | FIELD)
            items.append(word + "/" + tag)
        lines.append(draw(st.sampled_from([" ", "  ", "\t"])).join(items))
    return lines


def conll_sentence(draw, n_fields, clean):
    """Lines of `n_fields` words (when `clean`), or of random fields and counts."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        if clean:
            fields = [draw(WORD) for _ in range(n_fields)]
        else:
            count = n_fields if draw(st.integers(0, 3)) else draw(st.integers(1, 12))
            fields = [draw(FIELD) for _ in range(count)]
        lines.append(draw(st.sampled_from([" ", "  ", "\t"])).join(fields))
    return lines


@st.composite
def text_input(draw, format):
    """Sentences shaped for `format` between blank (and, where the format has them, comment or
    "=====") lines, joined by random line endings; sometimes an overlong line, no final
    newline, a BOM. `clean` files are valid, apart from the line endings and BOMs."""
    clean = draw(st.booleans())
    n_fields = draw(st.integers(1, 11))
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        if format == "conllu":
            if draw(st.booleans()):
                lines.append("# " + draw(FIELD).replace("\n", ""))
            lines.extend(conllu_sentence(draw, clean))
        elif format in ("ptb", "tagged"):
            lines.extend(tagged_sentence(draw, format, clean))
        else:
            lines.extend(conll_sentence(draw, n_fields, clean))
        separators = ["", " ", "\t", "\x0c"]
        if format == "ptb":
            separators.append("=" * draw(st.integers(2, 40)))
        if format == "conll":
            separators.append("-DOCSTART- " + " ".join(["O"] * (n_fields - 1)))
        if format == "tagged":
            separators.append("")  # one sentence per line: a blank line is optional
        lines.append(draw(st.sampled_from(separators)))
        if not clean and draw(st.integers(0, 3)) == 0:
            lines.append(draw(FIELD))
    if format != "conllu" and lines and draw(st.booleans()):
        # an overlong line: longer than the smaller read chunks
        long_line = " ".join(["a/B"] * n_fields if format == "conll" else ["a/B"]
                             * draw(st.integers(20, 300)))
        lines.insert(draw(st.integers(0, len(lines))), long_line)
    endings = draw(st.sampled_from([ENDINGS, ENDINGS, ENDINGS, ENDINGS_WITH_CR]))
    text = "".join(line + draw(endings) for line in lines)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no newline at end of file
    return text.encode("utf-8", "surrogatepass")


@st.composite
def inputs(draw, format):
    prefix = draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf",
                                   b"\xff\xfe"]))
    body = draw(st.one_of(text_input(format), text_input(format), st.binary(max_size=300)))
    return prefix + body


def check_outcome(path, read):
    """Run `read`; it must give a well-formed Corpus or a StructpercError naming path:line, and
    may warn only with a StructpercWarning naming path:line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            corpus = read()
        except StructpercError as error:
            corpus = error
    for warning in caught:
        assert isinstance(warning.message, StructpercWarning), warning
        assert str(warning.message).startswith(f"{path}:{warning.message.line}: ")
    if isinstance(corpus, StructpercError):
        error = corpus
        message = str(error)
        if message == f"{path}: no sentences found":
            event("no sentences")
            return  # a whole-file error: there is no line to name
        assert re.match(rf"{re.escape(str(path))}:\d+: \S", message), message
        event("error: " + re.sub(r".*:\d+: ", "", message)[:20])
        return
    event("parsed")
    assert isinstance(corpus, Corpus)
    offsets = corpus.sentence_offsets
    assert offsets[0] == 0 and np.all(np.diff(offsets) > 0)
    assert all(len(values) == corpus.n_tokens for values in corpus.columns.values())
    assert len(corpus.line_numbers) == corpus.n_tokens
    assert np.all(corpus.line_numbers >= 1) and np.all(np.diff(corpus.line_numbers) >= 0)
    assert all(value and not value.isspace() for value in corpus.columns["word"])


# Examples per format; raise it (e.g. STRUCTPERC_FUZZ_EXAMPLES=5000) for a longer search.
FUZZ_EXAMPLES = int(os.environ.get("STRUCTPERC_FUZZ_EXAMPLES", "80"))


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("format", sorted(FORMATS))
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), chunk_bytes=st.sampled_from([7, 64, 1 << 20]), require_label=st.booleans())
def test_fuzzed_input(fuzz_dir, format, data, chunk_bytes, require_label):
    data = data.draw(inputs(format))
    require_label = require_label and format != "raw"  # raw text has no labels: a ConfigError, whatever the bytes
    path = fuzz_dir / f"input.{format}"
    path.write_bytes(data)
    real = stream.read_chunks
    with mock.patch.object(stream, "read_chunks",
                           lambda p, encoding, **kw: real(p, encoding, chunk_bytes=chunk_bytes, **kw)):
        check_outcome(path, lambda: read_corpus(path, format=format, require_label=require_label))
        check_outcome(path, lambda: concatenate(list(iter_corpus(path, format=format,
                                                                 batch_sentences=2))))


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_fuzz_inputs_reach_the_parsers(fuzz_dir, format):
    """Not every fuzz input is rejected by the first check: some parse to a Corpus."""
    path = fuzz_dir / f"reach.{format}"

    labelled = format != "raw"  # raw text has no labels

    def parses(data):
        path.write_bytes(data)
        try:
            return read_corpus(path, format=format, require_label=labelled).n_tokens > 3
        except StructpercError:
            return False

    find(inputs(format), parses,
         settings=settings(max_examples=300, database=None, phases=[Phase.generate]))
    valid = {
        "conll": b"a\tB C\r\nd E F\r\n\rg H I",
        "conllu": b"\xef\xbb\xbf# c\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\t_\tX\t_\t_\t0\troot\t_\t_\r\n"
                  b"2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\r\n\t\n1\tc\t_\tX\t_\t_\t0\troot\t_\t_",
        "ptb": b"[ a/B ]\r\n\n=====\nc/D ./.",
        "tagged": b"a/B c/D\r\n\r\ne\\/f/G",
        "raw": b"a b\r\n\r\n\tc",
    }[format]
    path.write_bytes(valid)
    assert read_corpus(path, format=format, require_label=labelled).n_tokens == 3


def _outcome(read):
    """What a read gives: the error message, or the corpus's columns, sentences and lines."""
    try:
        corpus = read()
    except StructpercError as error:
        return str(error)
    return ({name: list(values) for name, values in corpus.columns.items()}, corpus.label,
            corpus.sentence_offsets.tolist(), corpus.line_numbers.tolist())


@pytest.mark.parametrize("format", ["conll", "conllu"])
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), parts=st.sampled_from([2, 3]))
def test_fuzzed_input_read_in_parts_reads_as_a_serial_read(fuzz_dir, format, data, parts):
    """``training_read`` cuts the file after blank lines and forks readers: the same corpus, or the
    same error, as one serial read."""
    from structperc.readers import parallel as training_read

    path = fuzz_dir / f"parts.{format}"
    path.write_bytes(data.draw(inputs(format)))
    with mock.patch.object(training_read, "_BATCH", 1), mock.patch.object(training_read, "_MIN_PART_BYTES", 1):
        parted = _outcome(lambda: training_read.read_training_columns(path, parts=parts, format=format))
    assert parted == _outcome(lambda: read_corpus(path, format=format))
