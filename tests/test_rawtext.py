"""Raw text end to end: the tokeniser's offsets, sentence splitting, the raw reader's spacing and
offsets, the jsonl and CoNLL-U writers, chunk probabilities against brute force, and the CoNLL 2018
scorer on hand-made misalignments."""
import itertools
import json
import math
import subprocess

import numpy as np
import pytest
import forked_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from structperc.chunks import chunk_spans
from structperc.errors import DataError
from structperc.estimator.core import TaggerCore
from structperc.estimator.text import tag_corpus, text_corpus
from structperc.evaluate.conll18 import Score, align_words, evaluate, segment, spans_score
from structperc.readers import read_corpus
from structperc.readers.raw import paragraph_columns
from structperc.readers.sentences import sentence_ends
from structperc.readers.tokenize import joins_previous, tokenize, word_spans

TEXT_ALPHABET = "abcXYZ019 .,!?'’-:;()\"$@/\t"


# ---------------------------------------------------------------------------------------- tokeniser
@settings(max_examples=200)
@given(st.text(alphabet=TEXT_ALPHABET, max_size=60))
def test_word_spans_cover_every_non_space_character_once_in_order(text):
    spans = word_spans(text)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    assert all(s.start < s.end and not text[s.start:s.end].isspace() for s in spans)
    assert "".join(text[s.start:s.end] for s in spans) == "".join(text.split())
    # nothing but whitespace lies between two words
    gaps = [text[a.end:b.start] for a, b in zip(spans, spans[1:])]
    assert all(gap.strip() == "" for gap in gaps)


# the words a run of letters or a letter-run and a mark may be taken for (``tokenize.word_bounds``)
PIECES = ["cannot", "CanNot", "gonna", "Wanna", "gotta", "outta", "dunno", "im", "IVE", "alot", "aLOT", "dont",
          "DoesNt", "aint", "thats", "THATS", "Whats", "lets", "heres", "who", "Mr", "Dr", "St", "etc", "Inc", "lbs",
          "lb", "vs", "No", "no", "J", "U", "S", "e", "g", "com", "pdf", "ıve", "İm", "ſhouldnt", "café", "word",
          "a", "I", "s", "nt", "http", "www", "5", "1990", "pm"]
MARKS = ["", "", "", ".", ",", ";", ":", "!", "?", ")", "(", '"', "'", "’", "-", "/", "@", "&", "..", ".,", "#"]


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(MARKS), st.sampled_from(PIECES), st.sampled_from(MARKS),
                          st.sampled_from([" ", " ", "", "  ", "\n", "\t"])), max_size=14))
def test_word_bounds_are_the_token_patterns_matches(parts):
    """The shortcuts of ``word_bounds`` (runs of letters, a run of letters and a mark) give what the
    pattern alone gives, on texts made of the words they must tell apart."""
    from structperc.readers.tokenize import _TOKEN, word_bounds

    text = "".join(before + piece + after + space for before, piece, after, space in parts)
    assert word_bounds(text) == [match.span() for match in _TOKEN.finditer(text)]


def test_word_bounds_are_the_token_patterns_matches_on_ewt(corpus_mirror):
    """The same on every sentence of EWT's training and development text."""
    from structperc.readers.tokenize import _TOKEN, word_bounds

    for name in ("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu"):
        lines = (corpus_mirror / "ud_english_ewt" / name).read_text(encoding="utf-8").splitlines()
        text = "\n".join(line[len("# text = "):] for line in lines if line.startswith("# text = "))
        assert len(text) > 100_000
        assert word_bounds(text) == [match.span() for match in _TOKEN.finditer(text)]


def test_ud_english_tokens_and_multiword_joins():
    text = "I don't think it's U.S.-made, Mr. Smith... gonna e-mail al-Sadr :) Wow!!! at 713-853-3989"
    assert tokenize(text) == ["I", "do", "n't", "think", "it", "'s", "U.S.", "-", "made", ",", "Mr.", "Smith", "...",
                              "gon", "na", "e-mail", "al", "-", "Sadr", ":)", "Wow", "!!!", "at", "713-853-3989"]
    joined = [text[s.start:s.end] for s in word_spans(text) if s.joined]
    assert joined == ["n't", "'s", "na"]
    # a plural's possessive apostrophe joins its noun; a closing quote after an s does not
    assert [s.joined for s in word_spans("the soldiers' camp, 'yes'.")] == [False, False, True, False, False,
                                                                         False, False, False, False]
    assert [s.joined for s in word_spans("Peter Cox' files")] == [False, False, True, False]
    # a clitic after a space is a word of its own, not part of a multiword token
    assert [s.joined for s in word_spans("rock 'n roll 's")] == [False, False, False, False, False]


def test_numbers_ranges_units_and_decades():
    # a range of two numbers is three words; a phone number or a ZIP+4 code is one
    assert tokenize("5-10 days, 1969-1970, 5:00-8:30 pm; call 345-9945, 77415-0027 or 713-853-3989.") == \
        ["5", "-", "10", "days", ",", "1969", "-", "1970", ",", "5:00", "-", "8:30", "pm", ";", "call", "345-9945",
         ",", "77415-0027", "or", "713-853-3989", "."]
    # a unit written against its number is a word of its own, not part of a multiword token; an
    # ordinal's or a plural's ending and an upper-case code stay with the number
    text = "at 5pm, 65k and 35mm on the 21st in the 1990s, 3D at 7:30PM or 10m"
    assert tokenize(text) == ["at", "5", "pm", ",", "65", "k", "and", "35", "mm", "on", "the", "21st", "in", "the",
                              "1990s", ",", "3D", "at", "7:30", "PM", "or", "10", "m"]
    assert not any(s.joined for s in word_spans(text))
    assert tokenize("the 80's and '72, +1 713") == ["the", "80's", "and", "'72", ",", "+1", "713"]


def test_abbreviations_symbols_and_informal_contractions():
    assert tokenize("AT&T and p&l, #audiobooks #1, the .doc file, mailto:a.b@c.com") == \
        ["AT&T", "and", "p&l", ",", "#audiobooks", "#", "1", ",", "the", ".doc", "file", ",", "mailto:a.b@c.com"]
    assert tokenize("in Ft. Worth vs. that, Jr. in charge, ext. 39938 on Wed. 6/14") == \
        ["in", "Ft.", "Worth", "vs.", "that", ",", "Jr.", "in", "charge", ",", "ext.", "39938", "on", "Wed.", "6/14"]
    # a day's abbreviation before a capital may end a sentence: its dot is a word
    assert sentences_of("Come on Sun. Please call.") == ["Come on Sun .", "Please call ."]
    assert tokenize("a counter-attack by neo-Nazis on alt.animals.open-forum") == \
        ["a", "counter-attack", "by", "neo-Nazis", "on", "alt.animals.open-forum"]
    assert tokenize("what...? ok.? ----== end") == ["what", "...", "?", "ok", ".?", "----==", "end"]
    assert tokenize("‘’Yes,’’ he said") == ["‘’", "Yes", ",", "’’", "he", "said"]
    text = "get outta here, I dunno"
    assert tokenize(text) == ["get", "out", "ta", "here", ",", "I", "du", "n", "no"]
    assert [text[s.start:s.end] for s in word_spans(text) if s.joined] == ["ta", "n", "no"]


def test_a_clitic_joins_only_a_word_that_ends_in_a_letter():
    assert joins_previous("n't", "do") and joins_previous("m", "I") and joins_previous("'s", "")
    assert not joins_previous("m", "10") and not joins_previous("n", "'") and not joins_previous("the", "of")


# ---------------------------------------------------------------------------------------- sentences
def sentences_of(text):
    spans = word_spans(text)
    ends = sentence_ends(text, spans)
    return [" ".join(text[s.start:s.end] for s in spans[a:b]) for a, b in zip([0] + ends, ends)]


def test_sentences_split_after_final_punctuation_but_not_inside_a_quote_or_after_a_title():
    assert sentences_of('"Hello," said Mary. She left.') == ['" Hello , " said Mary .', "She left ."]
    assert sentences_of("Mr. Smith came. He sat (on a chair.) Then?! He left... and came back.") == \
        ["Mr. Smith came .", "He sat ( on a chair . )", "Then ?!", "He left ... and came back ."]
    assert sentences_of('He said "Stop." Then he left.') == ['He said " Stop . "', "Then he left ."]
    assert sentences_of("no punctuation at all") == ["no punctuation at all"]
    assert sentences_of("") == []


def test_raw_reader_gives_sentences_spacing_and_line_offsets(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text('"Hello," said Mary. She left.\n\n  Don\'t go.\n', encoding="utf-8")
    corpus = read_corpus(path, format="raw", require_label=False)
    offsets = corpus.sentence_offsets.tolist()
    words = corpus.columns["word"]
    assert [words[a:b] for a, b in zip(offsets, offsets[1:])] == [
        ['"', "Hello", ",", '"', "said", "Mary", "."], ["She", "left", "."], ["Do", "n't", "go", "."]]
    assert list(corpus.columns["space_after"]) == ["0", "0", "0", "1", "1", "0", "1", "1", "0", "1",
                                                   "0", "1", "0", "1"]
    lines = path.read_text(encoding="utf-8").splitlines()
    for word, line, start, end in zip(words, corpus.line_numbers, corpus.columns["start"], corpus.columns["end"]):
        assert lines[line - 1][int(start):int(end)] == word


def test_text_corpus_offsets_index_the_whole_text():
    text = "One two.\r\nThree  four!\n\nFive"
    corpus = text_corpus(text)
    for word, start, end in zip(corpus.columns["word"], corpus.columns["start"], corpus.columns["end"]):
        assert text[int(start):int(end)] == word
    assert corpus.n_sentences == 3


# ---------------------------------------------------------------------------------------- models on raw text
CONLLU = """# text = Cats sleep.
1	Cats	cat	NOUN	NNS	_	2	nsubj	_	_
2	sleep	sleep	VERB	VBP	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

# text = Dogs bark loudly.
1	Dogs	dog	NOUN	NNS	_	2	nsubj	_	_
2	bark	bark	VERB	VBP	_	0	root	_	_
3	loudly	loudly	ADV	RB	_	2	advmod	_	SpaceAfter=No
4	.	.	PUNCT	.	_	2	punct	_	_

"""


@pytest.fixture(scope="module")
def spacing_model(tmp_path_factory):
    """A model trained on CoNLL-U with the pos-ud templates, which read space_after."""
    folder = tmp_path_factory.mktemp("spacing")
    (folder / "train.conllu").write_text(CONLLU * 5, encoding="utf-8")
    tagger = TaggerCore(templates="pos-ud", epochs=5).fit_file(folder / "train.conllu", label="upos")
    path = folder / "model.npz"
    tagger.save(path)
    return path, tagger


def test_a_model_reading_space_after_tags_raw_text(spacing_model):
    _, tagger = spacing_model
    assert tagger.tag("Cats sleep. Dogs bark loudly.") == [
        [("Cats", "NOUN"), ("sleep", "VERB"), (".", "PUNCT")],
        [("Dogs", "NOUN"), ("bark", "VERB"), ("loudly", "ADV"), (".", "PUNCT")]]
    spans = tagger.tag_spans("Cats sleep.")
    assert [(s.start, s.end, s.label, s.score) for s in spans] == [(0, 4, "NOUN", None), (5, 10, "VERB", None),
                                                                  (10, 11, "PUNCT", None)]


def run_tag(model, text, *options):
    # `python -m structperc tag - ...` as a real process, forked from one that imported the command line once
    return forked_cli.run(["tag", "-", "--model", model, *options], input=text, timeout=300)


def test_cli_jsonl_and_conllu_output_of_raw_text(spacing_model):
    model, _ = spacing_model
    done = run_tag(model, "Cats sleep. Dogs bark loudly.\n\nCats sleep.\n", "--output-format", "jsonl")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["line"] for r in records] == [1, 1, 3]
    first = records[1]
    assert first["text"] == "Dogs bark loudly."
    assert [(t["text"], t["start"], t["end"]) for t in first["tokens"]] == [
        ("Dogs", 12, 16), ("bark", 17, 21), ("loudly", 22, 28), (".", 28, 29)]
    assert first["tags"] == ["NOUN", "VERB", "ADV", "PUNCT"]
    assert "spans" not in first  # the labels are no chunk scheme
    done = run_tag(model, "Dogs bark loudly.\n", "--output-format", "conllu")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "# text = Dogs bark loudly.", "1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_", "2\tbark\t_\tVERB\t_\t_\t_\t_\t_\t_",
        "3\tloudly\t_\tADV\t_\t_\t_\t_\t_\tSpaceAfter=No", "4\t.\t_\tPUNCT\t_\t_\t_\t_\t_\t_", ""]
    done = run_tag(model, "Dogs bark.\n", "--output-format", "jsonl", "--format", "conllu")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "raw text" in done.stderr
    # a CoNLL-U line that is not one (no tabs, one word): the error says what to do
    done = run_tag(model, "Dogs\n")
    assert done.returncode == 2 and done.stderr == (
        "structperc: error: <stdin>:1: expected 10 tab-separated CoNLL-U fields, found 1\n")


def test_raw_text_is_read_as_raw_text_whatever_the_output_format(spacing_model, tmp_path):
    """The same raw text, on stdin or in a file, with or without --format raw, gives the same words and
    tags in each output format: the default (a word and its tag a line), tagged, jsonl and conllu."""
    model, _ = spacing_model
    text = "Cats sleep. Dogs bark loudly.\n\nCats sleep.\n"
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    expected = [[("Cats", "NOUN"), ("sleep", "VERB"), (".", "PUNCT")],
                [("Dogs", "NOUN"), ("bark", "VERB"), ("loudly", "ADV"), (".", "PUNCT")],
                [("Cats", "NOUN"), ("sleep", "VERB"), (".", "PUNCT")]]
    for format_given in ([], ["--format", "raw"]):
        for source in ("-", str(tmp_path / "in.txt")):
            outputs = {}
            for output_format in (None, "tagged", "jsonl", "conllu"):
                options = format_given + (["--output-format", output_format] if output_format else [])
                done = forked_cli.run(["tag", source, "--model", model, "--quiet", *options],
                                      input=text if source == "-" else None, timeout=300)
                assert done.returncode == 0, (options, done.stderr)
                outputs[output_format] = done.stdout
            default = [[tuple(line.split()) for line in block.splitlines()]
                       for block in outputs[None].strip().split("\n\n")]
            tagged = [[tuple(token.rsplit("/", 1)) for token in line.split()] for line in outputs["tagged"].splitlines()]
            jsonl = [list(zip([t["text"] for t in r["tokens"]], r["tags"]))
                     for r in map(json.loads, outputs["jsonl"].splitlines())]
            conllu = [[(row.split("\t")[1], row.split("\t")[3]) for row in block.splitlines() if not row.startswith("#")]
                      for block in outputs["conllu"].strip().split("\n\n")]
            assert default == tagged == jsonl == conllu == expected


def test_tag_help_says_what_format_raw_reads():
    done = forked_cli.run(["tag", "--help"], timeout=300)
    text = " ".join(done.stdout.split())
    assert "one sentence a line" not in text.split("--output-format tagged")[0]
    assert "Each line of raw text is a paragraph, split into sentences and words" in text


def test_a_model_that_reads_columns_raw_text_lacks_says_so_and_names_the_fix(tmp_path):
    """A chunker trained on CoNLL columns (word, pos, chunk), given raw text: one line in a user's
    words, naming what raw text lacks and the pipe that gives it, and that pipe works."""
    (tmp_path / "train.txt").write_text(CHUNKS * 3, encoding="utf-8")
    done = forked_cli.run(["train", tmp_path / "train.txt", "--model", tmp_path / "chunks.npz",
                           "--columns", "word,pos,chunk", "--templates", "chunk", "--epochs", "2", "--quiet"], timeout=300)
    assert done.returncode == 0, done.stderr
    for options in ([], ["--format", "raw"], ["--output-format", "jsonl"]):
        done = forked_cli.run(["tag", "-", "--model", tmp_path / "chunks.npz", *options],
                              input="The cat sat on the mat.\n", timeout=300)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "reads pos beside each word, which raw text does not have" in done.stderr, done.stderr
        assert "structperc tag TEXT --model en-ewt-xpos | structperc tag - --model MODEL" in done.stderr
    # the fix as named, with a model of POS tags in the place of en-ewt-xpos
    (tmp_path / "pos.txt").write_text("\n".join(" ".join(line.split()[:2]) for line in (CHUNKS * 3).splitlines())
                                      + "\n", encoding="utf-8")
    done = forked_cli.run(["train", tmp_path / "pos.txt", "--model", tmp_path / "pos.npz",
                           "--templates", "pos", "--epochs", "2", "--quiet"], timeout=300)
    assert done.returncode == 0, done.stderr
    structperc = forked_cli.executable()  # `python -m structperc`, forked with the pipe as its stdout or stdin
    done = subprocess.run(f"{structperc} tag - --model {tmp_path / 'pos.npz'} --format raw -q | "
                          f"{structperc} tag - --model {tmp_path / 'chunks.npz'} -q", shell=True,
                          input="The cat sat on the mat.\n", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line]
    assert [row[0] for row in rows] == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert all(len(row) == 3 and row[2] in ("B-NP", "I-NP", "O") for row in rows)  # word, its POS tag, its chunk


CHUNKS = """The DT B-NP
cat NN I-NP
sat VBD O
on IN O
the DT B-NP
mat NN I-NP
. . O

Dogs NNS B-NP
bark VBP O
. . O

"""


def labelings_allowed_by_bio(n, labels):
    for y in itertools.product(range(len(labels)), repeat=n):
        names = [labels[i] for i in y]
        if all(not name.startswith("I-") or (i > 0 and names[i - 1][2:] == name[2:] and names[i - 1] != "O")
               for i, name in enumerate(names)):
            yield y


def test_chunk_probabilities_are_the_brute_force_marginals_of_the_spans(tmp_path):
    (tmp_path / "train.txt").write_text(CHUNKS * 3, encoding="utf-8")
    tagger = TaggerCore(templates="ner", trainer="crf", epochs=3, constrain="bio").fit_file(
        tmp_path / "train.txt", columns=["word", "tag", "chunk"])
    corpus = text_corpus("The cat sat on the mat.\nDogs bark.")
    names, chunks = tag_corpus(tagger, corpus)
    model = tagger.model_
    encoded = tagger.encode_input(corpus)
    labels = model.labels
    offsets = corpus.sentence_offsets.tolist()
    assert any(chunks)
    for s, (a, b) in enumerate(zip(offsets, offsets[1:])):
        ys = list(labelings_allowed_by_bio(b - a, labels))
        scores = np.array([model.score(encoded, s, np.array(y)) for y in ys])
        probabilities = np.exp(scores - np.logaddexp.reduce(scores))
        for kind, first, last, score in chunks[s]:
            expected = sum(p for y, p in zip(ys, probabilities)
                           if (kind, first - a, last - a) in chunk_spans([labels[i] for i in y]))
            assert score == pytest.approx(expected, abs=1e-9)
    # a perceptron's spans have no score
    perceptron = TaggerCore(templates="ner", epochs=3, constrain="bio").fit_file(
        tmp_path / "train.txt", columns=["word", "tag", "chunk"])
    _, chunks = tag_corpus(perceptron, corpus)
    assert any(chunks) and all(score is None for spans in chunks for *_, score in spans)


def test_the_continuation_table_is_chunk_spans_reading_of_two_labels():
    """c continues p's chunk exactly where chunk_spans reads p, c as one chunk of two tokens (IOB and
    IOBES labels, two types)."""
    from structperc.estimator.text import continuation_table

    labels = ("O",) + tuple(f"{tag}-{kind}" for tag in "BIES" for kind in ("PER", "LOC"))
    continues = continuation_table(labels)
    for p, previous in enumerate(labels):
        for c, label in enumerate(labels):
            one_chunk = any(first == 0 and last == 1 for _, first, last in chunk_spans([previous, label]))
            assert continues[p, c] == one_chunk, (previous, label)


def test_a_crfs_chunk_probabilities_from_its_chain_are_those_of_forcing_each_chunk(corpus_mirror, tmp_path):
    """The first-order CRF's chunk probabilities (one forward-backward a sentence) against forcing each
    chunk's labels, on Dutch NER: a model trained on 300 sentences, 200 sentences tagged."""
    from structperc.estimator.text import chain_chunk_probabilities, forced_chunk_probabilities, sentence_chunks

    def first(name, n):
        blocks = (corpus_mirror / "conll2002_nl" / name).read_text(encoding="latin-1").split("\n\n")
        path = tmp_path / name
        path.write_text("\n\n".join(b for b in blocks[1:n + 1]) + "\n\n", encoding="utf-8")
        return path

    tagger = TaggerCore(templates="ner", trainer="crf", epochs=2, constrain="bio").fit_file(
        first("ned.train", 300), columns=["word", "tag", "ner"], label="ner")
    corpus = read_corpus(first("ned.testa", 200), format="conll", columns=["word", "tag", "ner"], label="ner")
    ids, _, encoded = tagger.predict_ids(corpus)
    chunks = sentence_chunks(tagger.model_.label_names(ids).tolist(), encoded.sentence_offsets.tolist())
    assert sum(map(len, chunks)) > 50
    chained = chain_chunk_probabilities(tagger.model_, encoded, ids, chunks)
    forced = forced_chunk_probabilities(tagger.model_, encoded, ids, chunks)
    assert [len(c) for c in chained] == [len(c) for c in chunks]
    np.testing.assert_allclose(np.concatenate([c for c in chained if c]), np.concatenate([f for f in forced if f]),
                               rtol=0, atol=1e-9)
    assert 0.0 < min(min(c) for c in chained if c) < 0.9  # not all sure: the two agree where it matters


# ---------------------------------------------------------------------------------------- CoNLL 2018 scorer
def plain(*forms):
    """A sentence of plain tokens (form, upos), the xpos 'X'."""
    return [(form, [(form, upos, "X")]) for form, upos in forms]


def test_identical_segmentations_score_one_everywhere():
    sentences = [plain(("Hi", "INTJ"), ("!", "PUNCT")), [("Don't", [("Do", "AUX", "X"), ("n't", "PART", "X")])]]
    scores = evaluate(segment(sentences), segment(sentences))
    assert {name: score.f1 for name, score in scores.items()} == {name: 1.0 for name in scores}


def test_a_multiword_token_split_into_two_tokens_keeps_its_words():
    # gold: I | don't (= do + n't); system: I | do | n't. Characters "Idon't".
    gold = segment([[("I", [("I", "PRON", "X")]), ("don't", [("do", "AUX", "X"), ("n't", "PART", "X")])]])
    system = segment([plain(("I", "PRON"), ("do", "AUX"), ("n't", "ADV"))])
    scores = evaluate(gold, system)
    assert scores["tokens"] == Score(2, 3, 1)  # P 1/3, R 1/2
    assert scores["tokens"].f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert scores["words"] == Score(3, 3, 3)  # aligned by the LCS of the forms
    assert scores["upos"].correct == 2 and scores["upos"].aligned == 3


def test_a_missed_split_and_a_wrong_merge_are_misses():
    # gold: "a-b" one token; system: a | - | b. Then gold has two sentences, the system one.
    gold = segment([plain(("a-b", "X")), plain(("c", "X"), (".", "PUNCT"))])
    system = segment([plain(("a", "X"), ("-", "X"), ("b", "X"), ("c", "X"), (".", "PUNCT"))])
    scores = evaluate(gold, system)
    assert scores["tokens"] == Score(3, 5, 2)
    assert scores["words"] == Score(3, 5, 2)
    assert scores["sentences"] == Score(2, 1, 0)
    assert scores["upos"].f1 == pytest.approx(2 * 2 / (3 + 5))


def test_whitespace_inside_tokens_is_ignored_and_other_text_differences_are_an_error():
    gold = segment([plain(("New York", "PROPN"))])
    system = segment([plain(("New", "PROPN"), ("York", "PROPN"))])
    assert evaluate(gold, system)["words"] == Score(1, 2, 0)
    with pytest.raises(DataError, match="differ at non-whitespace character 3"):
        evaluate(gold, segment([plain(("NewJork", "PROPN"))]))


@settings(max_examples=100)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=12), st.lists(st.integers(1, 4), min_size=1, max_size=12))
def test_spans_score_counts_the_spans_both_have(gold_lengths, system_lengths):
    def spans(lengths):
        ends = list(itertools.accumulate(lengths))
        return [(e - n, e) for n, e in zip(lengths, ends)]

    gold, system = spans(gold_lengths), spans(system_lengths)
    assert spans_score(gold, system).correct == len(set(gold) & set(system))


def test_align_words_outside_multiword_tokens_is_span_equality():
    words = segment([plain(("ab", "X"), ("c", "X"), ("de", "X"))]).words
    other = segment([plain(("a", "X"), ("bc", "X"), ("de", "X"))]).words
    assert [(g.form, s.form) for g, s in align_words(words, other)] == [("de", "de")]


def test_paragraph_columns_of_an_empty_line_are_empty():
    values, ends = paragraph_columns("   ")
    assert values == [[], [], [], []] and ends == []
    assert math.isfinite(0.0)


# ---------------------------------------------------------------------------------------- CoNLL-U multiword tokens
def test_cli_conllu_output_writes_a_multiword_token_for_each_split_clitic(spacing_model):
    model, _ = spacing_model
    done = run_tag(model, "She didn't like it. I can't, you won't.\n", "--output-format", "conllu")
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines() if line and not line.startswith("#")]
    assert [(row[0], row[1], row[9]) for row in rows] == [
        ("1", "She", "_"), ("2-3", "didn't", "_"), ("2", "did", "_"), ("3", "n't", "_"), ("4", "like", "_"),
        ("5", "it", "SpaceAfter=No"), ("6", ".", "_"),
        ("1", "I", "_"), ("2-3", "can't", "SpaceAfter=No"), ("2", "ca", "_"), ("3", "n't", "_"), ("4", ",", "_"),
        ("5", "you", "_"), ("6-7", "won't", "SpaceAfter=No"), ("6", "wo", "_"), ("7", "n't", "_"), ("8", ".", "_")]
    assert all(row[2:9] == ["_"] * 7 for row in rows if "-" in row[0])


def ud_sentences(path):
    """(text, words, {first word: last word} of the multiword tokens, 0-based) of each sentence of a
    CoNLL-U file, read here with no code of structperc."""
    sentences = []
    text, words, ranges = None, [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# text = "):
            text = line[len("# text = "):]
        elif not line:
            if words:
                sentences.append((text, words, ranges))
            text, words, ranges = None, [], {}
        elif not line.startswith("#"):
            fields = line.split("\t")
            if "-" in fields[0]:
                first, last = fields[0].split("-")
                ranges[int(first) - 1] = (int(last) - 1, fields[1], "SpaceAfter=No" in fields[9])
            elif "." not in fields[0]:
                words.append(fields[1])
    return sentences


def test_conllu_output_of_ewt_test_raw_text_has_ewts_own_multiword_tokens(corpus_mirror, tmp_path):
    import io

    from structperc.readers.text_writer import write_conllu

    gold = ud_sentences(corpus_mirror / "ud_english_ewt" / "en_ewt-ud-test.conllu")
    raw = tmp_path / "test.txt"
    raw.write_text("".join(text + "\n" for text, _, _ in gold), encoding="utf-8")
    corpus = read_corpus(raw, format="raw", require_label=False)
    out = io.StringIO()
    write_conllu(out, corpus, ["X"] * corpus.n_tokens, "upos")
    # the writer's sentences joined back into the input's lines (the reader may split a line in two);
    # a token that ends a written sentence has no SpaceAfter to compare (None)
    by_line = {}
    for (words, ranges), start in zip(ud_sentences_of_text(out.getvalue()), corpus.sentence_offsets[:-1]):
        line_words, line_ranges = by_line.setdefault(int(corpus.line_numbers[start]), ([], {}))
        line_ranges.update({first + len(line_words): (last + len(line_words), surface,
                                                      None if last == len(words) - 1 else space)
                            for first, (last, surface, space) in ranges.items()})
        line_words.extend(words)
    same_words = [(by_line[n][1], theirs) for n, (_, words, theirs) in enumerate(gold, 1)
                  if by_line.get(n, ([], {}))[0] == words]
    assert len(same_words) > 0.9 * len(gold)
    assert sum(len(theirs) for _, theirs in same_words) > 300
    # where the words are EWT's, so are the multiword tokens: the same words, the same surface text,
    # and SpaceAfter=No on the same ranges
    assert [{k: v[:2] for k, v in ours.items()} for ours, _ in same_words] == \
        [{k: v[:2] for k, v in theirs.items()} for _, theirs in same_words]
    assert [(k, ours[k]) for ours, theirs in same_words for k in ours if ours[k][2] not in (None, theirs[k][2])] == []


def ud_sentences_of_text(text):
    """(words, multiword tokens) of each sentence of CoNLL-U text, as ``ud_sentences``."""
    sentences = []
    words, ranges = [], {}
    for line in text.splitlines():
        if not line:
            if words:
                sentences.append((words, ranges))
            words, ranges = [], {}
        elif not line.startswith("#"):
            fields = line.split("\t")
            if "-" in fields[0]:
                first, last = fields[0].split("-")
                ranges[int(first) - 1] = (int(last) - 1, fields[1], "SpaceAfter=No" in fields[9])
            else:
                words.append(fields[1])
    return sentences


@pytest.mark.parametrize("format, text, raw", [
    ("conll", "The cat sat on the mat.\n", True), ("conll", "The cat sat on the mat .\n", True),
    ("conll", 'He said "stop."\n', True), ("conll", "the DT B-NP\n", False), ("conll", ". . O\n", False),
    ("conll", "the DT B-NP O\n", False), ("conll", "-DOCSTART- -X- O\n\nHe PRP B-NP\n", False),
    ("conll", "# # B-NP\n", False), ("conllu", "Dogs bark.\n", True), ("conllu", "# text = Dogs bark.\n", False),
    ("conllu", "1\tDogs\t_\tNOUN\t_\t_\t_\t_\t_\t_\n", False), ("ptb", "The cat sat.\n", False), ("conll", "", False),
])
def test_raw_text_is_told_from_a_token_line_of_the_models_format(tmp_path, format, text, raw):
    from structperc.readers.registry import looks_like_raw_text

    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    assert looks_like_raw_text(path, format, ["word", "pos", "chunk"]) is raw
