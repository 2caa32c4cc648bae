"""What a tagger learns from or tags, chosen once, at the door: feature dicts (``DictInput``) or token
columns (``ColumnsInput``: token lists, a ``Corpus``, or a corpus read from a file by ``fit_file``).

``open_input`` picks the adapter; from then on the estimator asks it, never the data, for what
depends on the kind: its checks, its labels, the encoder it takes and how it is encoded (fitted,
extended for continued training, or transformed for prediction). Each adapter hands its encoder
the one shape that encoder reads.
"""
import numpy as np

from structperc.corpus import Corpus, as_corpus, flat_labels
from structperc.errors import ConfigError, DataError
from structperc.features.dicts import AttributeEncoder
from structperc.features.encode import FeatureEncoder
from structperc.features.lexicon import read_lexicons
from structperc.model.forcing import drop_missing_label

ON_TEMPLATES = "this model was trained on token columns with templates, not on feature dicts"


def open_input(X, y=None, columns=None, read=None, encoder=None, training=False):
    """The adapter of X: an adapter is kept, feature dicts take ``DictInput``, anything else
    (token lists, a Corpus) ``ColumnsInput``.

    y : None, or one label per token of each sentence; columns : names of the token values of
        token lists; read : how X was read (recorded in the model's "input" metadata).
    encoder : None (a new model), or the fitted model's encoder, whose kind X must take:
        ConfigError otherwise. training : X continues training that model (no dicts are made of
        empty token lists for a model of feature dicts)."""
    adapter = isinstance(X, (DictInput, ColumnsInput))
    if adapter:
        dicts = isinstance(X, DictInput)
    else:
        dicts = not isinstance(X, Corpus) and next((isinstance(token, dict) for sentence in X for token in sentence),
                                                   False)  # the first token is a dict
    if encoder is not None:
        on_dicts = isinstance(encoder, AttributeEncoder)
        if dicts and not on_dicts:
            raise ConfigError(ON_TEMPLATES)
        if on_dicts and not dicts:
            if training:
                raise ConfigError("this model was trained on feature dicts and has no templates")
            sentences = np.diff(X.sentence_offsets) if adapter else [len(s) for s in X]
            if any(sentences):
                raise ConfigError("this model was trained on feature dicts: give every token as a dict")
            return DictInput([[] for _ in sentences], y, read)
    if adapter:
        return X
    if dicts:
        return DictInput(X, y, read)
    return ColumnsInput(as_corpus(X, y, columns), read, given_columns=columns if isinstance(X, Corpus) else None)


class DictInput:
    """Sentences of feature dicts (scikit-learn-crfsuite's input), encoded by ``AttributeEncoder``."""

    columns = None  # no token columns: no templates to choose
    release = False  # the caller's own dicts

    def __init__(self, X, y=None, read=None):
        self.X = X
        self.y = y
        self.read = {**(read or {}), "format": "dicts"}
        self.sentence_offsets = np.cumsum([0] + [len(s) for s in X])

    @property
    def labels(self):
        """The gold labels flat over the tokens, or None without y (DataError when y does not match X)."""
        if "_labels" not in self.__dict__:
            self._labels = flat_labels(self.X, self.y) if self.y is not None else None
        return self._labels

    def check_training(self, settings):
        """ConfigError for a parameter of ``settings`` (``settings.Settings``) that applies to token
        columns with templates; DataError without labels."""
        if settings.tag_dict:
            raise ConfigError("tag_dict needs templates over a word column, not feature dicts")
        for name in ("templates", "rare_threshold", "lexicons", "lexicon_lower", "columns", "hash_bits"):
            if getattr(settings, name) != settings.defaults[name]:
                raise ConfigError(f"{name} applies to token columns with templates, not to feature dicts")
        flat_labels(self.X, self.y)

    def new_encoder(self, settings, templates=None):
        return AttributeEncoder(settings.min_count)

    def fit_transform(self, encoder, threads=1):
        return encoder.fit_transform(self.X, self.labels)

    def extend(self, encoder, settings, templates=None):
        """Encode for continued training, adding the new attributes and labels to ``encoder``."""
        return encoder.extend(self.X, flat_labels(self.X, self.y))

    def transform(self, encoder, view=None):
        return encoder.transform(self.X, self.labels)


class ColumnsInput:
    """A Corpus of token columns (from token lists, a Corpus, or a file), encoded by
    ``FeatureEncoder`` with templates.

    read : how the corpus was read (beside what ``read_corpus`` recorded in it: ``Corpus.read_options``);
    release : the corpus is no one else's (``fit_file``): the encoder empties it as it goes.
    given_columns : the tagger's ``columns`` given with a Corpus (checked against the Corpus's own at
    training)."""

    def __init__(self, corpus, read=None, release=False, given_columns=None):
        self.corpus = corpus
        self.columns = list(corpus.columns)
        self.sentence_offsets = corpus.sentence_offsets
        self.labels = corpus.columns[corpus.label] if corpus.label is not None else None
        self.read = {**(corpus.read_options or {}), **(read or {}), "format": corpus.format,
                     "columns": list(corpus.columns), "label": corpus.label}
        self.release = release
        self.given_columns = given_columns

    def check_training(self, settings):
        """ConfigError for ``columns`` given with a Corpus whose columns are others (``columns``
        names the values of token lists; a Corpus has its own); DataError without labels."""
        given, corpus = self.given_columns, self.corpus
        if given is not None:
            own = list(corpus.columns)
            if list(given) not in (own, [name for name in own if name != corpus.label]):
                raise ConfigError(f"columns {', '.join(given)} names the values of token lists; this Corpus "
                                  f"has its own: {', '.join(own)}")
        if self.labels is None:
            raise DataError("training data has no label column")

    def new_encoder(self, settings, templates):
        """The template encoder of the chosen ``templates`` and the settings' lexicons and hashing."""
        lexicons = read_lexicons(settings.lexicons, settings.lexicon_lower)
        return FeatureEncoder(templates, settings.min_count, settings.rare_threshold, hash_bits=settings.hash_bits,
                              lexicons=lexicons)

    def fit_transform(self, encoder, threads=1):
        """Learn ``encoder``'s index from the corpus and encode it (threads: encoding threads); the
        corpus is let go."""
        corpus, self.corpus = self.corpus, None
        return encoder.fit_transform(corpus, release=self.release, threads=threads)

    def extend(self, encoder, settings, fitted_templates):
        """Encode for continued training: the templates (the settings', or for None the model's
        ``fitted_templates``) must be the model's; new labels are appended to ``encoder``'s, and new
        features added (``FeatureEncoder.extend``)."""
        from structperc.features.templates import load_templates

        corpus = self.corpus
        templates = settings.templates if settings.templates is not None else fitted_templates
        wanted = [str(t) for t in load_templates(templates, corpus.columns)]
        if wanted != encoder.template_strings_:
            raise ConfigError(f"templates {', '.join(wanted)} differ from the model's: "
                              f"{', '.join(encoder.template_strings_)}")
        if self.labels is None:
            raise DataError("training data has no label column")
        labels, missing = self.labels, settings.missing_label
        known = set(encoder.labels_)
        if missing is not None:
            known.add(missing)
        encoder.labels_ = encoder.labels_ + sorted({label for label in labels if label not in known})
        if missing is not None and missing in labels:
            # the missing symbol takes the id after the labels for the encoding, then becomes -1
            encoder.labels_.append(missing)
        encoded = encoder.extend(corpus)
        if missing is not None:
            drop_missing_label(encoder, encoded, missing)
        return encoded

    def transform(self, encoder, view=None):
        """Encode with ``encoder``'s index, the labels too when the corpus has them. view : None, or
        the Corpus the model's templates read for this one (``TaggerCore.input_view``)."""
        corpus = self.corpus if view is None else view(self.corpus)
        return encoder.transform(corpus, with_labels=self.labels is not None)
