"""``Tagger``: the scikit-learn style estimator over encoder, model and learning rules.

It owns the pipeline on files as well: ``fit_file`` reads a corpus and records how (format, columns,
label, encoding, ...) in the model, so that ``read``, ``tag_file`` and ``evaluate_file`` read later
inputs the same way.
"""
import inspect
import time

import numpy as np

from .chunks import is_bio
from .corpus import Corpus
from .encode import FIRST_ID, FeatureEncoder
from .errors import ConfigError
from .evaluate import evaluate_labels
from .lexicon import read_lexicons
from .model import LinearChainModel

# Options of the learning rules; each rule declares the ones it takes in ``params``. None (the
# default) leaves the rule's own default, and only the options that are set reach the rule.
TRAINER_OPTIONS = ("average", "l2", "eta0", "batch_size", "cost", "average_start", "calibration_sentences")


def _as_corpus(X, y=None, columns=None):
    """A Corpus from a Corpus, or from lists of tokens (str, or tuples of column values)."""
    if isinstance(X, Corpus):
        return X
    sentences = list(X)
    first = next((tok for sent in sentences for tok in sent), "")
    width = 1 if isinstance(first, str) else len(first)
    names = list(columns) if columns else (["word"] if width == 1 else ["word", "pos"] + [f"col{i}" for i in range(2, width)])
    if len(names) != width:
        raise ValueError(f"columns {names!r} do not match tokens of {width} values")
    values = {name: [] for name in names}
    lengths = []
    for sent in sentences:
        lengths.append(len(sent))
        for tok in sent:
            row = (tok,) if isinstance(tok, str) else tok
            for name, v in zip(names, row):
                values[name].append(v)
    label = None
    if y is not None:
        label = "label"
        values[label] = [l for labels in y for l in labels]
        if len(values[label]) != sum(lengths):
            raise ValueError("y must give one label per token")
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Corpus(
        columns=values, sentence_offsets=offsets, label=label, path="<memory>",
        line_numbers=np.zeros(int(offsets[-1]), dtype=np.int64),
    )


def build_tag_dict(word_ids, labels, n_words, n_labels, threshold):
    """Allowed labels per word id: words seen at least ``threshold`` times may only take the labels
    they were seen with; every other word id may take all labels. Returns CSR (offsets, labels)."""
    counts = np.bincount(word_ids, minlength=n_words)
    seen = np.zeros((n_words, n_labels), dtype=bool)
    seen[word_ids, labels] = True
    allowed = np.where((counts >= threshold)[:, None], seen, True)
    offsets = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(allowed.sum(axis=1), out=offsets[1:])
    return offsets, np.nonzero(allowed)[1].astype(np.int64)


class Tagger:
    """A sequence tagger trained on-line by one of ``structperc.train.TRAINERS``.

    Parameters
    ----------
    templates : preset ("chunk", "pos"), template file, or list of template strings
    trainer : "perceptron" (or any other registered learning rule)
    epochs : passes over the training data
    average : average the weights (perceptron; averaged SGD for the log-linear rules); None: the
        rule's default
    min_count : feature count cut-off (Collins' cc)
    rare_threshold : training count below which a word is rare (``@rare`` templates)
    constrain : None or "bio" (I-X only after B-X or I-X), in training and decoding
    order : 1 (bigram labels) or 2 (trigram labels)
    tag_dict : None, or k: words seen >= k times may only take the tags seen with them
    seed : seed of the per-epoch shuffles
    columns : names of the token values when fitting on plain lists
    l2, eta0, batch_size, cost, average_start, calibration_sentences : options of the learning rules
        that declare them (``structperc.train.TRAINERS[trainer].params``); None: the rule's default.
        Setting one that the chosen rule does not take is a ConfigError.
    lexicons : None, a list of ``NAME=FILE`` strings, or a dict name -> file or ``lexicon.Lexicon``:
        the lexicons of the template fields ``NAME[k]`` and ``NAME.pK[k]``
    lexicon_lower : look words up in the lexicons lower-cased

    Attributes
    ----------
    model_ : LinearChainModel
    labels_ : list of str
    history_ : list of EpochRecord
    n_iter_ : the epoch whose weights were kept (best on dev, or the last)
    """

    def __init__(self, templates="chunk", trainer="perceptron", epochs=10, average=None, min_count=0,
                 rare_threshold=5, constrain=None, order=1, tag_dict=None, seed=0, columns=None,
                 l2=None, eta0=None, batch_size=None, cost=None, average_start=None, calibration_sentences=None,
                 lexicons=None, lexicon_lower=False):
        self.templates = templates
        self.trainer = trainer
        self.epochs = epochs
        self.average = average
        self.min_count = min_count
        self.rare_threshold = rare_threshold
        self.constrain = constrain
        self.order = order
        self.tag_dict = tag_dict
        self.seed = seed
        self.columns = columns
        self.l2 = l2
        self.eta0 = eta0
        self.batch_size = batch_size
        self.cost = cost
        self.average_start = average_start
        self.calibration_sentences = calibration_sentences
        self.lexicons = lexicons
        self.lexicon_lower = lexicon_lower

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _param_names(cls):
        return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]

    def get_params(self, deep=True):
        """The constructor arguments, as scikit-learn's ``get_params``."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        names = self._param_names()
        for name, value in params.items():
            if name not in names:
                raise ValueError(f"invalid parameter {name!r} for Tagger: choose from {', '.join(names)}")
            setattr(self, name, value)
        return self

    def trainer_options(self):
        """The options set for the learning rule (name -> value), checked against the rule's
        declared ``params``; ConfigError for an unknown rule or an option the rule does not take."""
        from .train import TRAINERS, check_options

        if self.trainer not in TRAINERS:
            raise ConfigError(f"unknown trainer {self.trainer!r}: choose one of {', '.join(TRAINERS)}")
        options = {name: getattr(self, name) for name in TRAINER_OPTIONS if getattr(self, name) is not None}
        check_options(self.trainer, options)
        return options

    # ------------------------------------------------------------------ training
    def fit_file(self, path, dev=None, callback=None, progress=None, **reader_options):
        """Read a labelled corpus file (and a dev file) with ``read_corpus`` and fit; returns self.

        reader_options : keyword arguments of ``read_corpus`` (format, columns, label, encoding,
            only_types, ...). They are recorded in the model with the format and columns found, and
            ``read``, ``tag_file`` and ``evaluate_file`` use them.
        """
        from .readers import read_corpus

        self.trainer_options()  # a bad option fails before a large corpus is read
        corpus = read_corpus(path, **reader_options)
        dev_corpus = read_corpus(dev, **reader_options) if dev is not None else None
        self.fit(corpus, dev=dev_corpus, callback=callback, progress=progress)
        reader_options = {k: v for k, v in reader_options.items() if v is not None or k != "tag_sep"}
        self.model_.metadata["input"] = {
            **reader_options, "format": corpus.format, "columns": list(corpus.columns), "label": corpus.label,
        }
        return self

    def fit(self, X, y=None, dev=None, dev_y=None, progress=None, callback=None):
        """Train on X (a Corpus with labels, or token lists with labels y); returns self.

        dev : optional held-out data (Corpus, or token lists with dev_y); when given, the weights of
            the best dev epoch are kept (Collins' Numits).
        progress : callable(epoch, done, total, stats), called during each epoch, or None.
        callback : callable(EpochRecord), called as each epoch ends (with its dev score), or None.
        """
        from .train import Problem, make_rule, train_online

        options = self.trainer_options()
        corpus = _as_corpus(X, y, self.columns)
        if corpus.label is None:
            raise ValueError("training data has no label column")
        lexicons = read_lexicons(self.lexicons, self.lexicon_lower)
        encoder = FeatureEncoder(self.templates, self.min_count, self.rare_threshold, lexicons=lexicons)
        encoded = encoder.fit_transform(corpus, corpus.columns[corpus.label])
        tag_dict = None
        if self.tag_dict:
            if encoded.word_ids is None:
                raise ConfigError("--tag-dict needs templates that use the word column")
            tag_dict = build_tag_dict(encoded.word_ids, encoded.labels, len(encoder.vocabularies_["word"]) + FIRST_ID,
                                      len(encoder.labels_), self.tag_dict)
        rule = make_rule(self.trainer, **options)
        model = LinearChainModel(encoder, order=self.order, constrain=self.constrain, tag_dict=tag_dict,
                                 normalization=rule.normalization)
        self.model_ = model
        self.labels_ = model.labels
        dev_score = None
        if dev is not None:
            dev_corpus = _as_corpus(dev, dev_y, self.columns)
            dev_encoded = encoder.transform(dev_corpus)
            dev_gold = dev_corpus.columns[dev_corpus.label]
            chunks = is_bio(model.labels)

            def dev_score(weights):
                predicted, _ = model.decode(dev_encoded, weights)
                names = np.asarray(model.labels, dtype=object)[predicted]
                result = evaluate_labels(dev_gold, names, dev_encoded.sentence_offsets, chunks)
                result["score"] = result["f1"] if chunks else result["accuracy"]
                return result

        self.history_, self.n_iter_ = train_online(
            rule, Problem(model, model.data(encoded)), self.epochs, seed=self.seed,
            dev_score=dev_score, progress=progress, callback=callback,
        )
        params = self.get_params()
        params["templates"] = self.templates if isinstance(self.templates, str) else list(self.templates)
        params["lexicons"] = {name: lex.source for name, lex in lexicons.items()} or None
        model.metadata["training"] = {
            **params, "trainer_options": options,
            "best_epoch": self.n_iter_, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
        }
        model.metadata["input"] = {"format": corpus.format, "columns": list(corpus.columns), "label": corpus.label}
        if dev is not None:
            model.metadata["dev_history"] = [r.dev for r in self.history_]
        model.metadata["training"]["features_seen"] = encoder.n_features_
        model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
        del rule  # its buffers (the raw weights, the averaging sums) are no longer needed
        model.prune()
        return self

    # ------------------------------------------------------------------ prediction
    def predict_corpus(self, corpus):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's score."""
        encoded = self.model_.encoder.transform(corpus, with_labels=False)
        ids, scores = self._predict_encoded(encoded)
        return [self.model_.labels[i] for i in ids], scores

    def _predict_encoded(self, encoded):
        return self.model_.decode(encoded)

    def predict(self, X):
        """Per-sentence lists of predicted labels."""
        corpus = _as_corpus(X, None, self.columns)
        flat, _ = self.predict_corpus(corpus)
        o = corpus.sentence_offsets
        return [flat[o[i]: o[i + 1]] for i in range(len(o) - 1)]

    def evaluate(self, X, y=None):
        """accuracy (and chunk P/R/F1 for BIO label sets), tokens, sentences, seconds, tokens_per_second."""
        corpus = _as_corpus(X, y, self.columns)
        if corpus.label is None:
            raise ValueError("evaluation data has no label column")
        start = time.perf_counter()
        predicted, _ = self.predict_corpus(corpus)
        seconds = time.perf_counter() - start
        result = evaluate_labels(corpus.columns[corpus.label], predicted, corpus.sentence_offsets,
                                 is_bio(self.model_.labels))
        result["seconds"] = seconds
        result["tokens_per_second"] = result["tokens"] / seconds if seconds > 0 else float("inf")
        return result

    def score(self, X, y=None):
        """Token accuracy in percent (scikit-learn's ``score``)."""
        return self.evaluate(X, y)["accuracy"]

    def prepare(self):
        """Build the feature index tables and load the compiled decoder now, not on first use."""
        self.model_.encoder.prepare()
        self.model_.prepare()
        return self

    # ------------------------------------------------------------------ files
    def reader_options(self, format=None, tag_sep=None):
        """The ``read_corpus`` options recorded at fitting; ``format`` and ``tag_sep`` replace them
        when given (another format drops the recorded options of the training format)."""
        options = dict(self.model_.metadata.get("input", {}))
        if format is not None and format != options.get("format"):
            options["format"] = format
            options.pop("tag_sep", None)
        if tag_sep is not None:
            options["tag_sep"] = tag_sep
        return options

    def read(self, path, format=None, require_label=True, tag_sep=None):
        """Read a corpus file as the training corpus was read."""
        from .readers import read_corpus

        return read_corpus(path, **self.reader_options(format, tag_sep), require_label=require_label)

    def evaluate_file(self, path, format=None, tag_sep=None):
        """``evaluate`` on a labelled corpus file read as the training corpus was."""
        return self.evaluate(self.read(path, format, tag_sep=tag_sep))

    def tag_file(self, input, output=None, format=None, marginals=None, probability=False, tag_sep=None):
        """Read, tag and write batch by batch: the input columns plus the predicted label.

        input : file, or "-" for standard input; read lazily, so files larger than memory stream.
        output : file written atomically (nothing is left on an error or an interrupt), or None for
            standard output.
        marginals : None, "best" (P(predicted label | x) per token) or "all" (one "label:P" column
            per label); probability : write "# probability P(y|x)" before each sentence. Both need a
            probabilistic model (crf, memm).

        Returns counts and the time from opening the input to the last write: sentences, tokens,
        seconds, tokens_per_second.
        """
        from .readers import iter_corpus, write_tagged
        from .files import open_output

        if marginals not in (None, "best", "all"):
            raise ConfigError(f"marginals takes 'best' or 'all', got {marginals!r}")
        model = self.model_
        if marginals or probability:
            from .probability import check_probabilistic, marginals as label_marginals

            check_probabilistic(model)
        labels = np.asarray(model.labels, dtype=object)
        start = time.perf_counter()
        sentences = tokens = 0
        with open_output(output) as out:
            for batch in iter_corpus(input, **self.reader_options(format, tag_sep), require_label=False):
                encoded = model.encoder.transform(batch, with_labels=False)
                ids, _ = self._predict_encoded(encoded)
                extra, headers = None, None
                if marginals or probability:
                    node, log_probability = label_marginals(model, encoded)
                    if marginals == "best":
                        extra = [[f"{p:.4f}" for p in node[np.arange(len(ids)), ids]]]
                    elif marginals == "all":
                        extra = [[f"{label}:{p:.4f}" for p in node[:, c]] for c, label in enumerate(model.labels)]
                    if probability:
                        headers = [f"# probability {np.exp(lp):.6f}" for lp in log_probability]
                write_tagged(out, batch, labels[ids].tolist(), extra_columns=extra, sentence_headers=headers)
                sentences += batch.n_sentences
                tokens += batch.n_tokens
            seconds = time.perf_counter() - start
        return {"sentences": sentences, "tokens": tokens, "seconds": seconds,
                "tokens_per_second": tokens / seconds if seconds > 0 else float("inf")}

    def describe(self, top=10):
        """Labels, sizes, the model's metadata (training options, input options) and the ``top``
        highest weighted emission features per label as (description, weight) pairs."""
        model = self.model_
        emission = model.emission_weights()
        top_features = {}
        for c, label in enumerate(model.labels):
            column = emission[:, c]
            best = np.argsort(-column, kind="stable")[:top] if len(column) else []
            top_features[label] = [(model.encoder.describe_feature(int(f)), float(column[f])) for f in best]
        return {
            "labels": model.labels, "features": model.encoder.n_features_,
            "pair_features": model.encoder.n_pair_features_, "weights": int(len(model.weights)),
            "order": model.order, "constrain": model.constrain, "templates": model.encoder.template_strings_,
            **model.metadata, "top_features": top_features,
        }

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        return self.model_.save(path)

    @classmethod
    def load(cls, path):
        """A fitted Tagger from a model file, with every constructor argument it was fitted with (a
        ``semisupervised.VotingTagger`` for a file of several voting models)."""
        from .semisupervised import VotingTagger, is_voting_file

        if is_voting_file(path):
            return VotingTagger.load(path)
        return cls.from_model(LinearChainModel.load(path))

    @classmethod
    def from_model(cls, model):
        """A fitted Tagger around a LinearChainModel, with the constructor arguments it records."""
        training = model.metadata.get("training", {})
        names = cls._param_names()
        params = {k: training[k] for k in names if k in training}
        # files written before the options were recorded one by one
        params.update({k: v for k, v in training.get("trainer_options", {}).items()
                       if k in names and params.get(k) is None})
        if "columns" not in training:
            params["columns"] = model.metadata.get("input", {}).get("columns")
        tagger = cls(**params)
        tagger.model_ = model
        tagger.labels_ = model.labels
        tagger.n_iter_ = training.get("best_epoch")
        return tagger
