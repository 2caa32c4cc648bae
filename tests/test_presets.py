"""The templates and constraint chosen from the data (``features.presets``), optional templates, and
training with the defaults on each kind of input."""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.chunks import SCHEMES, keeps_scheme
from structperc.features.presets import choose_structure
from structperc.features.templates import PRESETS, load_templates, parse_template

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "corpora"
NER = ["B-PER", "I-PER", "B-LOC", "I-LOC", "O"]


def offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def keeps_bio(labels, sentence_offsets):
    """``keeps_scheme`` for "bio" on label strings."""
    distinct = sorted(set(labels))
    return keeps_scheme([distinct.index(label) for label in labels], distinct, sentence_offsets, "bio")


def naive_keeps_bio(sentences):
    for sentence in sentences:
        previous = None
        for label in sentence:
            if label.startswith("I-") and previous not in (f"B-{label[2:]}", f"I-{label[2:]}"):
                return False
            previous = label
    return True


def test_keeps_bio_matches_a_naive_check_on_random_sequences():
    rng = random.Random(0)
    outcomes = set()
    for _ in range(300):
        sentences = [[rng.choice(NER) for _ in range(rng.randint(1, 5))] for _ in range(rng.randint(1, 4))]
        flat = [label for s in sentences for label in s]
        expected = naive_keeps_bio(sentences)
        assert keeps_bio(flat, offsets([len(s) for s in sentences])) == expected
        outcomes.add(expected)
    assert outcomes == {True, False}


def naive_keeps(sentences, scheme):
    """Each sentence read left to right, tracking the type of the chunk left open (IOBES) or the
    previous label (IOB2, IOB1)."""
    for sentence in sentences:
        previous, open_type = "O", None
        for label in sentence:
            tag, kind = label[:2], label[2:]
            continues = previous in (f"B-{kind}", f"I-{kind}")
            if scheme == "bio" and tag == "I-" and not continues:
                return False
            if scheme == "iob1" and tag == "B-" and not continues:
                return False
            inside_ok = open_type == kind if tag in ("I-", "E-") else open_type is None
            if scheme == "bioes" and not inside_ok:
                return False
            open_type = kind if tag in ("B-", "I-") else None
            previous = label
    return True


@pytest.mark.parametrize("scheme", SCHEMES)
def test_keeps_scheme_matches_a_naive_reading_on_random_sequences(scheme):
    rng = random.Random(1)
    labels = NER + ["E-PER", "S-PER", "E-LOC", "S-LOC"]
    outcomes = set()
    for _ in range(2000):
        sentences = [[rng.choice(labels) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 3))]
        ids = [labels.index(label) for s in sentences for label in s]
        expected = naive_keeps(sentences, scheme)
        assert keeps_scheme(ids, labels, offsets([len(s) for s in sentences]), scheme) == expected, sentences
        outcomes.add(expected)
    assert outcomes == {True, False}


def test_a_sentence_start_resets_the_previous_label():
    # B-PER ends sentence 0; I-PER opening sentence 1 starts a chunk (IOB1), not a continuation
    assert not keeps_bio(["B-PER", "I-PER"], offsets([1, 1]))
    assert keeps_bio(["B-PER", "I-PER"], offsets([2]))


@pytest.mark.parametrize("columns, labels, lengths, templates, constrain", [
    (["word", "pos", "label"], ["B-PER", "I-PER", "O", "B-LOC"], [3, 1], "ner", "bio"),
    (["word", "label"], ["B-PER", "I-PER", "O", "B-LOC"], [3, 1], "ner", "bio"),
    (["word", "pos", "label"], ["B-NP", "I-NP", "B-VP", "O"], [4], "chunk", "bio"),
    (["word", "label"], ["B-NP", "I-NP", "B-VP", "O"], [4], "ner", "bio"),  # no POS for chunk: word features
    (["word", "pos", "label"], ["I-PER", "I-PER", "O", "I-LOC"], [3, 1], "ner", "iob1"),
    (["word", "pos", "label"], ["I-PER", "B-PER", "O", "I-LOC"], [3, 1], "ner", "iob1"),
    (["word", "pos", "label"], ["B-PER", "E-PER", "S-LOC", "O"], [3, 1], "ner", "bioes"),
    (["word", "pos", "label"], ["B-PER", "I-PER", "O", "S-LOC"], [3, 1], "ner", "bio"),  # B-PER left open
    (["word", "pos", "label"], ["O", "I-PER", "B-LOC", "O"], [4], "ner", "none"),  # B-LOC after I-PER
    (["word", "label"], ["DET", "NOUN", "VERB"], [3], "pos-rich", "none"),
    (["word", "upos", "space_after", "label"], ["DET", "NOUN", "VERB"], [3], "pos-ud", "none"),
    (None, ["B-PER", "I-PER", "O"], [3], None, "none"),  # feature dicts: no templates, no constraint
])
def test_choices(columns, labels, lengths, templates, constrain):
    chosen = choose_structure(None, None, columns, labels, offsets(lengths))
    assert (chosen.templates, chosen.constrain) == (templates, constrain)
    assert chosen.reason != "given"


def test_given_values_are_kept():
    chosen = choose_structure("pos", "none", ["word", "label"], ["B-PER", "I-PER"], offsets([2]))
    assert chosen == ("pos", "none", "given")


def test_the_missing_label_is_not_a_label_and_stands_for_any():
    labels = ["B-PER", "?", "I-PER", "O"]
    chosen = choose_structure(None, None, ["word", "label"], labels, offsets([4]), missing_label="?")
    assert (chosen.templates, chosen.constrain) == ("ner", "bio")
    assert choose_structure(None, None, ["word", "label"], labels, offsets([4])).templates == "pos-rich"


def test_optional_templates_are_dropped_only_when_their_column_is_missing():
    template = parse_template("pos[-1]|pos[0]?")
    assert template.optional and str(template) == "pos[-1]|pos[0]?"
    spec = ["w[0]", "pos[0]?", "lower[1]|pos[1]?", "shape[0]?"]
    assert [str(t) for t in load_templates(spec, ["word", "label"])] == ["word[0]", "shape[0]?"]
    assert len(load_templates(spec, ["word", "pos", "label"])) == 4
    assert len(load_templates(spec)) == 4
    with pytest.raises(ConfigError):
        parse_template("bias?")


def test_ner_preset_trains_with_and_without_pos():
    sentences = [[("Jan", "N"), ("woont", "V"), ("in", "Prep"), ("Gent", "N")]] * 3
    labels = [["B-PER", "O", "O", "B-LOC"]] * 3
    with_pos = Tagger(templates="ner", epochs=2).fit(sentences, labels)
    words_only = Tagger(templates="ner", epochs=2).fit([[w for w, _ in s] for s in sentences], labels)
    assert any("pos" in t for t in with_pos.model_.encoder.template_strings_)
    assert not any("pos" in t for t in words_only.model_.encoder.template_strings_)
    assert words_only.predict([["Jan", "woont", "in", "Gent"]]) == [labels[0]]
    assert set(PRESETS["ner"]) >= {"pair:cap[0]", "pos[0]?"}


# ------------------------------------------------------------------ defaults on real corpora

def corpus_file(name, file):
    path = MIRROR / name / file
    if not path.is_file():
        pytest.skip(f"{path} not in the mirror")
    return path


def head_sentences(path, n, keep=None):
    """The first n sentences of a CoNLL file as text, each line's fields cut to the indices ``keep``."""
    out, count = [], 0
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            fields = line.split()
            if not fields:
                count += 1
                out.append("")
                if count == n:
                    break
                continue
            if line.startswith("#"):
                continue
            out.append(" ".join(fields if keep is None else [fields[k] for k in keep]))
    return "\n".join(out) + "\n"


def read_sentences(path, n, skip=0):
    """(token lists of (word, pos), label lists) of sentences skip..skip+n of a CoNLL file."""
    text = head_sentences(path, skip + n)
    blocks = [b for b in text.split("\n\n") if b.strip()][skip:]
    rows = [[line.split() for line in b.splitlines() if not line.startswith("-DOCSTART-")] for b in blocks]
    rows = [r for r in rows if r]
    return [[(t[0], t[1]) for t in r] for r in rows], [[t[-1] for t in r] for r in rows]


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "structperc", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["two-columns", "dutch-ner", "conll2000", "conllu"])
def test_cli_trains_with_defaults_on_each_kind_of_file(tmp_path, kind):
    """`structperc train FILE` with no option: the choice is printed and recorded, and scores well."""
    if kind in ("two-columns", "dutch-ner"):
        source = corpus_file("conll2002_nl", "ned.train")
        keep = [0, 2] if kind == "two-columns" else None
        train, test = head_sentences(source, 1500, keep), head_sentences(source, 2000, keep).split("\n\n", 1500)[-1]
        extra, expect, metric, floor = [], "templates ner, constraint bio", "f1", 55.0
    elif kind == "conll2000":
        source = corpus_file("conll2000", "train.txt")
        train, test = head_sentences(source, 1500), head_sentences(source, 2000).split("\n\n", 1500)[-1]
        extra, expect, metric, floor = [], "templates chunk, constraint bio", "f1", 88.0
    else:
        source = corpus_file("ud_english_ewt", "en_ewt-ud-train.conllu")
        text = source.read_text(encoding="utf-8").split("\n\n")
        train, test = "\n\n".join(text[:1500]) + "\n\n", "\n\n".join(text[1500:2000]) + "\n\n"
        extra, expect, metric, floor = ["--label", "upos"], "templates pos-ud, constraint none", "accuracy", 88.0
    suffix = ".conllu" if kind == "conllu" else ".txt"
    (tmp_path / f"train{suffix}").write_text(train, encoding="utf-8")
    (tmp_path / f"test{suffix}").write_text(test, encoding="utf-8")
    model = tmp_path / "m.npz"
    trained = run_cli("train", tmp_path / f"train{suffix}", "-m", model, "--epochs", 5, *extra)
    lines = trained.stderr.splitlines()
    first_epoch = next(i for i, line in enumerate(lines) if line.startswith("epoch"))
    assert any(line.startswith(expect) for line in lines[:first_epoch])  # printed before the first epoch's line
    info = run_cli("info", model, "--top", 1).stdout
    assert f"{expect} (chosen from the data:" in info
    result = json.loads(run_cli("eval", tmp_path / f"test{suffix}", "-m", model, "--json").stdout)
    assert result[metric] > floor


@pytest.mark.slow
def test_python_defaults_on_token_lists_and_feature_dicts():
    source = corpus_file("conll2002_nl", "ned.train")
    X, y = read_sentences(source, 1500)
    X_test, y_test = read_sentences(source, 500, skip=1500)
    tagger = Tagger(epochs=5).fit([[w for w, _ in s] for s in X], y)
    assert (tagger.templates, tagger.constrain) == (None, None)  # the parameters stay as given
    assert (tagger.templates_, tagger.constrain_) == ("ner", "bio")
    assert tagger.evaluate([[w for w, _ in s] for s in X_test], y_test)["f1"] > 55.0
    assert Tagger(epochs=5).fit(X, y).evaluate(X_test, y_test)["f1"] > 55.0  # (word, pos) tuples

    def dicts(sentence):
        return [{"w": w.lower(), "title": w.istitle(), "suffix": w[-3:], "pos": p,
                 "prev": sentence[i - 1][0].lower() if i else "<s>"} for i, (w, p) in enumerate(sentence)]

    tagger = Tagger(epochs=5).fit([dicts(s) for s in X], y)
    # feature dicts are sklearn-crfsuite's input, which has no constraint (features.presets)
    assert (tagger.templates_, tagger.constrain_) == (None, "none")
    assert tagger.evaluate([dicts(s) for s in X_test], y_test)["f1"] > 45.0


def bio_to(scheme, labels):
    """A BIO sentence in IOBES or IOB1."""
    out = []
    for i, label in enumerate(labels):
        previous = labels[i - 1] if i else "O"
        following = labels[i + 1] if i + 1 < len(labels) else "O"
        tag, kind = label[:2], label[2:]
        if scheme == "bioes" and tag in ("B-", "I-") and following != "I-" + kind:
            tag = "S-" if tag == "B-" else "E-"
        if scheme == "iob1" and tag == "B-" and previous[2:] != kind:
            tag = "I-"
        out.append(tag + kind if label != "O" else "O")
    return out


@pytest.mark.parametrize("scheme", ["bioes", "iob1"])
def test_a_model_chosen_with_a_scheme_decodes_only_sequences_that_keep_it(scheme):
    rng = random.Random(2)
    words = [f"w{i}" for i in range(30)]
    X, y = [], []
    for _ in range(80):
        tokens, labels = [], []
        while len(tokens) < 8:
            n = rng.randint(0, 3)  # 0: one token outside any chunk
            tokens += [rng.choice(words) for _ in range(max(n, 1))]
            kind = rng.choice(["PER", "LOC"])
            labels += ["O"] if n == 0 else ["B-" + kind] + ["I-" + kind] * (n - 1)
        X.append(tokens)
        y.append(bio_to(scheme, labels))
    test = [[rng.choice(words) for _ in range(rng.randint(1, 9))] for _ in range(300)]
    tagger = Tagger(templates=["w[0]", "w[-1]", "w[1]"], epochs=1).fit(X, y)
    assert tagger.constrain_ == scheme
    labels = list(tagger.labels_)

    def kept(predicted):
        ids = [labels.index(label) for s in predicted for label in s]
        return keeps_scheme(ids, labels, offsets([len(s) for s in predicted]), scheme)

    assert kept(tagger.predict(test))
    # the same model unconstrained breaks the scheme somewhere: the check above can fail
    assert not kept(Tagger(templates=["w[0]", "w[-1]", "w[1]"], epochs=1, constrain="none").fit(X, y).predict(test))


def test_epochs_default_to_the_rules_own_and_are_checked():
    from structperc.train import TRAINERS

    X = [["a", "b", "c"], ["b", "c"], ["c", "a"]]
    y = [["B-X", "I-X", "O"], ["O", "B-Y"], ["B-Y", "O"]]
    assert TRAINERS["perceptron"].epochs != TRAINERS["crf"].epochs  # so that the test tells them apart
    for trainer in ("perceptron", "crf", "hinge"):
        rule = TRAINERS[trainer]
        tagger = Tagger(templates=["w[0]"], trainer=trainer).fit(X, y)
        # the rule's own count, or the epoch its stopping rule ends the run (tests/test_stopping.py)
        stops = [e for e in range(1, rule.epochs) if rule.stopping and rule.stopping(tagger.history_[:e])]
        assert len(tagger.history_) == (stops[0] if stops else rule.epochs)
        assert tagger.epochs is None  # the parameter stays as given
    assert len(Tagger(templates=["w[0]"], epochs=3).fit(X, y).history_) == 3
    for bad in (-1, 2.5, "3", True, [3]):
        with pytest.raises(ConfigError, match="epochs must be an integer >= 0"):
            Tagger(templates=["w[0]"], epochs=bad).fit(X, y)
