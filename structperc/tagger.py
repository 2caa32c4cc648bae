"""``Tagger``: the scikit-learn style estimator over encoder, model and learning rules.

It owns the pipeline on files as well: ``fit_file`` reads a corpus and records how (format, columns,
label, encoding, ...) in the model, so that ``read``, ``tag_file`` and ``evaluate_file`` read later
inputs the same way.
"""
import copy
import inspect
import json
import os
import time

import numpy as np

from .attributes import AttributeEncoder, is_dict_input
from .chunks import is_bio
from .corpus import Corpus
from .encode import FIRST_ID, FeatureEncoder
from .errors import ConfigError, InputFormatError
from .evaluate import evaluate_labels
from ._kernels.emission import gold_pairs
from .cache import file_sha256
from .lexicon import read_lexicons
from .model import LinearChainModel

# Options of the learning rules; each rule declares the ones it takes in ``params``. None (the
# default) leaves the rule's own default, and only the options that are set reach the rule.
# whether a model keeps a weight for every (feature, label) pair; chosen by measuring (benchmarks/labels.md)
ALL_PAIRS_DEFAULT = True
_READ_BATCH = 5000  # sentences per batch of read_training_corpus
TRAINER_OPTIONS = ("average", "l2", "eta0", "batch_size", "cost", "average_start", "calibration_sentences",
                   "l1", "promotion", "demotion", "initial_weight")


def _as_corpus(X, y=None, columns=None):
    """A Corpus from a Corpus, or from lists of tokens (str, or tuples of column values)."""
    if isinstance(X, Corpus):
        return X
    sentences = list(X)
    first = next((tok for sent in sentences for tok in sent), "")
    width = 1 if isinstance(first, str) else len(first)
    default = ["word"] if width == 1 else ["word", "pos"] + [f"col{i}" for i in range(2, width)]
    names = list(columns) if columns else default
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


def read_training_corpus(path, **reader_options):
    """``read_corpus`` for training: read in batches, with each distinct string held once and without
    the original lines (training never writes them back), so that a token costs one pointer per
    column instead of its own string objects."""
    from .corpus import concatenate
    from .readers import iter_corpus

    shared = {}
    parts = []
    for batch in iter_corpus(path, require_label=True, batch_sentences=_READ_BATCH, **reader_options):
        for name, values in batch.columns.items():
            batch.columns[name] = list(map(shared.setdefault, values, values))
        batch.lines = None
        parts.append(batch)
    return concatenate(parts)
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


def _plain(value):
    """``value`` as it reads back from JSON (numpy scalars as Python numbers, tuples as lists)."""
    return json.loads(json.dumps(value, default=lambda o: o.item()))


CHECKPOINT_PREFIX = "checkpoint__"


def _write_checkpoint(path, model, rule, state, run_key, input_metadata):
    """A model file of the weights reached after ``state.epoch`` epochs, plus ``state`` (a
    ``LoopState``): its arrays as ``checkpoint__NAME``, the rest in the metadata "checkpoint"."""
    snapshot = copy.copy(model)
    snapshot.weights = rule.weights()
    arrays, scalars = {}, {}
    for name, value in state.rule_state.items():
        if isinstance(value, np.ndarray):
            arrays[CHECKPOINT_PREFIX + name] = value
        else:
            scalars[name] = value
    if state.best_weights is not None:
        arrays[CHECKPOINT_PREFIX + "best_weights"] = state.best_weights
    history = [{"epoch": r.epoch, "seconds": r.seconds, "stats": r.stats, "dev": r.dev} for r in state.history]
    snapshot.metadata = _plain({
        "training": {**run_key["params"], "trainer_options": run_key["trainer_options"], "best_epoch": state.epoch,
                     "n_sentences": run_key["n_sentences"], "n_tokens": run_key["n_tokens"]},
        "input": input_metadata,
        "checkpoint": {
            "epoch": state.epoch, "rule_state": scalars, "history": history, "best_epoch": state.best_epoch,
            "best_score": state.best_score if np.isfinite(state.best_score) else None, "run": run_key,
        },
    })
    snapshot.save(path, extra_arrays=arrays)


def read_checkpoint(path, run_key=None, epochs=None):
    """The ``LoopState`` stored in a checkpoint file written by ``fit(checkpoint=...)``.

    run_key : what the run continuing it must share with the run that wrote it (see ``fit``), or
        None (not checked); epochs : the epochs the continuing run ends at, or None.
    """
    from .errors import ModelFileError
    from .npzfile import read_npz
    from .train import EpochRecord, LoopState

    arrays, meta = read_npz(path, "checkpoint")
    saved = meta.get("checkpoint")
    if not isinstance(saved, dict):
        raise ModelFileError(f"{path}: not a checkpoint (a model file without the trainer's state)")
    if run_key is not None and saved["run"] != run_key:
        differ = sorted(k for k in set(run_key) | set(saved["run"]) if run_key.get(k) != saved["run"].get(k))
        if "params" in differ:
            ours, theirs = run_key["params"], saved["run"]["params"]
            differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k)) + differ[1:]
        raise ConfigError(f"{path}: checkpoint of another run (it differs in: {', '.join(differ)})")
    if epochs is not None and saved["epoch"] > epochs:
        raise ConfigError(f"{path}: checkpoint after epoch {saved['epoch']}, beyond the {epochs} epochs asked for")
    rule_state = {k[len(CHECKPOINT_PREFIX):]: v for k, v in arrays.items() if k.startswith(CHECKPOINT_PREFIX)}
    best_weights = rule_state.pop("best_weights", None)
    rule_state.update(saved["rule_state"])
    history = [EpochRecord(r["epoch"], r["seconds"], r["stats"], r["dev"]) for r in saved["history"]]
    best_score = saved["best_score"] if saved["best_score"] is not None else -np.inf
    return LoopState(saved["epoch"], rule_state, history, saved["best_epoch"], best_score, best_weights)


def drop_missing_label(encoder, encoded, missing_label):
    """Unlabelled tokens: remove ``missing_label`` from the encoder's labels and give its tokens
    the gold id -1 (the later labels move down by one; labels stay in sorted order)."""
    if missing_label not in encoder.labels_:
        return
    missing = encoder.labels_.index(missing_label)
    encoder.labels_.remove(missing_label)
    if not encoder.labels_:
        raise ValueError(f"every training token has the missing label {missing_label!r}")
    gold = encoded.labels
    gold[gold == missing] = -1
    gold[gold > missing] -= 1


def forced_label_ids(model, forced, missing_label, path="<forced>", line_numbers=None):
    """int64 (n_tokens,) label ids of a forced-label column (flat list of str or None), -1 where the
    label is free (None or ``missing_label``).

    Raises InputFormatError naming path:line (or the token number) for a label the model does not
    know. The transition constraint is checked by ``check_forced``."""
    index = {label: i for i, label in enumerate(model.labels)}
    ids = np.full(len(forced), -1, dtype=np.int64)
    for i, label in enumerate(forced):
        if label is None or label == missing_label:
            continue
        if label not in index:
            raise _forced_error(path, line_numbers, i, f"forced label {label!r} is not a label of the model")
        ids[i] = index[label]
    return ids


def check_forced(model, ids, sentence_offsets, path="<forced>", line_numbers=None):
    """InputFormatError when the transition constraint forbids a forced label after the start of
    its sentence or after the forced label of the token before it."""
    penalty = model.mask_penalty
    start = model.n_labels
    first = np.zeros(len(ids), dtype=bool)
    first[sentence_offsets[:-1][np.diff(sentence_offsets) > 0]] = True
    prev = np.concatenate([[start], ids[:-1]])
    prev[first] = start
    forbidden = penalty[np.where(prev < 0, start, prev), np.maximum(ids, 0)] == -np.inf
    bad = np.flatnonzero((ids >= 0) & (prev != -1) & forbidden)
    if len(bad):
        i = int(bad[0])
        after = "at the start of a sentence" if prev[i] == start else f"after {model.labels[prev[i]]!r}"
        raise _forced_error(path, line_numbers, i, f"forced label {model.labels[ids[i]]!r} is not allowed {after} "
                                                   f"(constraint {model.constrain!r})")


def _forced_error(path, line_numbers, i, message):
    if line_numbers is not None and len(line_numbers) > i and line_numbers[i] > 0:
        return InputFormatError(path, int(line_numbers[i]), message)
    return InputFormatError(path, None, f"token {i + 1}: {message}")


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
    all_pairs : True: a weight for every (feature, label) pair; False: only for the pairs seen in
        training (a feature with each gold label it occurs with), as CRFsuite's default
    columns : names of the token values when fitting on plain lists
    missing_label : None, or the label symbol (e.g. "?") of an unlabelled token. Training takes
        the best labeling consistent with the known labels as the gold (perceptron, hinge), the
        likelihood of the known labels (crf) or only the tokens whose label and history are known
        (memm); the symbol is never a label of the model. In ``predict(X, forced=...)`` it marks a
        free token.
    l2, eta0, batch_size, cost, average_start, calibration_sentences, l1, promotion, demotion,
    initial_weight : options of the learning rules
        that declare them (``structperc.train.TRAINERS[trainer].params``); None: the rule's default.
        Setting one that the chosen rule does not take is a ConfigError.
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
    labels_ : list of str
    history_ : list of EpochRecord
    n_iter_ : the epoch whose weights were kept (best on dev, or the last)
    """

    def __init__(self, templates="chunk", trainer="perceptron", epochs=10, average=None, min_count=0,
                 rare_threshold=5, constrain=None, order=1, tag_dict=None, seed=0, columns=None,
                 missing_label=None, l2=None, eta0=None, batch_size=None, cost=None, average_start=None,
                 calibration_sentences=None, all_pairs=ALL_PAIRS_DEFAULT, workers=1, scheduler=None,
                 mix="uniform", hash_bits=None, cache_dir=None, l1=None, promotion=None, demotion=None,
                 initial_weight=None, lexicons=None, lexicon_lower=False, resumable=False):
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
        self.missing_label = missing_label
        self.l2 = l2
        self.eta0 = eta0
        self.batch_size = batch_size
        self.cost = cost
        self.average_start = average_start
        self.calibration_sentences = calibration_sentences
        self.all_pairs = all_pairs
        self.workers = workers
        self.scheduler = scheduler
        self.mix = mix
        self.hash_bits = hash_bits
        self.cache_dir = cache_dir
        self.l1 = l1
        self.promotion = promotion
        self.demotion = demotion
        self.initial_weight = initial_weight
        self.resumable = resumable
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

    def _mixing(self, client=None):
        return client is not None or self.scheduler is not None or self.workers != 1

    def check_engine(self, client=None):
        """ConfigError for engine options that are invalid or do not apply (--mix without mixing)."""
        from .train import TRAINERS
        from .train.mixing import MIXES, check_mix

        if int(self.workers) != self.workers or self.workers < 1:
            raise ConfigError(f"workers must be a positive integer, got {self.workers!r}")
        if self.scheduler is not None and self.workers != 1:
            raise ConfigError("--workers and --scheduler exclude each other (the scheduler's workers are used)")
        if self.mix not in MIXES:
            raise ConfigError(f"unknown mix {self.mix!r}: choose one of {', '.join(MIXES)}")
        if self.mix != "uniform" and not self._mixing(client):
            raise ConfigError("--mix applies only to parameter mixing (--workers N > 1 or --scheduler)")
        if self.trainer in TRAINERS:
            check_mix(self.mix, TRAINERS[self.trainer])

    def _encoder(self):
        lexicons = read_lexicons(self.lexicons, self.lexicon_lower)
        return FeatureEncoder(self.templates, self.min_count, self.rare_threshold, hash_bits=self.hash_bits,
                              lexicons=lexicons)

    # ------------------------------------------------------------------ training
    def fit_file(self, path, dev=None, callback=None, progress=None, checkpoint=None, checkpoint_every=1,
                 resume=None, client=None, partial=False, **reader_options):
        """Read a labelled corpus file (and a dev file) with ``read_corpus`` and fit; returns self.

        partial : continue training the fitted model (``partial_fit``) instead of fitting anew.
        reader_options : keyword arguments of ``read_corpus`` (format, columns, label, encoding,
            only_types, ...). They are recorded in the model with the format and columns found, and
            ``read``, ``tag_file`` and ``evaluate_file`` use them.
        checkpoint, checkpoint_every, resume, client : as in ``fit``.
        """
        from .readers import read_corpus

        self.trainer_options()  # a bad option fails before a large corpus is read
        self.check_engine(client)
        dev_corpus = read_corpus(dev, **reader_options) if dev is not None else None
        reader_options = {k: v for k, v in reader_options.items() if v is not None or k != "tag_sep"}
        run = dict(dev=dev_corpus, progress=progress, callback=callback, checkpoint=checkpoint,
                   checkpoint_every=checkpoint_every, resume=resume, client=client)
        if partial and hasattr(self, "model_"):
            # continued training encodes with the fitted model's feature index: no cache
            return self.partial_fit(read_training_corpus(path, **reader_options), input_metadata=reader_options,
                                    **run)
        if self.cache_dir is not None:
            encoder, encoded, found = self._cached_encoding(path, reader_options)
            return self._fit_encoded(encoder, encoded, {**reader_options, **found}, **run)
        # no reference to the training corpus is kept here: ``fit`` drops its strings once encoded
        return self.fit(read_training_corpus(path, **reader_options), input_metadata=reader_options, **run)

    def _cached_encoding(self, path, reader_options):
        """(encoder, encoded corpus, what was read: format, columns, label) of the training file
        ``path``, from ``cache_dir`` (memory-mapped) or read, encoded and stored there."""
        from .cache import load_or_build
        from .encode import EncodedCorpus
        from .readers import read_corpus

        fields = ("sentence_offsets", "feature_offsets", "feature_ids", "pair_offsets", "pair_ids", "labels",
                  "word_ids")

        def build():
            corpus = read_corpus(path, **reader_options)
            if corpus.label is None:
                raise ValueError("training data has no label column")
            encoder = self._encoder()
            encoded = encoder.fit_transform(corpus, corpus.columns[corpus.label])
            state, meta = encoder.state()
            arrays = {f"encoder__{k}": v for k, v in state.items()}
            arrays.update({f"encoded__{k}": getattr(encoded, k) for k in fields if getattr(encoded, k) is not None})
            read = {"format": corpus.format, "columns": list(corpus.columns), "label": corpus.label}
            return arrays, {"encoder": meta, "input": read}

        templates = self.templates if isinstance(self.templates, str) else list(self.templates)
        options = {"templates": templates, "min_count": self.min_count, "rare_threshold": self.rare_threshold,
                   "hash_bits": self.hash_bits, "reader": reader_options}
        if isinstance(templates, str) and os.path.isfile(templates):
            options["template_file"] = file_sha256(templates)
        arrays, meta, _ = load_or_build(self.cache_dir, path, options, build)
        state = {k[len("encoder__"):]: v for k, v in arrays.items() if k.startswith("encoder__")}
        encoder = FeatureEncoder.from_state(state, meta["encoder"])
        encoded = EncodedCorpus(**{k: arrays.get(f"encoded__{k}") for k in fields})
        return encoder, encoded, meta["input"]

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
        self.trainer_options()
        self.check_engine(client)
        if _dicts(X):
            if self.tag_dict:
                raise ConfigError("tag_dict needs templates over a word column, not feature dicts")
            if self.hash_bits is not None:
                raise ConfigError("hash_bits applies to templates, not to feature dicts")
            encoder = AttributeEncoder(self.min_count)
            encoded = encoder.fit_transform(X, _flat_labels(X, y))
            read = {**(input_metadata or {}), "format": "dicts"}
        else:
            corpus = _as_corpus(X, y, self.columns)
            if corpus.label is None:
                raise ValueError("training data has no label column")
            encoder = self._encoder()
            encoded = encoder.fit_transform(corpus, corpus.columns[corpus.label])
            read = {**(input_metadata or {}), "format": corpus.format, "columns": list(corpus.columns),
                    "label": corpus.label}
            corpus = None
        # the training strings are not needed past encoding (freed here when the caller holds none)
        del X, y
        return self._fit_encoded(encoder, encoded, read, dev, dev_y, progress, callback, checkpoint,
                                 checkpoint_every, resume, client)

    def _fit_encoded(self, encoder, encoded, read, dev=None, dev_y=None, progress=None, callback=None,
                     checkpoint=None, checkpoint_every=1, resume=None, client=None):
        from .train import make_rule

        options = self.trainer_options()
        self.check_engine(client)
        if self._mixing(client) and (checkpoint is not None or resume is not None):
            raise ConfigError("checkpoints and --resume apply to serial training, not to parameter mixing")
        if self.missing_label is not None:
            drop_missing_label(encoder, encoded, self.missing_label)
        tag_dict = None
        if self.tag_dict:
            if encoded.word_ids is None:
                raise ConfigError("--tag-dict needs templates that use the word column")
            known = encoded.labels >= 0
            n_words = len(encoder.vocabularies_["word"]) + FIRST_ID
            tag_dict = build_tag_dict(encoded.word_ids[known], encoded.labels[known], n_words, len(encoder.labels_),
                                      self.tag_dict)
        else:
            encoded.word_ids = None  # only the tag dictionary reads the word ids
        emission_pairs = None
        if not self.all_pairs:
            emission_pairs = gold_pairs(encoded.feature_offsets, encoded.feature_ids, encoded.labels,
                                        encoder.n_features_, len(encoder.labels_))
        rule = make_rule(self.trainer, **options)
        model = LinearChainModel(encoder, order=self.order, constrain=self.constrain, tag_dict=tag_dict,
                                 normalization=rule.normalization, emission_pairs=emission_pairs)
        self.model_ = model
        self.labels_ = model.labels
        self._train(rule, model, encoded, options, read, dev, dev_y, progress, callback, checkpoint=checkpoint,
                    checkpoint_every=checkpoint_every, resume=resume, client=client)
        return self

    def _train(self, rule, model, encoded, options, read, dev, dev_y, progress, callback, checkpoint=None,
               checkpoint_every=1, resume=None, client=None, init_state=None, start_epoch=0):
        """Run ``rule`` on the encoded training data (serially, or by parameter mixing), record the
        run in the model's metadata, prune.

        resume : a checkpoint path (``fit``); init_state : the model's kept training state when
            continuing a fitted model (``partial_fit``); start_epoch : the epochs that model has run."""
        from .train import Problem, train_online

        encoder = model.encoder
        dev_score = None
        dev_sentences = None
        if dev is not None:
            dev_encoded, dev_gold = self._encode(dev, dev_y)
            dev_sentences = dev_encoded.n_sentences
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

        params = self.get_params()
        # how and where the run was computed is not part of the model; parameter mixing is
        for name, default in (("workers", 1), ("scheduler", None), ("mix", "uniform"), ("hash_bits", None),
                              ("cache_dir", None)):
            if params[name] == default or name in ("scheduler", "cache_dir"):
                del params[name]
        params["templates"] = self.templates if isinstance(self.templates, str) else list(self.templates)
        lexicons = getattr(encoder, "lexicons", None)  # feature dicts have none
        params["lexicons"] = {name: lex.source for name, lex in (lexicons or {}).items()} or None
        if params["all_pairs"] == ALL_PAIRS_DEFAULT:
            del params["all_pairs"]  # recorded only when not the default: files with the default stay as they were
        if not params["resumable"]:
            del params["resumable"]  # recorded only when set, like all_pairs
        # what a checkpoint must share with the run that continues it (epochs may grow)
        run_key = _plain({
            "params": {k: v for k, v in params.items() if k != "epochs"}, "trainer_options": options,
            "input": read, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
            "features_seen": encoder.n_features_, "pair_features_seen": encoder.n_pair_features_,
            "dev_sentences": dev_sentences,
        })
        loop_state = None
        if resume is not None:
            loop_state = read_checkpoint(resume, run_key, self.epochs)
        write_checkpoint = None
        if checkpoint is not None:
            if int(checkpoint_every) != checkpoint_every or checkpoint_every < 1:
                raise ConfigError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")

            def write_checkpoint(state):
                if state.epoch % checkpoint_every == 0:
                    _write_checkpoint(checkpoint, model, rule, state, run_key, read)

        problem = Problem(model, model.data(encoded))
        problem.resume = init_state
        if self._mixing(client):
            self.history_, self.n_iter_ = self._train_mixed(rule, problem, dev_score, progress, on_epoch, client)
            params["workers"] = self.n_shards_
            params["mix"] = self.mix
        else:
            self.history_, self.n_iter_ = train_online(
                rule, problem, self.epochs, seed=self.seed, dev_score=dev_score, progress=progress,
                callback=on_epoch, checkpoint=write_checkpoint, resume=loop_state, start_epoch=start_epoch,
            )
        self.n_iter_ += start_epoch
        previous = model.metadata.get("training")
        model.metadata["training"] = {
            **params, "trainer_options": options,
            "best_epoch": self.n_iter_, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
        }
        if previous is not None:
            history = previous.pop("runs", [])
            model.metadata["training"]["runs"] = history + [previous]
        if start_epoch:
            model.metadata["training"]["epochs_done"] = last_epoch
        model.metadata["input"] = read
        if dev is not None:
            model.metadata["dev_history"] = [r.dev for r in self.history_]
        model.metadata["training"]["features_seen"] = encoder.n_features_
        model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
        model.training_state = kept_state or None
        rule = None  # its buffers (the raw weights, the averaging sums) are no longer needed
        model.prune()

    def partial_fit(self, X, y=None, dev=None, dev_y=None, progress=None, callback=None, input_metadata=None,
                    checkpoint=None, checkpoint_every=1, resume=None, client=None):
        """Continue training the fitted (or loaded) model on X for ``epochs`` more epochs; returns self.

        The templates must be the model's. Attributes (dict input) and labels that are new get zero
        weights first; with template input the feature index is the model's (a feature it does not
        hold is not added). A model of gold feature-label pairs keeps its pairs (a new feature gets
        none). The shuffles continue the seed's sequence after the epochs already run.
        A perceptron continues its averaging exactly when the model carries its training state
        (fitted with ``resumable=True``); the other rules start their schedule and average afresh
        from the kept weights. Without a fitted model this is ``fit``. The other arguments are
        ``fit``'s.
        """
        from .templates import load_templates
        from .train import make_rule

        run = dict(checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume, client=client)
        if not hasattr(self, "model_"):
            return self.fit(X, y, dev=dev, dev_y=dev_y, progress=progress, callback=callback,
                            input_metadata=input_metadata, **run)
        options = self.trainer_options()
        self.check_engine(client)
        model, encoder = self.model_, self.model_.encoder
        rule = make_rule(self.trainer, **options)
        if rule.normalization != model.normalization:
            raise ConfigError(f"a {self.trainer} model has {rule.normalization} normalization; "
                              f"this model has {model.normalization}")
        if _dicts(X):
            if not isinstance(encoder, AttributeEncoder):
                raise ConfigError("this model was trained on token columns with templates, not on feature dicts")
            encoded = encoder.extend(X, _flat_labels(X, y))
            read = {**(input_metadata or {}), "format": "dicts"}
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
            if self.missing_label is not None:
                known.add(self.missing_label)
            encoder.labels_ = encoder.labels_ + sorted({label for label in labels if label not in known})
            if self.missing_label is not None and self.missing_label in labels:
                # the missing symbol takes the id after the labels for the encoding, then becomes -1
                encoder.labels_.append(self.missing_label)
            encoded = encoder.transform(corpus)
            if self.missing_label is not None:
                drop_missing_label(encoder, encoded, self.missing_label)
            read = {**(input_metadata or {}), "format": corpus.format, "columns": list(corpus.columns),
                    "label": corpus.label}
        if model.tag_dict is None:
            encoded.word_ids = None
        model.grow(encoder.n_features_, encoder.labels_)
        previous = model.metadata.get("training", {})
        init_state = model.training_state if previous.get("trainer") == self.trainer else None
        self.labels_ = model.labels
        self._train(rule, model, encoded, options, read, dev, dev_y, progress, callback, init_state=init_state,
                    start_epoch=int(previous.get("epochs_done", previous.get("epochs", 0))), **run)
        return self

    def _train_mixed(self, rule, problem, dev_score, progress, callback, client):
        from .train.mixing import dask_client, train_mixed

        def run(client):
            self.n_shards_ = len(client.scheduler_info(n_workers=-1)["workers"])
            return train_mixed(rule, problem, self.epochs, client, seed=self.seed, mix=self.mix,
                               dev_score=dev_score, progress=progress, callback=callback)

        if client is not None:
            return run(client)
        with dask_client(self.workers, self.scheduler) as client:
            return run(client)

    # ------------------------------------------------------------------ prediction
    def predict_corpus(self, corpus, forced=None):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's score.

        forced : None, or int64 (n_tokens,) label ids to keep, -1 where free (``forced_label_ids``).
        """
        encoded = self.model_.encoder.transform(corpus, with_labels=False)
        ids, scores = self._predict_encoded(encoded, forced)
        return [self.model_.labels[i] for i in ids], scores

    def _predict_encoded(self, encoded, forced=None):
        return self.model_.decode(encoded, forced=forced)

    def missing_symbol(self):
        """The label symbol of a free token in forced labels: ``missing_label``, or "?" when unset."""
        return self.missing_label if self.missing_label is not None else "?"

    def forced_ids(self, corpus, forced):
        """Label ids of ``forced`` (per-sentence lists of labels, or None for a free sentence; a
        token's None or ``missing_label`` is free) for the sentences of ``corpus`` (a Corpus or an encoded
        corpus), checked."""
        o = corpus.sentence_offsets
        if len(forced) != len(o) - 1:
            raise ValueError(f"forced has {len(forced)} sentences, X has {len(o) - 1}")
        flat = []
        for i, labels in enumerate(forced):
            n = int(o[i + 1] - o[i])
            labels = [None] * n if labels is None else list(labels)
            if len(labels) != n:
                raise ValueError(f"forced sentence {i} has {len(labels)} labels, X has {n} tokens")
            flat.extend(labels)
        ids = forced_label_ids(self.model_, flat, self.missing_symbol())
        check_forced(self.model_, ids, o)
        return ids

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

    def predict(self, X, forced=None):
        """Per-sentence lists of predicted labels.

        forced : None, or per sentence None or a list of labels, one per token: a label keeps the
            token at that label, None or the missing symbol (``missing_label``, "?" when unset)
            leaves it free.
        """
        encoded, _ = self._encode(X)
        ids, _ = self._predict_encoded(encoded, None if forced is None else self.forced_ids(encoded, forced))
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

    def tag_file(self, input, output=None, format=None, marginals=None, probability=False, tag_sep=None,
                 force_column=None):
        """Read, tag and write batch by batch: the input columns plus the predicted label.

        input : file, or "-" for standard input; read lazily, so files larger than memory stream.
        output : file written atomically (nothing is left on an error or an interrupt), or None for
            standard output.
        marginals : None, "best" (P(predicted label | x) per token) or "all" (one "label:P" column
            per label); probability : write "# probability P(y|x)" before each sentence. Both need a
            probabilistic model (crf, memm).
        force_column : None, or the 1-based input column holding a forced label or the missing
            symbol (``missing_label``, or "?" when the model was trained without one) per token;
            decoding and the marginals keep the forced labels. A forced label that the model does
            not know or that the transition constraint forbids is an InputFormatError at its line.

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
        options = self.reader_options(format, tag_sep)
        force_name = None
        if force_column is not None:
            columns = list(options.get("columns") or [])
            if int(force_column) < 1:
                raise ConfigError(f"--force-column is 1-based, got {force_column!r}")
            columns += [f"col{i}" for i in range(len(columns) + 1, int(force_column) + 1)]
            force_name = columns[int(force_column) - 1]
            options["columns"] = columns
        missing = self.missing_symbol()
        start = time.perf_counter()
        sentences = tokens = 0
        with open_output(output) as out:
            for batch in iter_corpus(input, **options, require_label=False):
                encoded = model.encoder.transform(batch, with_labels=False)
                forced = None
                if force_name is not None:
                    if force_name not in batch.columns:
                        raise ConfigError(f"--force-column {force_column}: the input has no column {force_column}")
                    forced = forced_label_ids(model, batch.columns[force_name], missing, batch.path, batch.line_numbers)
                    check_forced(model, forced, batch.sentence_offsets, batch.path, batch.line_numbers)
                ids, _ = self._predict_encoded(encoded, forced)
                extra, headers = None, None
                if marginals or probability:
                    node, log_probability = label_marginals(model, encoded, forced=forced)
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
