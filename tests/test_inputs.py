"""The input adapter chosen at the door (``structperc.estimator.inputs``): which adapter each input
takes, the refusals of an input of the other kind than a fitted model's, and what each adapter gives
the estimator (labels, sentence offsets, columns, the recorded "input" metadata)."""
import numpy as np
import pytest

from structperc.corpus import as_corpus
from structperc.errors import ConfigError, DataError
from structperc.estimator.core import TaggerCore
from structperc.estimator.inputs import ColumnsInput, DictInput, open_input
from structperc.features.dicts import AttributeEncoder
from structperc.features.encode import FeatureEncoder

DICTS = [[{"w": "a"}, {"w": "b"}], [], [{"w": "c"}]]
TOKENS = [["a", "b"], [], ["c"]]
LABELS = [["X", "Y"], [], ["X"]]


def test_each_input_takes_its_adapter_and_an_adapter_is_kept():
    assert isinstance(open_input(DICTS, LABELS), DictInput)
    assert isinstance(open_input(TOKENS, LABELS), ColumnsInput)
    corpus = as_corpus(TOKENS, LABELS)
    source = open_input(corpus)
    assert isinstance(source, ColumnsInput) and source.corpus is corpus
    assert open_input(source) is source
    # the first token decides, after empty sentences
    assert isinstance(open_input([[], [{"w": "a"}]], [[], ["X"]]), DictInput)


@pytest.mark.parametrize("X", [DICTS, TOKENS])
def test_both_adapters_give_the_same_labels_and_offsets(X):
    source = open_input(X, LABELS)
    assert list(source.labels) == ["X", "Y", "X"]
    assert np.asarray(source.sentence_offsets).tolist() == [0, 2, 2, 3]
    assert open_input(X).labels is None


def test_the_recorded_input_names_the_kind_and_keeps_the_reader_options():
    assert open_input(DICTS, LABELS, read={"encoding": "utf-8"}).read == {"encoding": "utf-8", "format": "dicts"}
    read = open_input([[("a", "DT")]], [["X"]], columns=["word", "pos"]).read
    assert read["columns"] == ["word", "pos", "label"] and read["label"] == "label"
    assert open_input(DICTS).columns is None


def test_a_fitted_models_kind_is_kept_at_the_door():
    dicts_model, template_model = AttributeEncoder(), FeatureEncoder("pos")
    with pytest.raises(ConfigError, match="trained on token columns with templates, not on feature dicts"):
        open_input(DICTS, encoder=template_model)
    with pytest.raises(ConfigError, match="give every token as a dict"):
        open_input(TOKENS, encoder=dicts_model)
    with pytest.raises(ConfigError, match="trained on feature dicts and has no templates"):
        open_input(TOKENS, LABELS, encoder=dicts_model, training=True)
    # an adapter made earlier (fit_file's) is held to the model's kind as well
    with pytest.raises(ConfigError, match="not on feature dicts"):
        open_input(open_input(DICTS), encoder=template_model)
    with pytest.raises(ConfigError, match="give every token as a dict"):
        open_input(open_input(TOKENS), encoder=dicts_model)
    # sentences without tokens hold no token of the wrong kind: the dict model takes them
    assert isinstance(open_input(open_input([[], []]), encoder=dicts_model), DictInput)
    assert isinstance(open_input([[], []], encoder=dicts_model), DictInput)
    assert isinstance(open_input(TOKENS, encoder=template_model), ColumnsInput)


def test_training_checks_are_the_adapters_own():
    plain = TaggerCore().check_params()
    open_input(DICTS, LABELS).check_training(plain)
    with pytest.raises(ConfigError, match="hash_bits applies to token columns with templates"):
        open_input(DICTS, LABELS).check_training(TaggerCore(hash_bits=10).check_params())
    with pytest.raises(DataError, match="give y"):
        open_input(DICTS).check_training(plain)
    with pytest.raises(DataError, match="no label column"):
        open_input(TOKENS).check_training(plain)
    corpus = as_corpus([[("a", "DT")]], [["X"]], columns=["word", "pos"])
    open_input(corpus, columns=["word", "pos"]).check_training(plain)
    with pytest.raises(ConfigError, match="this Corpus has its own: word, pos, label"):
        open_input(corpus, columns=["form", "tag"]).check_training(plain)
