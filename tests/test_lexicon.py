"""Lexicon fields NAME[k] and NAME.pK[k] against a naive per-token lookup; storage in the model."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from structperc.features.encode import FeatureEncoder
from structperc.errors import ConfigError, InputFormatError
from structperc.features.lexicon import NONE, Lexicon, read_lexicons
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.features.templates import PRESETS, parse_template

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["the", "The", "cat", "dog", "ran", "fast", "Paris", "new", "York", "New", "city", "."]


def random_sentences(n, seed):
    rng = np.random.default_rng(seed)
    return [[WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(1, 9)))] for _ in range(n)]


def naive_value(entries, word, lower, prefix=None):
    key = word.lower() if lower else word
    if key not in entries:
        return NONE
    return entries[key] if prefix is None else entries[key][:prefix]


def naive_field(sentences, entries, lower, prefix, offset):
    out = []
    for words in sentences:
        for i in range(len(words)):
            j = i + offset
            if j < 0:
                out.append("<s>")
            elif j >= len(words):
                out.append("</s>")
            else:
                out.append(naive_value(entries, words[j], lower, prefix))
    return out


def field_strings(encoder, corpus, template):
    """The value of a one-part template at every token, decoded through the feature index."""
    encoded = encoder.transform(corpus, with_labels=False)
    out = []
    for t in range(encoded.n_tokens):
        ids = encoded.feature_ids[encoded.feature_offsets[t]:encoded.feature_offsets[t + 1]]
        shown = [encoder.describe_feature(int(f)) for f in ids]
        mine = [s.split("=", 1)[1] for s in shown if s.startswith(template + "=")]
        out.append(mine[0] if mine else None)
    return out


def write_paths(path, entries):
    path.write_text("".join(f"{v}\t{w}\t{i + 1}\n" for i, (w, v) in enumerate(entries.items())), encoding="utf-8")


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("field,prefix", [("clusters", None), ("clusters.p2", 2), ("clusters.p4", 4)])
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_lexicon_field_matches_naive_lookup(tmp_path, lower, field, prefix, offset):
    rng = np.random.default_rng(7)
    entries = {w: "".join(rng.choice(["0", "1"], int(rng.integers(1, 7)))) for w in WORDS if rng.random() < 0.7}
    write_paths(tmp_path / "paths.txt", entries)
    lexicons = read_lexicons([f"clusters={tmp_path / 'paths.txt'}"], lower=lower)
    read_entries = {}
    for w, v in entries.items():
        read_entries.setdefault(w.lower() if lower else w, v)
    template = f"{field}[{offset}]"
    train = random_sentences(200, 1)  # every word, every value: nothing is unseen in training
    test = random_sentences(40, 2) + [["Unlisted", "words", "here"]]
    encoder = FeatureEncoder([template], lexicons=lexicons)
    encoder.fit_transform(as_corpus(train), ["x"] * sum(map(len, train)))
    got = field_strings(encoder, as_corpus(test), template)
    expected = naive_field(test, read_entries, lower, prefix, offset)
    shown = {"<s>": "<s>", "</s>": "</s>"}
    # values never seen in training (Unlisted -> <none> is seen when some word is not listed) are <unk>
    seen = set(naive_field(train, read_entries, lower, prefix, offset))
    expected = [shown.get(v, v) if v in seen else "<unk>" for v in expected]
    assert got == expected


def test_two_column_file_gazetteer_and_errors(tmp_path):
    (tmp_path / "gaz.txt").write_text("Paris\tLOC\nNew York\tLOC\nnew\tADJ\nNew York city\tGPE\n", encoding="utf-8")
    lex = read_lexicons([f"gaz={tmp_path / 'gaz.txt'}"])
    words = ["in", "New", "York", "city", "new", "York", "Paris", "New", "York"]
    offsets = np.array([0, 6, 9])
    corpus = as_corpus([words[:6], words[6:]], [["x"] * 6, ["x"] * 3])
    encoder = FeatureEncoder(["gaz[0]"], lexicons=lex)
    encoder.fit_transform(corpus, corpus.labels())
    assert field_strings(encoder, corpus, "gaz[0]") == [
        NONE, "B-GPE", "I-GPE", "I-GPE", "ADJ", NONE, "LOC", "B-LOC", "I-LOC"]
    assert offsets[-1] == len(words)
    (tmp_path / "bad.txt").write_text("a\tb\nc\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="bad.txt:2"):
        read_lexicons([f"bad={tmp_path / 'bad.txt'}"])
    with pytest.raises(ConfigError, match="NAME=FILE"):
        read_lexicons(["nofile"])


def test_preset_without_its_lexicon_is_a_clear_error():
    assert "clusters.p20[1]" in PRESETS["pos-clusters"] and "clusters.p4[-1]" in PRESETS["chunk-clusters"]
    assert {"clusters.p4[-2]", "clusters.p6[2]"} <= set(PRESETS["pos-clusters"])
    assert "clusters.p4[-2]" not in PRESETS["chunk-clusters"]
    assert parse_template("clusters.p6[-1]").parts == (("clusters.p6", -1),)
    corpus = as_corpus([["a", "b"]], [["X", "Y"]])
    with pytest.raises(ConfigError, match="lexicons=clusters=FILE"):
        Tagger(templates="pos-clusters").fit(corpus)


def test_model_tags_without_the_lexicon_file(tmp_path):
    entries = {w: f"{i:04b}" for i, w in enumerate(WORDS)}
    write_paths(tmp_path / "paths.txt", entries)
    train = random_sentences(100, 3)
    labels = [[entries[w][:1] for w in s] for s in train]  # the label is the cluster path's first bit
    tagger = Tagger(templates=["clusters.p1[0]", "bias"], lexicons={"clusters": str(tmp_path / "paths.txt")},
                    epochs=3).fit(train, labels)
    tagger.save(tmp_path / "m.npz")
    (tmp_path / "paths.txt").unlink()
    loaded = Tagger.load(tmp_path / "m.npz")
    test = [["Paris", "new", "cat"]]
    assert loaded.predict(test) == tagger.predict(test) == [[entries[w][:1] for w in test[0]]]


def test_cli_lexicon_options(tmp_path):
    entries = {w.lower(): f"{i % 4:02b}" for i, w in enumerate(WORDS)}
    write_paths(tmp_path / "paths.txt", entries)
    sentences = random_sentences(80, 5)
    with open(tmp_path / "train.txt", "w", encoding="utf-8") as out:
        for s in sentences:
            out.write("".join(f"{w} {entries[w.lower()]}\n" for w in s) + "\n")
    (tmp_path / "t.tpl").write_text("clusters[0]\nbias\n", encoding="utf-8")
    run = [sys.executable, "-m", "structperc"]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    subprocess.run(run + ["train", "train.txt", "--model", "m.npz", "--columns", "word,label", "--templates",
                          "t.tpl", "--lexicon", "clusters=paths.txt", "--lexicon-lower", "--epochs", "3", "-q"],
                   check=True, env=env, cwd=tmp_path)
    tag = run + ["tag", "train.txt", "--model", "m.npz"]
    before = subprocess.run(tag, check=True, env=env, cwd=tmp_path, capture_output=True, text=True).stdout
    (tmp_path / "paths.txt").unlink()
    after = subprocess.run(tag, check=True, env=env, cwd=tmp_path, capture_output=True, text=True).stdout
    assert before == after
    predicted = [line.split()[-1] for line in after.splitlines() if line.strip()]
    gold = [entries[w.lower()] for s in sentences for w in s]
    assert np.mean(np.array(predicted) == np.array(gold)) > 0.95
    missing = subprocess.run(run + ["train", "train.txt", "--model", "x.npz", "--columns", "word,label",
                                    "--templates", "pos-clusters", "-q"],
                             env=env, cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode == 2 and "--lexicon clusters=FILE" in missing.stderr


def test_lexicon_storage_round_trip():
    lex = Lexicon({"a": "01", "B": "1"}, phrases={("new", "york"): "LOC"})
    back = Lexicon.from_array(lex.to_array(), lower=False)
    assert back.entries == lex.entries and back.phrases == lex.phrases
