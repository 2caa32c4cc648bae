"""CoNLL-U label specs joining columns: ``upos+feats``."""
import pytest

from structperc.errors import ConfigError
from structperc.readers import read_corpus
from structperc.estimator.tagger import Tagger

TEXT = """# text = The dogs run
1	The	the	DET	DT	Definite=Def|PronType=Art	2	det	_	_
2	dogs	dog	NOUN	NNS	Number=Plur	3	nsubj	_	_
3	run	run	VERB	VBP	_	0	root	_	SpaceAfter=No

1	Dogs	dog	NOUN	NNS	Number=Plur	0	root	_	_

"""


def test_joined_label_is_upos_bar_feats(tmp_path):
    path = tmp_path / "a.conllu"
    path.write_text(TEXT, encoding="utf-8")
    corpus = read_corpus(path, label="upos+feats")
    assert corpus.label == "upos+feats"
    assert corpus.columns["upos+feats"] == ["DET|Definite=Def|PronType=Art", "NOUN|Number=Plur", "VERB|_",
                                            "NOUN|Number=Plur"]
    assert corpus.columns["upos"] == ["DET", "NOUN", "VERB", "NOUN"]
    # the column list a model records reads the file again
    again = read_corpus(path, label="upos+feats", columns=list(corpus.columns))
    assert again.columns["upos+feats"] == corpus.columns["upos+feats"]


def test_unknown_column_in_a_joined_label_names_it(tmp_path):
    path = tmp_path / "a.conllu"
    path.write_text(TEXT, encoding="utf-8")
    with pytest.raises(ConfigError, match="'morph' is not a CoNLL-U column"):
        read_corpus(path, label="upos+morph")


def test_tagger_trained_on_a_joined_label_tags_its_file(tmp_path):
    path = tmp_path / "a.conllu"
    path.write_text(TEXT, encoding="utf-8")
    tagger = Tagger(templates=["w[0]", "bias"], epochs=5).fit_file(path, label="upos+feats")
    tagger.save(tmp_path / "m.npz")
    loaded = Tagger.load(tmp_path / "m.npz")
    assert loaded.evaluate_file(path)["accuracy"] == 100.0
