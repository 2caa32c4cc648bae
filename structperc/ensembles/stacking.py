"""Stacking (Wolpert 1992; for dependency parsers, Nivre & McDonald 2008): a tagger that reads a base
model's predicted label as one more input column.

The base model B is any single model file. The stacked model is trained on the training corpus plus
the column ``stack`` (``templates.STACK_COLUMN``): B's label of each token. On the training sentences
these labels must look like B's labels on unseen text, so they come from K-fold jackknifing
(``jackknife.jackknife``): for each fold, a copy of B's configuration (its Tagger parameters,
``Tagger.load(B).get_params()``) is trained on the other folds and tags the held-out fold. On any
other input (the dev corpus, tagging, evaluation) B itself tags.

Templates read the column as any other: ``stack[0]``, ``stack[-1]|stack[0]``, ``stack[0]|w[0]``.
Without templates of its own, the stacked model takes B's templates plus ``STACK_TEMPLATES``
(``stack[-1]``, ``stack[0]``, ``stack[1]``, ``stack[0]|w[0]``); the presets ``chunk-stack`` and
``pos-stack`` are ``chunk`` and ``pos`` plus them.

The stacked model file is an ensemble file (``structperc.ensembles.vote``) of B and the stacked model, so
tagging needs only that file: B tags the input, then the stacked model.
"""
import dataclasses
from pathlib import Path

import numpy as np

from structperc.ensembles.base import EnsembleTagger
from structperc.errors import ConfigError, DataError
from structperc.corpus import index_ranges
from structperc.estimator.core import TaggerCore
from structperc.features.templates import STACK_COLUMN, STACK_TEMPLATES, load_templates
from structperc.utils.npz import is_ensemble_file

DEFAULT_FOLDS = 5


def with_column(corpus, name, values):
    """A Corpus with the columns of ``corpus`` plus ``name`` holding ``values`` (flat over the tokens)."""
    if name in corpus.columns:
        raise ConfigError(f"{corpus.path}: the input already has a column named {name!r}, the column of the "
                          f"base model's labels in stacking")
    if len(values) != corpus.n_tokens:
        raise DataError(f"{len(values)} values for {corpus.n_tokens} tokens")
    return dataclasses.replace(corpus, columns={**corpus.columns, name: list(values)})


def load_base(base):
    """The base model: a fitted Tagger, or the Tagger of a model file; a single model, not an ensemble."""
    if isinstance(base, (str, Path)) and is_ensemble_file(base):
        raise ConfigError(f"stacking needs a single base model; {base} is an ensemble model")
    tagger = TaggerCore.load(base) if isinstance(base, (str, Path)) else base
    if isinstance(tagger, EnsembleTagger):
        raise ConfigError(f"stacking needs a single base model; {base} is an ensemble ({tagger.kind}) model")
    if not hasattr(tagger.model_.encoder, "template_strings_"):
        raise ConfigError("stacking needs a base model trained on token columns with templates")
    return tagger


def default_templates(base):
    """The templates of a stacked model over ``base`` (a Tagger or a model file): the base model's
    templates, then those of ``STACK_TEMPLATES`` it does not have."""
    own = list(load_base(base).model_.encoder.template_strings_)
    return own + [t for t in map(str, load_templates(STACK_TEMPLATES)) if t not in own]


def jackknife_labels(corpus, tagger_params, folds=DEFAULT_FOLDS, seed=0, progress=None):
    """The labels (flat list over the tokens of ``corpus``) that ``Tagger(**tagger_params)`` trained
    without the fold of each sentence gives it (``jackknife.jackknife``, folds from ``seed``)."""
    from structperc.nbest.jackknife import jackknife

    parts = jackknife(corpus, tagger_params, lambda tagger, held: tagger.predict_corpus(held)[0], folds, seed,
                      progress)
    labels = np.empty(corpus.n_tokens, dtype=object)
    offsets = corpus.sentence_offsets
    for held, predicted in parts:
        labels[index_ranges(offsets[held], offsets[held + 1])] = predicted
    return labels.tolist()


def stack_fit(tagger, base, corpus, folds=None, seed=0, dev=None, progress=None, callback=None,
              input_metadata=None, client=None, fold_progress=None):
    """Fit ``tagger`` (its templates must read the column ``stack``) on ``corpus`` plus the
    jackknifed labels of ``base`` (a Tagger or a model file) and return the StackedTagger of both.

    folds : the jackknife's K (default ``DEFAULT_FOLDS``); seed : its fold split.
    dev : a dev Corpus (``base`` tags it); progress, callback, input_metadata, client : as in
        ``Tagger.fit``; fold_progress : callable(fold, folds, seconds) after each jackknife fold.
    """
    base = load_base(base)
    folds = DEFAULT_FOLDS if folds is None else folds
    if tagger.templates is None or not any(STACK_COLUMN in t.fields for t in load_templates(tagger.templates)):
        raise ConfigError(f"the templates never read the column {STACK_COLUMN!r} of stacking: add e.g. "
                          f"{STACK_COLUMN}[0], or leave the templates to their default")
    tagger.trainer_options()
    tagger.check_engine(client)
    column = jackknife_labels(corpus, base.get_params(), folds, seed, fold_progress)
    stacked_dev = None if dev is None else with_column(dev, STACK_COLUMN, base.predict_corpus(dev)[0])
    tagger.fit(with_column(corpus, STACK_COLUMN, column), dev=stacked_dev, progress=progress, callback=callback,
               input_metadata=input_metadata, client=client)
    read = tagger.model_.metadata["input"]
    read["columns"] = [c for c in read["columns"] if c != STACK_COLUMN]  # the input files have no such column
    info = {"method": "stacking", "column": STACK_COLUMN, "folds": int(folds), "seed": int(seed),
            "base_trainer": base.trainer, "base_templates": list(base.model_.encoder.template_strings_)}
    if corpus.label is not None:
        gold = np.asarray(corpus.columns[corpus.label], dtype=object)
        info["jackknife_accuracy"] = float(100.0 * np.mean(np.asarray(column, dtype=object) == gold))
    return StackedTagger([base, tagger], info)


def stack_fit_file(tagger, path, base, folds=None, seed=0, dev=None, progress=None, callback=None, client=None,
                   fold_progress=None, **reader_options):
    """``stack_fit`` on a corpus file (and a dev file), read with ``reader_options`` as ``Tagger.fit_file``
    reads them; they are recorded in the stacked model."""
    from structperc.estimator.files import read_training_files

    tagger.trainer_options()  # bad options fail before the corpus is read
    tagger.check_engine(client)
    base = load_base(base)
    corpus, dev_corpus, reader_options = read_training_files(path, dev, **reader_options)
    return stack_fit(tagger, base, corpus, folds, seed, dev_corpus, progress, callback, reader_options, client,
                     fold_progress)


class StackedTagger(EnsembleTagger):
    """A base Tagger and a Tagger stacked on it: the input gets the column ``stack`` of the base
    model's labels, then the stacked model tags it. Its parameters, ``model_`` (reader options,
    labels) and everything else are the stacked model's.

    members : [base, stacked]
    """

    kind = "stack"

    def __init__(self, members, info=None):
        if len(members) != 2:
            raise ConfigError(f"a stacked model has two members (base, stacked), got {len(members)}")
        super().__init__(members, info, lead=1)
        self.base = self.members[0]

    def input_view(self, corpus):
        return with_column(corpus, STACK_COLUMN, self.base.predict_corpus(corpus)[0])
