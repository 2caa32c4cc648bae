"""``Tagger.tag`` of a list of words works for every named model, as docs/models.md shows it: the
columns a list of words lacks are filled as for raw text (space_after from the spacing the words would
have, pos from the model's column tagger), so the list gives the tags of the text it would be. The
named models are stand-ins: the shipped recipes over slices of the mirror (``standins.py``)."""
import pytest

from standins import write_standins
from structperc.readers.raw import paragraph_columns, words_columns

TEXTS = ["Mary left early.", "She didn't like it (at all), did she?", "The U.S. deficit rose 5% in 1990."]


@pytest.fixture(scope="module")
def named(corpus_mirror, tmp_path_factory):
    folder = tmp_path_factory.mktemp("standins")
    _, recipes = write_standins(corpus_mirror, folder, train_sentences=300)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRUCTPERC_RECIPES", str(recipes))
        patch.setenv("STRUCTPERC_MIRROR", str(folder / "standin-mirror"))
        patch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        patch.setenv("STRUCTPERC_CORPORA", str(folder / "corpora"))
        import warnings

        import structperc
        from structperc.models.recipes import SHIPPED

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the research-use notice of the Dutch model
            yield {recipe.name: structperc.load_model(recipe.name) for recipe in SHIPPED}


@pytest.mark.parametrize("name", ["en-ewt-upos", "en-ewt-xpos", "en-ewt-upos-feats", "en-conll2000-chunk", "en-np",
                                  "nl-conll2002-ner"])
def test_every_named_model_tags_a_list_of_words_as_the_text_it_would_be(named, name):
    tagger = named[name]
    for text in TEXTS:
        (sentence,) = tagger.tag(text)  # one sentence each
        words = [word for word, _ in sentence]
        assert tagger.tag(words) == sentence
    assert [word for word, _ in tagger.tag(["Mary", "left", "."])] == ["Mary", "left", "."]


def test_words_are_spaced_as_the_tokeniser_would_have_split_them():
    for text in TEXTS:
        columns, _ = paragraph_columns(text)
        assert words_columns(columns[0]) == columns
