"""A newcomer's mistakes (issue 25): each one gets a clear error or warning instead of a silent wrong
answer: features that read the label, raw text, format mix-ups, unknown labels and chunk types, the
wrong shapes in the Python API, encodings, and CoNLL-U written back as CoNLL-U."""
import io
import warnings
from pathlib import Path

import conllu
import pytest
import forked_cli
from builders import ROOT

from structperc.clusters import brown
from structperc.corpus import as_corpus
from structperc.errors import ConfigError, DataError, InputFormatError, ModelFileError, StructpercWarning
from structperc.estimator.tagger import Tagger
from structperc.nbest.lists import nbest_corpus
from structperc.readers import read_corpus, write_tagged
from structperc.readers.parallel import read_training_columns
from structperc.readers.raw import tokenize

DATA = Path(__file__).parent / "data"

# two columns, word and UPOS: the "label" column is the POS tag
POS_TRAIN = """The DET
dog NOUN
barks VERB
. PUNCT

A DET
cat NOUN
sleeps VERB
. PUNCT

The DET
cat NOUN
runs VERB
. PUNCT
"""

CHUNKS = """He PRP B-NP
reckons VBZ B-VP
the DT B-NP
current JJ I-NP
deficit NN I-NP
. . O

The DT B-NP
pound NN I-NP
fell VBD B-VP
in IN B-PP
May NNP B-NP
. . O
"""

NER = """Jan NNP B-PER
woont VBZ O
in IN O
Gent NNP B-LOC
. . O

Marie NNP B-PER
zingt VBZ O
. . O
"""


def cli(*args, input=None):
    """``python -m structperc ARGS`` as a real process: (exit status, stdout, stderr lines). The notice
    that kernels are compiling (only in a fresh checkout) is left out of the stderr lines. The process is
    forked from one that imported the command line once (forked_cli.py)."""
    done = forked_cli.run(args, input=input, cwd=ROOT, timeout=300)
    return done.returncode, done.stdout, [line for line in done.stderr.splitlines()
                                          if line != "compiling kernels, once"]


def write(tmp_path, text, name):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pos_model(tmp_path_factory):
    """A POS tagger (preset pos: words only) trained on POS_TRAIN, and its file."""
    folder = tmp_path_factory.mktemp("pos")
    train = write(folder, POS_TRAIN, "pos.txt")
    tagger = Tagger(templates="pos", epochs=3).fit_file(train)
    path = folder / "pos.npz"
    tagger.save(path)
    return tagger, path


# ------------------------------------------------------------------------------ 1. label leakage


def test_template_file_reading_the_label_is_refused(tmp_path):
    templates = write(tmp_path, "w[0]\nlabel[0]\n", "leak.tpl")
    train = write(tmp_path, POS_TRAIN, "pos.txt")
    with pytest.raises(ConfigError, match=r"template 'label\[0\]' reads column 'label', the label column"):
        Tagger(templates=str(templates), epochs=1).fit_file(train)
    # the same from token lists: y is the column "label"
    with pytest.raises(ConfigError, match=r"'label\[0\]' reads column 'label'"):
        Tagger(templates=["w[0]", "label[0]"], epochs=1).fit([["a", "b"]], [["X", "Y"]])


def test_naming_the_label_column_after_a_template_field_is_refused(tmp_path):
    train = write(tmp_path, POS_TRAIN, "pos.txt")
    # the chunk preset reads pos; --columns word,pos makes pos the label
    with pytest.raises(ConfigError, match=r"template 'pos\[-2\]' reads column 'pos', the label column"):
        Tagger(templates="chunk", epochs=1).fit_file(train, columns=["word", "pos"])
    # from token lists, a token value may not take the label's name
    with pytest.raises(ConfigError, match="'label'"):
        Tagger(templates="chunk", columns=["word", "label"], epochs=1).fit([[("a", "X")]], [["X"]])


def test_missing_column_hint_never_proposes_the_label(tmp_path):
    train = write(tmp_path, POS_TRAIN, "pos.txt")
    with pytest.raises(ConfigError) as caught:
        Tagger(templates="chunk", epochs=1).fit_file(train)
    message = str(caught.value)
    assert "templates use column(s) pos" in message
    assert "the label column label" in message
    assert "presets over the other columns: pos, pos-rich" in message
    assert "--columns" not in message


def test_cli_refuses_the_label_both_ways(tmp_path):
    train = write(tmp_path, POS_TRAIN, "pos.txt")
    template_file = write(tmp_path, "w[0]\nlabel[0]\n", "leak.tpl")
    for extra in (["--columns", "word,pos", "--templates", "chunk"], ["--templates", template_file]):
        status, _, err = cli("train", train, "--model", tmp_path / "m.npz", "--epochs", 1, "-q", *extra)
        assert status == 2 and len(err) == 1, err
        assert "reads column" in err[0] and "the label column" in err[0]
    assert not (tmp_path / "m.npz").exists()


# ------------------------------------------------------------------------------ 2. raw text


def test_tokenizer_lives_in_readers():
    assert brown.tokenize is tokenize
    assert tokenize("It's U.S.-made.") == ["It", "'s", "U.S.", "-", "made", "."]


def test_raw_format_reads_one_sentence_per_line(tmp_path):
    path = write(tmp_path, "The dog barks.\n\n  \nIt's late!\n", "s.raw")
    corpus = read_corpus(path, require_label=False)
    assert corpus.format == "raw" and corpus.label is None
    assert corpus.columns["word"] == ["The", "dog", "barks", ".", "It", "'s", "late", "!"]
    assert corpus.sentence_offsets.tolist() == [0, 4, 8]
    assert corpus.line_numbers.tolist() == [1] * 4 + [4] * 4
    with pytest.raises(ConfigError, match="raw text has no labels"):
        read_corpus(path)


def test_tag_raw_text_from_stdin(pos_model):
    tagger, model = pos_model
    status, out, err = cli("tag", "-", "--model", model, "--format", "raw", "-q",
                           input="The dog barks .\nA cat sleeps.\n")
    assert status == 0, err
    expected = [tagger.tag(["The", "dog", "barks", "."]), tagger.tag(["A", "cat", "sleeps", "."])]
    assert out == "\n\n".join("\n".join(f"{w} {t}" for w, t in s) for s in expected) + "\n\n"
    status, out, err = cli("tag", "-", "--model", model, "--format", "raw", "--output-format", "tagged", "-q",
                           input="The dog barks .\n")
    assert status == 0, err
    assert out == " ".join(f"{w}/{t}" for w, t in expected[0]) + "\n"


def test_tagger_tag_gives_pairs(pos_model):
    tagger, _ = pos_model
    pairs = tagger.tag(["The", "cat", "barks"])
    assert [w for w, _ in pairs] == ["The", "cat", "barks"]
    assert [t for _, t in pairs] == tagger.predict([["The", "cat", "barks"]])[0]
    assert tagger.tag_sents([["A", "dog"]]) == [tagger.tag(["A", "dog"])]
    # a string is raw text: split into sentences and words, one list of pairs per sentence
    assert tagger.tag("The cat barks") == [tagger.tag(["The", "cat", "barks"])]


# ------------------------------------------------------------------------------ 3. formats


def test_unknown_format_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown corpus format 'conllx'; valid formats: conll, conllu, ptb, raw"):
        read_corpus(DATA / "tiny.conll", format="conllx")


def test_cli_unknown_format_is_one_line(tmp_path, pos_model):
    train = write(tmp_path, POS_TRAIN, "pos.txt")
    status, _, err = cli("train", train, "--model", tmp_path / "m.npz", "--format", "conllx", "-q")
    assert status == 2 and len(err) == 1 and "--format: 'conllx' is not one of 'conll', 'conllu'" in err[0], err
    status, _, err = cli("tag", train, "--model", pos_model[1], "--format", "xml", "-q")
    assert status == 2 and len(err) == 1 and "--format: 'xml' is not one of" in err[0], err


def test_conllu_in_a_txt_file_says_to_try_conllu(tmp_path):
    path = tmp_path / "ud.txt"
    path.write_bytes((DATA / "tiny.conllu").read_bytes())
    with pytest.raises(InputFormatError, match=r"ud\.txt:2: .*looks like CoNLL-U: read it as format conllu"):
        read_corpus(path)
    # no comment lines: the 10 tab-separated fields give it away at once
    bare = write(tmp_path, "1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_\n",
                 "bare.txt")
    with pytest.raises(InputFormatError, match=r"bare\.txt:1: .*CoNLL-U"):
        read_corpus(bare)


def test_word_tag_tokens_in_a_conll_file_say_to_try_tagged(tmp_path):
    path = write(tmp_path, "The/DT dog/NN barks/VBZ ./.\nIt/PRP rains/VBZ ./.\n", "t.txt")
    with pytest.raises(InputFormatError, match=r"t\.txt:2: expected 4 columns, found 3; .*format tagged"):
        read_corpus(path)


def test_raw_sentences_given_as_conll_are_refused(tmp_path):
    # every sentence of four tokens ending in ".": reads as 4-column CoNLL, label always "."
    raw = write(tmp_path, "The dog barks .\nA cat sleeps .\nIt rains hard .\n", "raw.txt")
    with pytest.raises(InputFormatError, match=r"always '\.': this looks like raw text"):
        read_corpus(raw)
    with pytest.raises(InputFormatError, match="looks like raw text"):
        Tagger(epochs=1).fit_file(raw)
    # the same file is fine as input to tag (no label needed), and as raw text
    assert read_corpus(raw, require_label=False).n_tokens == 3
    assert read_corpus(raw, format="raw", require_label=False).n_sentences == 3
    # lines of different lengths fail on the column count, with a hint
    uneven = write(tmp_path, "The dog barks loudly today .\nIt rains .\n", "uneven.txt")
    with pytest.raises(InputFormatError, match=r"uneven\.txt:2: expected 6 columns, found 3; if this is raw text"):
        read_corpus(uneven)


def test_one_label_is_refused_only_when_it_looks_like_raw_text(tmp_path):
    # a (useless but well-formed) corpus whose label is always O: read as it is
    plain = write(tmp_path, "a DT O\nb NN O\n\nc VB O\n", "o.txt")
    assert read_corpus(plain).labels() == ["O", "O", "O"]
    # two columns (word, label) are never taken for raw text
    two = write(tmp_path, "a .\nb .\n", "two.txt")
    assert read_corpus(two).labels() == [".", "."]


def test_cli_raw_file_given_to_train_is_one_line(tmp_path):
    raw = write(tmp_path, "The dog barks .\nA cat sleeps .\n", "raw.txt")
    status, _, err = cli("train", raw, "--model", tmp_path / "m.npz", "-q")
    assert status == 2 and len(err) == 1 and "looks like raw text" in err[0], err


def test_a_text_file_is_not_a_model_file(tmp_path):
    notes = write(tmp_path, "my notes\n", "notes.txt")
    with pytest.raises(ModelFileError, match=r"notes\.txt: not a structperc model file") as caught:
        Tagger.load(notes)
    assert "pickle" not in str(caught.value)
    status, _, err = cli("tag", notes, "--model", notes, "-q")
    assert status == 2 and len(err) == 1 and "not a structperc model file" in err[0] and "pickle" not in err[0]


# ------------------------------------------------------------------------------ 4. no silent nonsense


@pytest.fixture(scope="module")
def ner_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ner")
    train = write(folder, NER, "ner.txt")
    tagger = Tagger(templates="chunk", epochs=2).fit_file(train, columns=["word", "pos", "ne"])
    path = folder / "ner.npz"
    tagger.save(path)
    return tagger, path


def test_gold_labels_the_model_knows_none_of(tmp_path, ner_model):
    tagger, model = ner_model
    chunks = write(tmp_path, CHUNKS, "chunks.txt")
    # the NER model shares only O with the chunk labels
    with pytest.raises(ConfigError, match=r"chunks\.txt: the model knows none of the gold labels \(B-NP, B-PP"):
        tagger.evaluate_file(chunks)
    with pytest.raises(ConfigError, match="knows none of the gold labels"):
        nbest_corpus(tagger, tagger.read(chunks), 2)
    status, out, err = cli("eval", chunks, "--model", model)
    assert status == 2 and len(err) == 1 and "B-LOC, B-PER" in err[0], err
    assert out == ""


def test_gold_labels_the_model_knows_some_of(tmp_path, ner_model):
    tagger, model = ner_model
    mixed = write(tmp_path, NER.replace("B-LOC", "B-MISC"), "mixed.txt")
    with pytest.warns(StructpercWarning, match="does not know 1 of the gold labels \\(B-MISC\\)"):
        result = tagger.evaluate_file(mixed)
    assert result["unknown_labels"] == ["B-MISC"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "unknown_labels" not in tagger.evaluate_file(write(tmp_path, NER, "same.txt"))
    status, out, err = cli("eval", mixed, "--model", model)
    assert status == 0 and "accuracy" in out
    assert err == [f"{mixed}: warning: the model does not know 1 of the gold labels (B-MISC); their tokens count "
                   "as errors"]


def test_only_types_the_corpus_lacks(tmp_path):
    chunks = write(tmp_path, CHUNKS, "chunks.txt")
    with pytest.raises(ConfigError, match="no chunk of type NPP to keep; the types in the labels: NP, PP, VP"):
        read_corpus(chunks, columns=["word", "pos", "chunk"], only_types=["NPP"])
    with pytest.warns(StructpercWarning, match="no chunk of type NPP"):
        corpus = read_corpus(chunks, columns=["word", "pos", "chunk"], only_types=["NP", "NPP"])
    assert set(corpus.labels()) == {"B-NP", "I-NP", "O"}
    status, _, err = cli("train", chunks, "--model", tmp_path / "m.npz", "--only-types", "NPP", "-q")
    assert status == 2 and len(err) == 1 and "types in the labels: NP, PP, VP" in err[0], err


def test_only_types_checked_over_the_parts_of_a_parallel_read(tmp_path):
    # large enough to be read in two parts by two processes; NP only in the first part
    half = "a DT B-VP\nb NN I-VP\n\n" * 7000
    path = write(tmp_path, "x DT B-NP\n\n" + half + half, "big.txt")
    corpus = read_training_columns(path, parts=2, columns=["word", "pos", "chunk"], only_types=["NP"])
    assert sorted(set(corpus.columns["chunk"])) == ["B-NP", "O"]
    with pytest.raises(ConfigError, match="no chunk of type PP to keep; the types in the labels: NP, VP"):
        read_training_columns(path, parts=2, columns=["word", "pos", "chunk"], only_types=["PP"])


def test_python_api_shapes():
    tagger = Tagger(templates="pos", epochs=1).fit([["the", "dog"], ["a", "cat"]], [["D", "N"], ["D", "N"]])
    with pytest.raises(DataError, match=r"X\[1\] is the str 'The dog barks \.', not a list of tokens"):
        tagger.predict([["a"], "The dog barks ."])
    with pytest.raises(DataError, match="no tokens"):
        Tagger().fit([], [])
    with pytest.raises(DataError, match="sentence 1 has 2 tokens in X and 1 labels in y"):
        Tagger(templates="pos").fit([["a"], ["b", "c"]], [["X"], ["Y"]])
    with pytest.raises(DataError, match="X has 2 sentences and y 1"):
        as_corpus([["a"], ["b"]], [["X"]])
    with pytest.raises(ValueError):  # DataError is a ValueError too, as scikit-learn raises
        as_corpus([["a"]], ["X"])


# ------------------------------------------------------------------------------ 5. encoding


def test_model_records_its_encoding_and_reads_with_it(tmp_path):
    text = POS_TRAIN.replace("dog", "chién")
    train = tmp_path / "latin.txt"
    train.write_bytes(text.encode("latin-1"))
    tagger = Tagger(templates="pos", epochs=2).fit_file(train, encoding="latin-1")
    assert tagger.model_.metadata["input"]["encoding"] == "latin-1"
    assert "chién" in tagger.read(train).columns["word"]
    utf8 = tmp_path / "utf8.txt"
    utf8.write_bytes(text.encode("utf-8"))
    assert "chién" in tagger.read(utf8, encoding="utf-8").columns["word"]
    # a UTF-8 model given Latin-1 bytes: an error naming the encoding, not a traceback
    default = Tagger(templates="pos", epochs=1).fit_file(write(tmp_path, POS_TRAIN, "pos.txt"))
    assert default.model_.metadata["input"]["encoding"] == "utf-8"
    with pytest.raises(InputFormatError, match=r"latin\.txt:2: cannot decode byte .* as utf-8 .*another encoding"):
        default.tag_file(train, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


# ------------------------------------------------------------------------------ 6. CoNLL-U out


def test_conllu_tagged_by_a_upos_model_is_conllu(tmp_path):
    tagger = Tagger(templates="pos", epochs=2).fit_file(DATA / "tiny.conllu")
    out = tmp_path / "out.conllu"
    tagger.tag_file(DATA / "tiny.conllu", out)
    text = out.read_text()
    source = (DATA / "tiny.conllu").read_text()
    # comments, multiword tokens and empty nodes are kept
    assert [line for line in text.splitlines() if line and not line.split("\t")[0].isdigit()] == \
        [line for line in source.splitlines() if line and not line.split("\t")[0].isdigit()]
    parsed, original = conllu.parse(text), conllu.parse(source)
    words = [[t["form"] for t in s if isinstance(t["id"], int)] for s in original]
    assert [[t["upos"] for t in s if isinstance(t["id"], int)] for s in parsed] == tagger.predict(words)
    assert [s.metadata for s in parsed] == [s.metadata for s in original]
    for s_out, s_in in zip(parsed, original):
        for t_out, t_in in zip(s_out, s_in):
            assert {k: v for k, v in t_out.items() if k != "upos"} == {k: v for k, v in t_in.items() if k != "upos"}
    assert all(line.count("\t") == 9 for line in text.splitlines() if line and not line.startswith("#"))


def test_conllu_keep_gold_adds_a_column():
    corpus = read_corpus(DATA / "tiny.conllu", label="xpos")
    predicted = [f"P{i}" for i in range(corpus.n_tokens)]
    out = io.StringIO()
    write_tagged(out, corpus, predicted, keep_gold=True)
    words = [line.split("\t") for line in out.getvalue().splitlines() if line[:1].isdigit() and "\t" in line]
    words = [fields for fields in words if fields[0].isdigit()]
    assert [fields[4] for fields in words] == corpus.labels()
    assert [fields[10] for fields in words] == predicted
    out = io.StringIO()
    write_tagged(out, corpus, predicted)
    xpos = [t["xpos"] for s in conllu.parse(out.getvalue()) for t in s if isinstance(t["id"], int)]
    assert xpos == predicted


def test_conllu_joined_label_is_written_into_its_fields():
    corpus = read_corpus(DATA / "tiny.conllu", label="upos+feats")
    predicted = ["NOUN|Number=Sing|Case=Nom"] + ["VERB|_"] * (corpus.n_tokens - 1)
    out = io.StringIO()
    write_tagged(out, corpus, predicted)
    first = conllu.parse(out.getvalue())[0][1]
    assert first["upos"] == "NOUN" and first["feats"] == {"Number": "Sing", "Case": "Nom"}


def test_utf8_read_as_latin1_is_warned(tmp_path):
    path = tmp_path / "utf8.txt"
    path.write_bytes("The DET\nchién NOUN\n".encode("utf-8"))
    with pytest.warns(StructpercWarning, match=r"utf8\.txt:2: read as latin-1, but the text is valid UTF-8: 'chién'"):
        read_corpus(path, encoding="latin-1")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("The DET\nchién NOUN\n".encode("latin-1"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_corpus(latin, encoding="latin-1").columns["word"] == ["The", "chién"]


def test_template_and_lexicon_files_that_do_not_decode(tmp_path):
    from structperc.features.lexicon import Lexicon
    from structperc.features.templates import load_templates

    templates = tmp_path / "t.tpl"
    templates.write_bytes("w[0]\n# café\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="template file is UTF-8"):
        load_templates(str(templates))
    lexicon = tmp_path / "lex.txt"
    lexicon.write_bytes("a\tX\ncafé\tY\n".encode("latin-1"))
    with pytest.raises(InputFormatError, match=r"lex\.txt:2: cannot decode"):
        Lexicon.read(lexicon)
