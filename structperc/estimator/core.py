"""``TaggerCore``: the tagger over encoder, model and learning rules, without scikit-learn.

``structperc.Tagger`` (``tagger.py``) is this class on scikit-learn's ``BaseEstimator``. The
commands, the ensembles and the warm-up use ``TaggerCore`` itself: importing ``sklearn.base`` loads
scipy.stats, about three times the start-up of numpy and numba, and a ``structperc tag`` of a small
file must start fast. Both read and write the same model files.

It owns the pipeline on files as well: ``fit_file`` reads a corpus and records how (format, columns,
label, encoding, ...) in the model, so that ``read``, ``tag_file`` and ``evaluate_file`` read later
inputs the same way.
"""
import time

import numpy as np

from structperc.chunks import is_bio
from structperc.errors import DataError, ModelFileError
from structperc.estimator.base import Estimator, with_rule_parameters
from structperc.utils.npz import is_ensemble_file
from structperc.evaluate.metrics import check_gold_labels, evaluate_labels
from structperc.model.forcing import sentence_forced_ids
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator import files
from structperc.estimator.base import recorded_params
from structperc.estimator.fitting import ALL_PAIRS_DEFAULT, Fitting, Structure, recorded_structure
from structperc.estimator.inputs import open_input
from structperc.estimator.settings import Settings
from structperc.train import RULE_OPTIONS


class TaggerCore(Estimator):
    """A sequence tagger trained on-line by one of ``structperc.train.TRAINERS``.

    Parameters
    ----------
    templates : None (chosen from the training data: ``features.presets.choose_structure``), a preset
        ("ner", "chunk", "pos-rich", ...), a template file, or a list of template strings
    trainer : "perceptron" (or any other registered learning rule)
    epochs : passes over the training data; None: until the rule's stopping rule ends the run, at
        most ``n_epochs()`` (perceptron: until the training mistakes stop falling, at most 25; crf
        with SGD: until the objective stops rising by 1 % an epoch, at most 14; the others: 10)
    min_count : feature count cut-off (Collins' cc)
    rare_threshold : training count below which a word is rare (``@rare`` templates)
    constrain : None (chosen from the training data: the chunk scheme the gold labels keep, "bioes",
        "bio" or "iob1", else "none"), "none", or a scheme of ``chunks.SCHEMES`` (e.g. "bio": I-X only
        after B-X or I-X), in training and decoding
    order : 1 (bigram labels) or 2 (trigram labels)
    tag_dict : None, or k: words seen >= k times may only take the tags seen with them
    seed : seed of the per-epoch shuffles
    all_pairs : True: a weight for every (feature, label) pair; False: only for the pairs seen in
        training (a feature with each gold label it occurs with), as CRFsuite's default
    dense_count : None, or with all_pairs False: a feature that occurs at least this many times in
        training has a weight for every label (the frequent features keep their negative evidence)
    columns : names of the token values when fitting on plain lists
    missing_label : None, or the label symbol (e.g. "?") of an unlabelled token. Training takes
        the best labeling consistent with the known labels as the gold (perceptron, hinge), the
        likelihood of the known labels (crf) or only the tokens whose label and history are known
        (memm); the symbol is never a label of the model. In ``predict(X, forced=...)`` it marks a
        free token.
    average, l2, eta0, l1, solver ... : every option that a registered learning rule declares
        (``structperc.train.RULE_OPTIONS``: ``TRAINERS[trainer].params``), as a keyword; None: the
        rule's default. Setting one that the chosen rule does not take is a ConfigError. The
        constructor's signature lists them (``with_rule_parameters``), so scikit-learn's
        ``get_params``, ``set_params`` and ``clone`` see them as parameters (``with_rule_parameters``).
    workers : 1 (train here, serially), or N > 1: iterative parameter mixing over N shards on a
        dask LocalCluster started for the run (``structperc.train.mixing``)
    scheduler : address of a running dask scheduler to train on instead (one shard per worker)
    mix : "uniform" or "errors": how the shards' weights are mixed (with workers > 1 or scheduler)
    hash_bits : None (exact feature index) or B: feature ids are hashes modulo 2^B
    cache_dir : None, or a folder where ``fit_file`` keeps the encoded training corpus (``cache.py``)
    resumable : keep the perceptron's training state (raw weights, averaging sums, example counter)
        in the model and its file, so that ``partial_fit`` continues the averaging exactly as one
        longer run would; it triples the size of the model file.
    lexicons : None, a list of ``NAME=FILE`` strings, or a dict name -> file or ``lexicon.Lexicon``:
        the lexicons of the template fields ``NAME[k]`` and ``NAME.pK[k]``
    lexicon_lower : look words up in the lexicons lower-cased

    Attributes
    ----------
    model_ : LinearChainModel
    templates_, constrain_ : the templates and constraint used (``templates`` and ``constrain``, or
        what was chosen for None); structure_reason_ : why, in a few words
    labels_ : list of str
    history_ : list of EpochRecord
    n_iter_ : the epoch whose weights were kept (best on dev, or the last)
    """

    @with_rule_parameters
    def __init__(self, templates=None, trainer="perceptron", epochs=None, min_count=0, rare_threshold=5,
                 constrain=None, order=1, tag_dict=None, seed=0, columns=None, missing_label=None,
                 all_pairs=ALL_PAIRS_DEFAULT, workers=1, scheduler=None, mix="uniform", hash_bits=None,
                 cache_dir=None, lexicons=None, lexicon_lower=False, resumable=False, dense_count=None,
                 **rule_options):
        self.templates = templates
        self.trainer = trainer
        self.epochs = epochs
        self.min_count = min_count
        self.rare_threshold = rare_threshold
        self.constrain = constrain
        self.order = order
        self.tag_dict = tag_dict
        self.seed = seed
        self.columns = columns
        self.missing_label = missing_label
        self.all_pairs = all_pairs
        self.dense_count = dense_count
        self.workers = workers
        self.scheduler = scheduler
        self.mix = mix
        self.hash_bits = hash_bits
        self.cache_dir = cache_dir
        self.resumable = resumable
        self.lexicons = lexicons
        self.lexicon_lower = lexicon_lower
        # every option a registered learning rule declares (``train.RULE_OPTIONS``), None: the rule's default
        for name in rule_options:
            if name not in RULE_OPTIONS:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {name!r}")
        for name in RULE_OPTIONS:
            setattr(self, name, rule_options.get(name))

    # ------------------------------------------------------------------ parameters
    @property
    def classes_(self):
        """The labels of the fitted model, in label-id order (scikit-learn's ``classes_``)."""
        return np.array(self.labels_, dtype=object)

    def labels(self):
        """The labels of the fitted model, in label-id order (python-crfsuite's ``Tagger.labels()``)."""
        return list(self.labels_)

    def info(self):
        """The model as python-crfsuite's ``Tagger.info()`` gives one (``model.info.model_info``)."""
        from structperc.model.info import model_info

        return model_info(self.model_)

    def check_params(self, client=None, checkpoint=False):
        """The constructor's parameters, checked once (``settings.Settings``): ConfigError for an unknown
        rule, an option the rule does not take or a value it refuses, bad epochs, and engine options
        that are invalid or that the rule cannot run with (``client``: a dask Client to train on;
        ``checkpoint``: whether the run writes or resumes a checkpoint)."""
        return Settings(self.get_params(), client, checkpoint, defaults=self.param_defaults())

    def trainer_options(self):
        """The options set for the learning rule (name -> value), checked against the rule's
        declared ``params``; ConfigError for an unknown rule or an option the rule does not take or
        refuses (engine options aside: ``check_params`` checks them too)."""
        return Settings(self.get_params(), engine=False).rule_options

    def n_epochs(self):
        """The passes over the training data: ``epochs``, or the learning rule's default for None
        (``settings.epochs_of``)."""
        return Settings(self.get_params(), engine=False).n_epochs

    def uses_mixing(self, client=None):
        """Whether training runs by parameter mixing (a client, a scheduler or workers > 1)."""
        return client is not None or self.scheduler is not None or self.workers != 1

    def check_engine(self, client=None, checkpoint=False):
        """ConfigError for engine options that are invalid or do not apply, and for what the learning
        rule cannot do with them (``settings.check_engine``)."""
        self.check_params(client, checkpoint)

    # ------------------------------------------------------------------ training
    def fit(self, X, y=None, dev=None, dev_y=None, progress=None, callback=None, checkpoint=None,
            checkpoint_every=1, resume=None, input_metadata=None, client=None):
        """Train on X (a Corpus with labels, or token lists with labels y); returns self.

        dev : optional held-out data (Corpus, or token lists with dev_y); when given, the weights of
            the best dev epoch are kept (Collins' Numits).
        progress : callable(epoch, done, total, stats), called during each epoch, or None.
        callback : callable(EpochRecord), called as each epoch ends (with its dev score), or None.
        checkpoint : path, or None. After every ``checkpoint_every`` epochs, write there (atomically)
            a model file of the weights reached that also holds the trainer's state (see
            ``read_checkpoint``).
        resume : path of such a checkpoint, or None. Training continues from it up to ``epochs``
            and ends with the model the uninterrupted run would have given. The checkpoint must come
            from a run with the same parameters (``epochs`` aside), data and dev data; otherwise
            ConfigError.
        input_metadata : reader options to record in the model's "input" metadata (how the corpus was
            read), beside the format, columns and label found.
        client : a dask.distributed Client: train by parameter mixing on its workers (one shard each).
        """
        fitting = self._fitting(client, progress, callback, checkpoint, checkpoint_every, resume)
        source = open_input(X, y, self.columns, read=input_metadata)
        del X, y  # the training strings are not needed past encoding (freed there when the caller holds none)
        return self._train(fitting, fitting.prepare(source), dev, dev_y)

    def _fitting(self, client=None, progress=None, callback=None, checkpoint=None, checkpoint_every=1,
                 resume=None):
        """The Fitting of this tagger's parameters, checked before any data is read."""
        settings = self.check_params(client, checkpoint=checkpoint is not None or resume is not None)
        return Fitting(settings, progress, callback, checkpoint, checkpoint_every, resume)

    def _train(self, fitting, prepared, dev=None, dev_y=None):
        """Adopt the Prepared model's structure, train it (``Fitting.train``) and adopt the Fit; self."""
        structure = prepared.structure
        self.templates_, self.constrain_, self.structure_reason_ = (structure.templates, structure.constrain,
                                                                    structure.reason)
        self.model_, self.labels_ = prepared.model, prepared.model.labels
        fit = fitting.train(prepared, dev, dev_y)
        self.history_, self.n_iter_ = fit.history, fit.n_iter
        if fit.n_shards is not None:
            self.n_shards_ = fit.n_shards
        return self

    def partial_fit(self, X, y=None, dev=None, dev_y=None, progress=None, callback=None, input_metadata=None,
                    checkpoint=None, checkpoint_every=1, resume=None, client=None):
        """Continue training the fitted (or loaded) model on X for ``epochs`` more epochs; returns
        self. Without a fitted model this is ``fit``.

        The templates must be the model's. New features (template instances, pair features, or
        attributes of dict input) and new labels get zero weights first; existing ids keep their
        weights (``FeatureEncoder.extend``, ``LinearChainModel.grow``). A new feature must occur
        ``min_count`` times in X (counts from X alone). A model of gold feature-label pairs gains
        the pairs of X (a feature with each gold label it occurs with), for new and existing
        features. The shuffles continue the seed's sequence after the epochs already run.
        A perceptron continues its averaging exactly when the model carries its training state
        (fitted with ``resumable=True``); the other rules start their schedule and average afresh
        from the kept weights. The other arguments are ``fit``'s.
        """
        if not hasattr(self, "model_"):
            return self.fit(X, y, dev=dev, dev_y=dev_y, progress=progress, callback=callback,
                            input_metadata=input_metadata, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                            resume=resume, client=client)
        fitting = self._fitting(client, progress, callback, checkpoint, checkpoint_every, resume)
        return self._continue(fitting, X, y, input_metadata, dev, dev_y)

    def _continue(self, fitting, X, y=None, input_metadata=None, dev=None, dev_y=None):
        """``partial_fit`` of a fitted tagger, its parameters checked (``fitting``)."""
        if not hasattr(self, "constrain_"):  # a model handed over by setting model_: its structure
            self.templates_, self.constrain_, self.structure_reason_ = recorded_structure(self.model_, self.templates)
        source = open_input(X, y, self.columns, read=input_metadata, encoder=self.model_.encoder, training=True)
        structure = Structure(self.templates_, self.constrain_, self.structure_reason_)
        return self._train(fitting, fitting.prepare_continued(self.model_, structure, source), dev, dev_y)

    # ------------------------------------------------------------------ prediction
    def predict_corpus(self, corpus, forced=None):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's score.

        forced : None, or int64 (n_tokens,) label ids to keep, -1 where free (``forced_label_ids``).
        """
        ids, scores, _ = self.predict_ids(corpus, forced)
        return self.model_.label_names(ids).tolist(), scores

    def predict_ids(self, corpus, forced=None):
        """(label ids flat over the tokens, sentence scores, the encoded input) of a Corpus."""
        encoded = self.encode_input(corpus)
        ids, scores = self.decode(encoded, forced)
        return ids, scores, encoded

    def encode_input(self, corpus):
        """The encoded tokens of a Corpus read as the model's input (its labels, if any, left out)."""
        return self.model_.encoder.transform(self.input_view(corpus), with_labels=False)

    def input_view(self, corpus):
        """The Corpus the model's templates read for the input ``corpus``: the same one here; a
        stacked model adds the column of its base model's predictions (``stacking.StackedTagger``)."""
        return corpus

    def decode(self, encoded, forced=None):
        """(label ids flat over the tokens, sentence scores) of encoded input (``encode``)."""
        return self.model_.decode(encoded, forced=forced)

    def missing_symbol(self):
        """The label symbol of a free token in forced labels: ``missing_label``, or "?" when unset."""
        return self.missing_label if self.missing_label is not None else "?"

    def forced_ids(self, corpus, forced):
        """Label ids of ``forced`` for the sentences of ``corpus``, checked (``forcing.sentence_forced_ids``)."""
        return sentence_forced_ids(self.model_, corpus.sentence_offsets, forced, self.missing_symbol())

    def encode(self, X, y=None):
        """(EncodedCorpus, flat gold label strings or None) of X: feature dicts, a Corpus or token lists."""
        encoder = self.model_.encoder
        source = open_input(X, y, self.columns, encoder=encoder)
        return source.transform(encoder, self.input_view), source.labels

    def predict(self, X, forced=None):
        """Per-sentence lists of predicted labels.

        forced : None, or per sentence None or a list of labels, one per token: a label keeps the
            token at that label, None or the missing symbol (``missing_label``, "?" when unset)
            leaves it free.
        """
        encoded, _ = self.encode(X)
        ids, _ = self.decode(encoded, None if forced is None else self.forced_ids(encoded, forced))
        flat = self.model_.label_names(ids).tolist()
        o = encoded.sentence_offsets
        return [flat[o[i]: o[i + 1]] for i in range(len(o) - 1)]

    def tag(self, tokens):
        """[(token, label), ...] of one sentence, as NLTK's taggers give it; of raw text (a str), a
        list of such sentences, the text split into sentences and words first (``estimator.text``).

        tokens : list of str (or of tuples of column values, for a model over several columns), or a str;
            the other columns a model reads are filled as for raw text (``estimator.text.tag_words``)."""
        if isinstance(tokens, str):
            from structperc.estimator.text import tag_text

            return tag_text(self, tokens)
        tokens = list(tokens)
        if tokens and all(isinstance(token, str) for token in tokens):
            from structperc.estimator.text import reads_beside_words, tag_words

            if reads_beside_words(self.model_):
                return tag_words(self, tokens)  # the other columns filled as for raw text
        return list(zip(tokens, self.predict([tokens])[0]))

    def tag_spans(self, text):
        """The labelled spans of raw text, as ``estimator.text.TextSpan(start, end, label, score)`` with
        character offsets into ``text``: the chunks of a chunk label set (score: the chunk's marginal
        probability for a crf or memm model, None for the others, which define no probability), else
        one span per word."""
        from structperc.estimator.text import text_spans

        if not isinstance(text, str):
            raise DataError(f"tag_spans takes raw text (a str), got {type(text).__name__}")
        return text_spans(self, text)

    def tag_sents(self, sentences):
        """``tag`` of every sentence (a list of token lists)."""
        sentences = [list(s) if not isinstance(s, str) else s for s in sentences]
        return [list(zip(tokens, labels)) for tokens, labels in zip(sentences, self.predict(sentences))]

    def predict_marginals(self, X, any_rule=False):
        """P(y_t = label | x) as scikit-learn-crfsuite gives it: per sentence, per token, a dict
        {label: probability}. Needs a probabilistic model (crf, memm); any_rule : take the CRF that
        the weights define whatever rule trained them (CRFsuite does so for every algorithm)."""
        from structperc.estimator.marginals import marginals as label_marginals

        encoded, _ = self.encode(X)
        node, _ = label_marginals(self.model_, encoded, check=not any_rule)
        labels = self.model_.labels
        rows = [dict(zip(labels, row)) for row in node.tolist()]
        o = encoded.sentence_offsets
        return [rows[o[i]: o[i + 1]] for i in range(len(o) - 1)]

    @property
    def state_features_(self):
        """{(attribute, label): weight} of the nonzero emission weights (scikit-learn-crfsuite's name)."""
        model = self.model_
        emission = model.emission_weights()
        rows, cols = np.nonzero(emission)
        describe = model.encoder.describe_feature
        return {(describe(int(f)), model.labels[c]): float(emission[f, c]) for f, c in zip(rows, cols)}

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight} of the label transitions (the start row left out)."""
        model = self.model_
        transition = model.transition_weights()
        return {(a, b): float(transition[i, j]) for i, a in enumerate(model.labels)
                for j, b in enumerate(model.labels)}

    def evaluate(self, X, y=None, details=False):
        """accuracy (and chunk P/R/F1 for BIO label sets), tokens, sentences, seconds (of tagging,
        less any compiling of kernels), tokens_per_second.
        details : also what ``eval`` prints (per-tag scores or phrase counts, errors: ``evaluation_details``).
        Gold labels the model does not know are listed under ``unknown_labels`` (and a StructpercWarning
        names them); a ConfigError when it knows none of them (``unknown_gold_labels``)."""
        from structperc._kernels.cache import compiling_seconds

        start, compiled = time.perf_counter(), compiling_seconds()
        gold, predicted, offsets = self._gold_and_predicted(X, y)
        seconds = time.perf_counter() - start - (compiling_seconds() - compiled)  # a speed without compiling
        unknown = check_gold_labels(gold, self.model_.labels, getattr(X, "path", "<memory>"))
        result = evaluate_labels(gold, predicted, offsets, is_bio(self.model_.labels), details)
        if unknown:
            result["unknown_labels"] = unknown
        result["seconds"] = seconds
        result["tokens_per_second"] = result["tokens"] / seconds if seconds > 0 else float("inf")
        return result

    def _gold_and_predicted(self, X, y=None):
        """(gold labels, predicted labels, sentence offsets) of labelled data, flat over the tokens."""
        encoded, gold = self.encode(X, y)
        if gold is None:
            raise DataError("evaluation data has no label column")
        ids, _ = self.decode(encoded)
        return gold, self.model_.label_names(ids).tolist(), encoded.sentence_offsets

    def score(self, X, y=None):
        """Token accuracy as a fraction in [0, 1], as scikit-learn's ``score`` (``evaluate`` gives
        percentages)."""
        return self.evaluate(X, y)["accuracy"] / 100.0

    def prepare(self):
        """Build the feature index tables and load the compiled decoder now, not on first use."""
        self.model_.encoder.prepare()
        self.model_.prepare()
        return self

    # ------------------------------------------------------------------ files
    def fit_file(self, path, dev=None, callback=None, progress=None, checkpoint=None, checkpoint_every=1,
                 resume=None, client=None, partial=False, **reader_options):
        """Read a labelled corpus file (and a dev file) with ``read_corpus`` and fit, recording how the
        file was read in the model; returns self.

        partial : continue training the fitted model (``partial_fit``) instead of fitting anew.
        reader_options : keyword arguments of ``read_corpus`` (format, columns, label, encoding,
            only_types, ...). They are recorded in the model with the format and columns found, and
            ``read``, ``tag_file`` and ``evaluate_file`` use them.
        checkpoint, checkpoint_every, resume, client : as in ``fit``.
        """
        from structperc.readers import read_corpus

        # a bad option fails before a large corpus is read
        fitting = self._fitting(client, progress, callback, checkpoint, checkpoint_every, resume)
        reader_options = files.recorded_options(reader_options)
        dev_corpus = read_corpus(dev, **reader_options) if dev is not None else None
        if partial and hasattr(self, "model_"):
            # continued training encodes with the fitted model's feature index: no cache
            return self._continue(fitting, files.read_training_corpus(path, **reader_options),
                                  input_metadata=reader_options, dev=dev_corpus)
        return self._train(fitting, files.prepare_file(fitting, path, reader_options), dev_corpus)

    def reader_options(self, format=None, tag_sep=None, encoding=None):
        """The ``read_corpus`` options recorded at fitting, with the given ones replacing them."""
        return files.reader_options(self, format, tag_sep, encoding)

    def read(self, path, format=None, require_label=True, tag_sep=None, encoding=None):
        """Read a corpus file as the training corpus was read (``files.read``)."""
        return files.read(self, path, format, require_label, tag_sep, encoding)

    def evaluate_file(self, path, format=None, tag_sep=None, encoding=None):
        """``evaluate`` on a labelled corpus file read as the training corpus was."""
        return self.evaluate(self.read(path, format, tag_sep=tag_sep, encoding=encoding))

    def tag_file(self, input, output=None, format=None, marginals=None, probability=False, tag_sep=None,
                 force_column=None, encoding=None, output_format=None, keep_gold=False, familiarity=False):
        """Read, tag and write batch by batch, the file streamed (``files.tag_file``); returns counts
        and speed: sentences, tokens, seconds, tokens_per_second."""
        return files.tag_file(self, input, output, format, marginals, probability, tag_sep, force_column, encoding,
                              output_format, keep_gold, familiarity)

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
            **model.metadata, **self._hashing(), "top_features": top_features,
        }

    def _hashing(self):
        encoder = self.model_.encoder
        if getattr(encoder, "hash_bits", None) is None:  # feature dicts have no hashing
            return {}
        return {"hashing": {"hash_bits": int(encoder.hash_bits), **(getattr(encoder, "hash_stats_", None) or {})}}

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Write the model file, with the training state when ``resumable`` (``LinearChainModel.save``)."""
        return self.model_.save(path, resumable=self.resumable)

    @classmethod
    def load(cls, path):
        """A fitted tagger of this class from a model file, with the constructor arguments that describe the
        model (``from_model``). An ensemble file (several models) is a ModelFileError: ``structperc.load_model``
        reads both."""
        if is_ensemble_file(path):
            raise ModelFileError(f"{path}: an ensemble model file (several models): "
                                 f"load it with structperc.load_model")
        return cls.from_model(LinearChainModel.load(path))

    @classmethod
    def from_model(cls, model):
        """A fitted tagger of this class around a LinearChainModel, with the constructor arguments it records
        that describe the model (``MODEL_PARAMS``); the others keep their defaults."""
        training = model.metadata.get("training", {})
        params = recorded_params(model, cls._get_param_names())
        tagger = cls(**params)
        tagger.model_ = model
        tagger.labels_ = model.labels
        tagger.n_iter_ = training.get("best_epoch")
        tagger.templates_, tagger.constrain_, tagger.structure_reason_ = recorded_structure(model, tagger.templates)
        return tagger
