"""`tag` with a model of another task or language warns on stderr: a Dutch NER model on CoNLL-2000
English chunking data knows few of the words and none of the POS tags. On its own kind of input it
stays silent."""

import pytest
import forked_cli

from structperc import Tagger
from structperc.features.familiarity import unknown_shares
from structperc.readers import read_corpus


def first_sentences(source, target, n):
    blocks = [b for b in source.read_text(encoding="utf-8").split("\n\n") if b.strip() and "-DOCSTART-" not in b]
    target.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def dutch(corpus_mirror, tmp_path_factory):
    folder = tmp_path_factory.mktemp("familiarity")
    train = first_sentences(corpus_mirror / "conll2002_nl" / "ned.train", folder / "ned.train", 300)
    model = folder / "ned.npz"
    Tagger(templates="ner", epochs=1).fit_file(train, columns=["word", "pos", "ner"]).save(model)
    return folder, model


def tag(model, path, out):
    # `python -m structperc tag ...` as a real process, forked from one that imported the command line once
    return forked_cli.run(["tag", path, "--model", model, "--output", out, "--quiet"], timeout=600)


def test_a_model_of_another_language_and_task_warns(dutch, corpus_mirror):
    folder, model = dutch
    english = first_sentences(corpus_mirror / "conll2000" / "test.txt", folder / "en.txt", 100)
    done = tag(model, english, folder / "en.tagged")
    assert done.returncode == 0, done.stderr
    assert f"{english}: warning: the model knows little of this input" in done.stderr
    assert "word" in done.stderr and "pos 100%" in done.stderr
    assert (folder / "en.tagged").is_file()  # a warning: the tagging goes on


def test_the_model_on_its_own_kind_of_input_is_silent(dutch, corpus_mirror):
    folder, model = dutch
    dutch_test = first_sentences(corpus_mirror / "conll2002_nl" / "ned.testa", folder / "nl.txt", 100)
    done = tag(model, dutch_test, folder / "nl.tagged")
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_unknown_shares_count_unseen_values(tmp_path):
    train = tmp_path / "a.txt"
    train.write_text("the DT O\ncat NN O\n\n" * 30, encoding="utf-8")
    tagger = Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=1).fit_file(train, columns=["word", "pos", "chunk"])
    other = tmp_path / "b.txt"
    other.write_text("the DT O\ndog NN O\nran VBD O\nfar RB O\n\n" * 20, encoding="utf-8")
    shares = unknown_shares(tagger.model_.encoder, read_corpus(other, columns=["word", "pos", "chunk"]))
    assert shares == {"word": pytest.approx(0.75), "pos": pytest.approx(0.5)}
