"""``Tagger``: the scikit-learn style estimator over encoder, model and learning rules.

It owns the pipeline on files as well: ``fit_file`` reads a corpus and records how (format, columns,
label, encoding, ...) in the model, so that ``read``, ``tag_file`` and ``evaluate_file`` read later
inputs the same way.
"""
import inspect
import time

import numpy as np

from .attributes import AttributeEncoder, is_dict_input
from .chunks import is_bio
from .corpus import Corpus
from .encode import FIRST_ID, FeatureEncoder
from .errors import ConfigError
from .evaluate import evaluate_labels
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


def _dicts(X):
    return not isinstance(X, Corpus) and is_dict_input(X)


def _flat_labels(X, y):
    """The labels of y flat over the tokens, checked against the sentence lengths of X."""
    if y is None:
        raise ValueError("training data has no labels: give y")
    if len(X) != len(y) or any(len(a) != len(b) for a, b in zip(X, y)):
        raise ValueError("y must give one label per token")
    return [label for labels in y for label in labels]


def training_state(rule):
    """What continued training needs beyond the kept weights: the perceptron's raw weights w, its
    averaging sums u and example counter (``_kernels/perceptron.py``); nothing for the other rules,
    which continue from the kept weights with a fresh schedule and average."""
    if getattr(rule, "name", None) != "perceptron":
        return {}
    return {"w": rule.w.copy(), "u": rule.u.copy(), "counter": float(rule.counter)}


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
    resumable : keep the perceptron's training state (raw weights, averaging sums, example counter)
        in the model and its file, so that ``partial_fit`` continues the averaging exactly as one
        longer run would; it triples the size of the model file.

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
                 resumable=False):
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
        self.resumable = resumable

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
    def fit_file(self, path, dev=None, callback=None, progress=None, partial=False, **reader_options):
        """Read a labelled corpus file (and a dev file) with ``read_corpus`` and fit; returns self.

        partial : continue training the fitted model (``partial_fit``) instead of fitting anew.
        reader_options : keyword arguments of ``read_corpus`` (format, columns, label, encoding,
            only_types, ...). They are recorded in the model with the format and columns found, and
            ``read``, ``tag_file`` and ``evaluate_file`` use them.
        """
        from .readers import read_corpus

        self.trainer_options()  # a bad option fails before a large corpus is read
        corpus = read_corpus(path, **reader_options)
        dev_corpus = read_corpus(dev, **reader_options) if dev is not None else None
        fit = self.partial_fit if partial else self.fit
        fit(corpus, dev=dev_corpus, callback=callback, progress=progress)
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
        from .train import make_rule

        options = self.trainer_options()
        if _dicts(X):
            if self.tag_dict:
                raise ConfigError("tag_dict needs templates over a word column, not feature dicts")
            encoder = AttributeEncoder(self.min_count)
            encoded = encoder.fit_transform(X, _flat_labels(X, y))
            input_meta = {"format": "dicts"}
        else:
            corpus = _as_corpus(X, y, self.columns)
            if corpus.label is None:
                raise ValueError("training data has no label column")
            encoder = FeatureEncoder(self.templates, self.min_count, self.rare_threshold)
            encoded = encoder.fit_transform(corpus, corpus.columns[corpus.label])
            input_meta = {"format": corpus.format, "columns": list(corpus.columns), "label": corpus.label}
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
        self._train(rule, model, encoded, options, input_meta, dev, dev_y, progress, callback)
        return self

    def _train(self, rule, model, encoded, options, input_meta, dev, dev_y, progress, callback,
               resume=None, start_epoch=0):
        """Run ``rule`` on the encoded training data, record the run in the model's metadata, prune."""
        from .train import Problem, train_online

        encoder = model.encoder
        dev_score = None
        if dev is not None:
            dev_encoded, dev_gold = self._encode(dev, dev_y)
            chunks = is_bio(model.labels)

            def dev_score(weights):
                predicted, _ = model.decode(dev_encoded, weights)
                names = np.asarray(model.labels, dtype=object)[predicted]
                result = evaluate_labels(dev_gold, names, dev_encoded.sentence_offsets, chunks)
                result["score"] = result["f1"] if chunks else result["accuracy"]
                return result

        last_epoch = start_epoch + self.epochs
        kept_state = {}

        def on_epoch(record):
            record.epoch += start_epoch
            if record.epoch == last_epoch and self.resumable:
                kept_state.update(training_state(rule))
            if callback is not None:
                callback(record)

        problem = Problem(model, model.data(encoded))
        problem.resume = resume
        self.history_, self.n_iter_ = train_online(
            rule, problem, self.epochs, seed=self.seed,
            dev_score=dev_score, progress=progress, callback=on_epoch, start_epoch=start_epoch,
        )
        self.n_iter_ += start_epoch
        params = self.get_params()
        params["templates"] = self.templates if isinstance(self.templates, str) else list(self.templates)
        previous = model.metadata.get("training")
        model.metadata["training"] = {
            **params, "trainer_options": options,
            "best_epoch": self.n_iter_, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
        }
        if previous is not None:
            history = previous.pop("runs", [])
            model.metadata["training"]["runs"] = history + [previous]
        model.metadata["training"]["epochs_done"] = last_epoch
        model.metadata["input"] = input_meta
        if dev is not None:
            model.metadata["dev_history"] = [r.dev for r in self.history_]
        model.metadata["training"]["features_seen"] = encoder.n_features_
        model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
        model.training_state = kept_state or None
        model.prune()

    def partial_fit(self, X, y=None, dev=None, dev_y=None, progress=None, callback=None):
        """Continue training the fitted (or loaded) model on X for ``epochs`` more epochs; returns self.

        The templates must be the model's. Attributes (dict input) and labels that are new get zero
        weights first; with template input the feature index is the model's (a feature it does not
        hold is not added). The shuffles continue the seed's sequence after the epochs already run.
        A perceptron continues its averaging exactly when the model carries its training state
        (fitted with ``resumable=True``); the other rules start their schedule and average afresh
        from the kept weights. Without a fitted model this is ``fit``.
        """
        from .templates import load_templates
        from .train import make_rule

        if not hasattr(self, "model_"):
            return self.fit(X, y, dev=dev, dev_y=dev_y, progress=progress, callback=callback)
        options = self.trainer_options()
        model, encoder = self.model_, self.model_.encoder
        rule = make_rule(self.trainer, **options)
        if rule.normalization != model.normalization:
            raise ConfigError(f"a {self.trainer} model has {rule.normalization} normalization; "
                              f"this model has {model.normalization}")
        if _dicts(X):
            if not isinstance(encoder, AttributeEncoder):
                raise ConfigError("this model was trained on token columns with templates, not on feature dicts")
            encoded = encoder.extend(X, _flat_labels(X, y))
            input_meta = {"format": "dicts"}
        else:
            if isinstance(encoder, AttributeEncoder):
                raise ConfigError("this model was trained on feature dicts and has no templates")
            wanted = [str(t) for t in load_templates(self.templates)]
            if wanted != encoder.template_strings_:
                raise ConfigError(f"templates {', '.join(wanted)} differ from the model's: "
                                  f"{', '.join(encoder.template_strings_)}")
            corpus = _as_corpus(X, y, self.columns)
            if corpus.label is None:
                raise ValueError("training data has no label column")
            labels = corpus.columns[corpus.label]
            known = set(encoder.labels_)
            encoder.labels_ = encoder.labels_ + sorted({label for label in labels if label not in known})
            encoded = encoder.transform(corpus)
            input_meta = {"format": corpus.format, "columns": list(corpus.columns), "label": corpus.label}
        model.grow(encoder.n_features_, encoder.labels_)
        previous = model.metadata.get("training", {})
        resume = model.training_state if previous.get("trainer") == self.trainer else None
        self.labels_ = model.labels
        self._train(rule, model, encoded, options, input_meta, dev, dev_y, progress, callback, resume=resume,
                    start_epoch=int(previous.get("epochs_done", previous.get("epochs", 0))))
        return self

    # ------------------------------------------------------------------ prediction
    def predict_corpus(self, corpus):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's score."""
        encoded = self.model_.encoder.transform(corpus, with_labels=False)
        ids, scores = self._predict_encoded(encoded)
        return [self.model_.labels[i] for i in ids], scores

    def _predict_encoded(self, encoded):
        return self.model_.decode(encoded)

    def _encode(self, X, y=None):
        """(EncodedCorpus, flat gold label strings or None) of X: feature dicts, a Corpus or token lists."""
        encoder = self.model_.encoder
        if _dicts(X) or isinstance(encoder, AttributeEncoder):
            if not isinstance(encoder, AttributeEncoder):
                raise ConfigError("this model was trained on token columns with templates, not on feature dicts")
            if not _dicts(X) and any(len(s) for s in X):
                raise ConfigError("this model was trained on feature dicts: give every token as a dict")
            gold = _flat_labels(X, y) if y is not None else None
            return encoder.transform(X, gold), gold
        corpus = _as_corpus(X, y, self.columns)
        gold = corpus.columns[corpus.label] if corpus.label is not None else None
        return encoder.transform(corpus, with_labels=gold is not None), gold

    def predict(self, X):
        """Per-sentence lists of predicted labels."""
        encoded, _ = self._encode(X)
        ids, _ = self._predict_encoded(encoded)
        flat = [self.model_.labels[i] for i in ids]
        o = encoded.sentence_offsets
        return [flat[o[i]: o[i + 1]] for i in range(len(o) - 1)]

    def predict_marginals(self, X):
        """P(y_t = label | x) as scikit-learn-crfsuite gives it: per sentence, per token, a dict
        {label: probability}. Needs a probabilistic model (crf, memm)."""
        from .probability import check_probabilistic, marginals as label_marginals

        check_probabilistic(self.model_)
        encoded, _ = self._encode(X)
        node, _ = label_marginals(self.model_, encoded)
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

    def evaluate(self, X, y=None):
        """accuracy (and chunk P/R/F1 for BIO label sets), tokens, sentences, seconds, tokens_per_second."""
        start = time.perf_counter()
        encoded, gold = self._encode(X, y)
        if gold is None:
            raise ValueError("evaluation data has no label column")
        ids, _ = self._predict_encoded(encoded)
        predicted = [self.model_.labels[i] for i in ids]
        seconds = time.perf_counter() - start
        result = evaluate_labels(gold, predicted, encoded.sentence_offsets, is_bio(self.model_.labels))
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

        self._check_templates()
        return read_corpus(path, **self.reader_options(format, tag_sep), require_label=require_label)

    def _check_templates(self):
        if isinstance(self.model_.encoder, AttributeEncoder):
            raise ConfigError("this model was trained on feature dicts and has no templates: "
                              "tag its input with the Python API (Tagger.predict on dicts)")

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
        self._check_templates()
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
        """Write the model file, with the training state when ``resumable`` (``LinearChainModel.save``)."""
        return self.model_.save(path, resumable=self.resumable)

    @classmethod
    def load(cls, path):
        """A fitted Tagger from a model file, with every constructor argument it was fitted with."""
        model = LinearChainModel.load(path)
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
