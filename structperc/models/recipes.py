"""Recipes: everything that makes a named model, fixed in one record.

A recipe names its corpus by its ``data fetch`` name and the sha256 of every file it reads, how the
files are read (format, columns, label), the templates and any lexicon resources, the learning rule
with its options, the epochs and the seed. Building a recipe twice gives the same bytes
(``build.py``). ``input_columns`` names the models that give a column raw text lacks (a chunker's
``pos``), ``licence`` the terms under which the model may be used, which are the training data's.

More recipes can be given in a JSON file named by ``$STRUCTPERC_RECIPES``: a list of objects with
the fields of ``Recipe`` (``manifest`` may be a corpus manifest of their own).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from structperc.errors import ConfigError, ModelNameError
from structperc.models.cache import checked_name

EWT_FILES = {
    "en_ewt-ud-train.conllu": "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b",
    "en_ewt-ud-dev.conllu": "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
    "en_ewt-ud-test.conllu": "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
}
CONLL2000_FILES = {
    "train.txt": "82033cd7a72b209923a98007793e8f9de3abc1c8b79d646c50648eb949b87cea",
    "test.txt": "73b7b1e565fa75a1e22fe52ecdf41b6624d6f59dacb591d44252bf4d692b1628",
}
CONLL2002_NL_FILES = {
    "ned.train": "0a419dcb356b62c8cff38515675550b3d5dbea9f45a1c4956328dbd5cc7fcdbc",
    "ned.testa": "51259d4bfe52462f211d3d0b67173a7ecbfa296e199f6c6bd0895f4c78155057",
    "ned.testb": "2aa748edb82e6f9c4d82e57a4bed69ded18cfa4803122c75070335d513517488",
}
EWT_LICENCE = "CC BY-SA 4.0"
CONLL2000_LICENCE = "research use (the CoNLL-2000 shared task's WSJ text)"
CONLL2002_LICENCE = "research use only (the CoNLL-2002 shared task's data)"


@dataclass(frozen=True)
class Recipe:
    """One named model. Files are paths inside the corpus folder; ``files`` maps each to its sha256.

    name, task : the model's name and what it labels; corpus : a ``data fetch`` name
    train, test : files; dev : a file or None (when given, the best dev epoch is kept)
    format, columns, label, only_types : how the files are read (``read_corpus``)
    templates, constrain, trainer, epochs, seed, options : the training run (``Tagger``'s parameters;
        options holds the learning rule's)
    lexicons : NAME -> path of a lexicon file inside the corpus folder, or None
    input_columns : column -> the name of the model that gives it for raw text
    licence : the terms of use of the model; research_only : say so on build and load
    metric : "accuracy" or "f1", the test score recorded at build
    build_seconds : how long a build took where the recipe was written (shown before a first build)
    manifest : None (the package's corpus manifest) or a manifest dict of the recipe's own
    """
    name: str
    task: str
    corpus: str
    files: dict
    train: str
    test: str
    dev: str | None = None
    format: str | None = None
    columns: list | None = None
    label: str | None = None
    only_types: list | None = None
    templates: str | list | None = None
    constrain: str | None = None
    trainer: str = "perceptron"
    epochs: int | None = None
    seed: int = 0
    options: dict = field(default_factory=dict)
    lexicons: dict | None = None
    input_columns: dict = field(default_factory=dict)
    licence: str = ""
    research_only: bool = False
    metric: str = "accuracy"
    build_seconds: float | None = None
    manifest: dict | None = None

    def record(self):
        """The recipe as a JSON-able dict (stored in the model it builds)."""
        return asdict(self)

    def making(self):
        """``record()`` less what does not change the model it builds (``build_seconds``): a model built
        from a recipe that differs from this in any of these fields is built again."""
        return {key: value for key, value in self.record().items() if key != "build_seconds"}

    @property
    def labels_description(self):
        return self.label if not self.only_types else f"{self.label} ({', '.join(self.only_types)})"


def _ewt(name, label, task, order, build_seconds=None, tag_dict=None):
    options = {"order": order} if tag_dict is None else {"order": order, "tag_dict": tag_dict}
    return Recipe(name=name, task=task, corpus="ud_english_ewt", files=EWT_FILES, train="en_ewt-ud-train.conllu",
                  dev="en_ewt-ud-dev.conllu", test="en_ewt-ud-test.conllu", format="conllu", label=label,
                  templates="pos-ud", epochs=10, seed=0, options=options, licence=EWT_LICENCE,
                  build_seconds=build_seconds)


# Chosen on EWT dev (UPOS, gold tokens): order 2 over order 1 and over pos-rich; for UPOS, the tag dictionary
# whose three seeds' mean dev accuracy is highest (experiments/ewt_tag_dict.py), which also cuts the label
# triples that the second-order decoder scores per token. From dev's raw text, order 2 also led for XPOS,
# but its build scores L^3 label triples per token (50 XPOS labels), so XPOS, and UPOS+FEATS (321 labels),
# stay at order 1. Brown clusters of unlabeled_en raised UPOS dev accuracy too, but take long to build and
# unlabeled_en has no manifest entry (no sha256 to name it by): not used.
SHIPPED = [
    _ewt("en-ewt-upos", "upos", "universal part-of-speech tags (UPOS)", 2, tag_dict=500),
    _ewt("en-ewt-xpos", "xpos", "Penn Treebank part-of-speech tags (XPOS)", 1),
    _ewt("en-ewt-upos-feats", "upos+feats", "UPOS and morphological features (UPOS+FEATS)", 1),
    Recipe(name="en-conll2000-chunk", task="phrase chunks (CoNLL-2000: NP, VP, PP, ...)", corpus="conll2000",
           files=CONLL2000_FILES, train="train.txt", test="test.txt", format="conll",
           columns=["word", "pos", "chunk"], label="chunk", templates="chunk", constrain="bio", epochs=10,
           input_columns={"pos": "en-ewt-xpos"}, licence=CONLL2000_LICENCE, metric="f1"),
    Recipe(name="en-np", task="base noun phrases (CoNLL-2000 NP chunks)", corpus="conll2000",
           files=CONLL2000_FILES, train="train.txt", test="test.txt", format="conll",
           columns=["word", "pos", "chunk"], label="chunk", only_types=["NP"], templates="chunk", constrain="bio",
           epochs=10, input_columns={"pos": "en-ewt-xpos"}, licence=CONLL2000_LICENCE, metric="f1"),
    # the words alone (the POS column is read as "tag", which the ner preset does not read): raw
    # Dutch text has no POS tags; crf, so that its entities come with their probability
    Recipe(name="nl-conll2002-ner", task="named entities, Dutch (PER, LOC, ORG, MISC)", corpus="conll2002_nl",
           files=CONLL2002_NL_FILES, train="ned.train", dev="ned.testa", test="ned.testb", format="conll",
           columns=["word", "tag", "ner"], label="ner", templates="ner", constrain="bio", trainer="crf", epochs=10,
           licence=CONLL2002_LICENCE, research_only=True, metric="f1"),
]


def _extra_recipes():
    path = os.environ.get("STRUCTPERC_RECIPES")
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle)
        recipes = [Recipe(**entry) for entry in entries]
        for recipe in recipes:
            checked_name(recipe.name)
        return recipes
    except ModelNameError as error:
        raise ModelNameError(f"{path}: a recipe of $STRUCTPERC_RECIPES: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the recipes of $STRUCTPERC_RECIPES: {error.strerror}") from None
    except (json.JSONDecodeError, TypeError) as error:
        raise ConfigError(f"{path}: not a list of recipes ($STRUCTPERC_RECIPES): {error}") from None


def all_recipes():
    """name -> Recipe: the shipped ones, then those of ``$STRUCTPERC_RECIPES``."""
    return {recipe.name: recipe for recipe in SHIPPED + _extra_recipes()}


RECIPES = {recipe.name: recipe for recipe in SHIPPED}


def recipe_of(name):
    """The Recipe called ``name``; ModelNameError (a ValueError) listing the known names otherwise."""
    recipes = all_recipes()
    if name not in recipes:
        raise ModelNameError(f"unknown model {name!r}; known models: {', '.join(recipes)}")
    return recipes[name]
