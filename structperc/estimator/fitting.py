"""``Fitting``: a fit, from validated parameters (``settings.Settings``) down to a trained model.

The estimator calls it and it calls nothing back: ``prepare`` chooses the structure, builds the encoder,
encodes the training data and builds the model (``Prepared``); ``train`` runs the learning rule on it,
with dev scoring, checkpoints and parameter mixing, and hands back the trained model and its history
(``Fit``). The estimator then adopts what it is given.
"""
from dataclasses import dataclass, field

import numpy as np

from structperc.utils import heap
from structperc._kernels.score.emission import gold_pairs
from structperc.train.checkpoint import plain_json, read_checkpoint, write_checkpoint
from structperc.chunks import is_bio
from structperc.errors import ConfigError
from structperc.evaluate.metrics import evaluate_labels
from structperc.features.encode import FIRST_ID
from structperc.features.presets import choose_structure
from structperc.model.forcing import drop_missing_label
from structperc.model.layouts import build_tag_dict, choose_layout, layout_metadata
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.inputs import open_input

# whether a model keeps a weight for every (feature, label) pair: None chooses from the number of labels
# (``structperc.model.layouts.choose_layout``)
ALL_PAIRS_DEFAULT = None


@dataclass
class Structure:
    """The templates and constraint a fit uses (the ones given, or those chosen from the data for
    None), and why, in a few words."""

    templates: object
    constrain: str
    reason: str

    def __iter__(self):  # (templates, constrain, reason), as the estimator's attributes take them
        return iter((self.templates, self.constrain, self.reason))


@dataclass
class Prepared:
    """A model ready to train: the encoder and the encoded training data, how the data was read, the
    structure, the model at its starting weights and the rule that trains it. A continued model adds
    its kept training state and the epochs it has run."""

    encoder: object
    encoded: object
    read: dict
    structure: Structure
    model: LinearChainModel
    rule: object
    continued: dict | None = None
    start_epoch: int = 0


@dataclass
class Fit:
    """What ``Fitting.train`` hands back: the trained model, the epochs' records, the epoch whose
    weights were kept, and the shards of parameter mixing (None when serial)."""

    model: LinearChainModel
    history: list = field(default_factory=list)
    n_iter: int = 0
    n_shards: int | None = None


class Fitting:
    """One fit of ``settings`` (a ``Settings``).

    progress : callable(epoch, done, total, stats), or None; callback : callable(EpochRecord) as each
    epoch ends; checkpoint : a path written every ``checkpoint_every`` epochs, or None; resume : a
    checkpoint to continue from, or None (see ``Tagger.fit``)."""

    def __init__(self, settings, progress=None, callback=None, checkpoint=None, checkpoint_every=1, resume=None):
        if checkpoint is not None and (int(checkpoint_every) != checkpoint_every or checkpoint_every < 1):
            raise ConfigError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")
        self.settings = settings
        self.progress, self.callback = progress, callback
        self.checkpoint, self.checkpoint_every, self.resume = checkpoint, checkpoint_every, resume

    def choose(self, columns, labels, sentence_offsets):
        """The Structure of training data with these columns, labels and sentences (``choose_structure``)."""
        s = self.settings
        return Structure(*choose_structure(s.templates, s.constrain, columns, labels, sentence_offsets,
                                           s.missing_label))

    def encode(self, source):
        """(encoder, encoded training data, Structure) of an input adapter (``inputs.open_input``):
        checked, its structure chosen, its encoder fitted."""
        source.check_training(self.settings)
        structure = self.choose(source.columns, source.labels, source.sentence_offsets)
        encoder = source.new_encoder(self.settings, structure.templates)
        encoded = source.fit_transform(encoder, self.settings.encoding_threads)
        if source.release:
            heap.trim()  # the encoding's temporaries
        return encoder, encoded, structure

    def prepare(self, source):
        """The Prepared model of the training data of an input adapter."""
        encoder, encoded, structure = self.encode(source)
        return self.prepare_encoded(encoder, encoded, source.read, structure)

    def prepare_encoded(self, encoder, encoded, read, structure):
        """The Prepared model of encoded training data (``read``: how it was read)."""
        if self.settings.missing_label is not None:
            drop_missing_label(encoder, encoded, self.settings.missing_label)
        rule = self.settings.make_rule()
        model = new_model(self.settings, structure.constrain, encoder, encoded, rule)
        return Prepared(encoder, encoded, read, structure, model, rule)

    def prepare_continued(self, model, structure, source):
        """The Prepared model that continues training the fitted ``model`` (of ``structure``) on the
        training data of an input adapter (``Tagger.partial_fit``)."""
        settings = self.settings
        check_unchanged_structure(settings, model)
        rule = settings.make_rule()
        if rule.normalization != model.normalization:
            raise ConfigError(f"a {settings.trainer} model has {rule.normalization} normalization; "
                              f"this model has {model.normalization}")
        encoder = model.encoder
        encoded = source.extend(encoder, settings, structure.templates)
        if model.tag_dict is None:
            encoded.word_ids = None
        pairs = None
        if model.emission_pairs is not None:
            pairs = seen_pairs(encoded, encoder.n_features_, len(encoder.labels_),
                               int(model.metadata.get("layout", {}).get("dense_count") or settings.dense_count or 0))
        model.grow(encoder.n_features_, encoder.labels_, encoder.n_pair_features_, pairs)
        previous = model.metadata.get("training", {})
        continued = model.training_state if previous.get("trainer") == settings.trainer else None
        return Prepared(encoder, encoded, source.read, structure, model, rule, continued,
                        int(previous.get("epochs_done", previous.get("epochs", 0))))

    def train(self, prepared, dev=None, dev_y=None):
        """Train the Prepared model (dev : held-out data, with dev_y for token lists); the Fit."""
        return run_training(self, prepared, dev, dev_y)


def new_model(settings, constrain, encoder, encoded, rule):
    """The LinearChainModel that ``rule`` trains on the encoded training data: the settings' order and
    the constraint ``constrain``, and the layout of its weights (``model.layouts.choose_layout``: gold pairs with a
    dense count and a tag dictionary, when asked for or when the labels are many). ``encoded.word_ids``
    is dropped when no tag dictionary reads it."""
    layout = choose_layout(len(encoder.labels_), encoded.n_tokens, settings.params,
                           words=getattr(encoded, "word_ids", None) is not None)
    tag_dict = None
    if layout.tag_dict:
        if encoded.word_ids is None:
            raise ConfigError("tag_dict needs templates that use the word column")
        known = encoded.labels >= 0
        n_words = len(encoder.vocabularies_["word"]) + FIRST_ID
        tag_dict = build_tag_dict(encoded.word_ids[known], encoded.labels[known], n_words, len(encoder.labels_),
                                  layout.tag_dict)
    else:
        encoded.word_ids = None  # only the tag dictionary reads the word ids
    emission_pairs = None
    if not layout.all_pairs:
        emission_pairs = seen_pairs(encoded, encoder.n_features_, len(encoder.labels_), int(layout.dense_count or 0))
    constrain = None if constrain == "none" else constrain  # None: files as before
    model = LinearChainModel(encoder, order=settings.order, constrain=constrain, tag_dict=tag_dict,
                             normalization=rule.normalization, emission_pairs=emission_pairs)
    del emission_pairs  # one label per pair: the model keeps the lists of the rows that need one
    model.metadata["layout"] = layout_metadata(layout)
    return model


def seen_pairs(encoded, n_features, n_labels, dense_count):
    """``gold_pairs`` of the encoded corpus: the (feature, gold label) pairs of its tokens, and of its
    attributes of value 0 when it has some (``features.dicts``: CRFsuite makes their pairs too); these
    are read as tokens appended to the corpus, with the same gold labels."""
    offsets, ids, gold = encoded.feature_offsets, encoded.feature_ids, encoded.labels
    zero_offsets = getattr(encoded, "zero_offsets", None)
    if zero_offsets is not None and len(encoded.zero_ids):
        offsets = np.concatenate([offsets, offsets[-1] + zero_offsets[1:]])
        ids = np.concatenate([np.asarray(ids, dtype=np.int64), np.asarray(encoded.zero_ids, dtype=np.int64)])
        gold = np.concatenate([gold, gold])
    return gold_pairs(offsets, ids, gold, n_features, n_labels, dense_count)


def continued_structure(fitted, given, lexicons=None):
    """The parameters that shape the features and labels of a run continuing the fitted Tagger
    ``fitted`` (``train --init``): the model's own. given : name -> the value asked for (None: not
    asked); asking for another value than the model's, or for lexicons, is a ConfigError."""
    if lexicons:
        raise ConfigError("lexicons does not apply to a continued model: it keeps the lexicon entries it was "
                          "trained with")
    params = fitted.get_params()
    for name, value in given.items():
        if value is not None and value != params.get(name):
            raise ConfigError(f"{name}={value} differs from the continued model's "
                              f"({params.get(name)}): a continued model keeps its own; drop the option or train anew")
    return {name: params.get(name) for name in given}


def run_training(fitting, prepared, dev=None, dev_y=None):
    """Run the Prepared model's rule on its encoded training data (serially, or by parameter mixing),
    record the run in the model's metadata, prune; the Fit."""
    from structperc.train import Problem, train_online

    settings, rule, model, encoded = fitting.settings, prepared.rule, prepared.model, prepared.encoded
    structure, read, start_epoch = prepared.structure, prepared.read, prepared.start_epoch
    encoder = model.encoder
    options = settings.rule_options
    dev_score = None
    dev_sentences = None
    if dev is not None:
        source = open_input(dev, dev_y, settings.columns, encoder=encoder)
        dev_encoded, dev_gold = source.transform(encoder), source.labels
        dev_sentences = dev_encoded.n_sentences
        chunks = is_bio(model.labels)

        def dev_score(weights):
            predicted, _ = model.decode(dev_encoded, weights)
            names = model.label_names(predicted)
            result = evaluate_labels(dev_gold, names, dev_encoded.sentence_offsets, chunks)
            result["score"] = result["f1"] if chunks else result["accuracy"]
            return result

    last_epoch = start_epoch + settings.n_epochs
    kept_state = {}
    callback = fitting.callback

    def on_epoch(record):
        record.epoch += start_epoch
        if (record.epoch == last_epoch or record.final) and settings.resumable:
            kept_state.update(rule.training_state())
        if callback is not None:
            callback(record)

    params = dict(settings.params)
    # how and where the run was computed is not part of the model; parameter mixing is
    for name, default in (("workers", 1), ("scheduler", None), ("mix", "uniform"), ("hash_bits", None),
                          ("cache_dir", None)):
        if params[name] == default or name in ("scheduler", "cache_dir"):
            del params[name]
    # what was used: a choice from the data (templates or constrain None) is recorded as made, and why
    chosen = {name: getattr(structure, name) for name in ("templates", "constrain") if params[name] is None}
    params.update(chosen)
    if not isinstance(params["templates"], (str, type(None))):  # None: feature dicts
        params["templates"] = list(params["templates"])
    if chosen:
        params["chosen"] = {**chosen, "reason": structure.reason}
    lexicons = getattr(encoder, "lexicons", None)  # feature dicts have none
    params["lexicons"] = {name: lex.source for name, lex in (lexicons or {}).items()} or None
    if params["all_pairs"] == ALL_PAIRS_DEFAULT:
        del params["all_pairs"]  # recorded only when not the default: files with the default stay as they were
    if not params["resumable"]:
        del params["resumable"]  # recorded only when set, like all_pairs
    if params["dense_count"] is None:
        del params["dense_count"]
    # what a checkpoint must share with the run that continues it (epochs may grow)
    run_key = plain_json({
        "params": {k: v for k, v in params.items() if k != "epochs"}, "trainer_options": options,
        "input": read, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
        "features_seen": encoder.n_features_, "pair_features_seen": encoder.n_pair_features_,
        "dev_sentences": dev_sentences,
    })
    loop_state = None
    if fitting.resume is not None:
        loop_state = read_checkpoint(fitting.resume, run_key, settings.n_epochs)
    save_checkpoint = None
    if fitting.checkpoint is not None:
        checkpoint, checkpoint_every = fitting.checkpoint, fitting.checkpoint_every

        def save_checkpoint(state):
            if state.epoch % checkpoint_every == 0:
                write_checkpoint(checkpoint, model, state, run_key, read)

    # given no epochs, the rule's stopping rule ends the run (at most n_epochs)
    stop = rule.stopping if settings.epochs is None else None
    problem = Problem(model, model.data(encoded), continued=prepared.continued)
    heap.trim()  # what building the model freed (gold pairs with one label per pair, bit sets)
    n_shards = None
    if settings.mixing:
        history, n_iter, n_shards = mixing_run(settings, rule, problem, dev_score, fitting.progress, on_epoch,
                                               save_checkpoint, loop_state, start_epoch, stop)
        params["workers"] = n_shards
        params["mix"] = settings.mix
    else:
        history, n_iter = train_online(
            rule, problem, settings.n_epochs, seed=settings.seed, dev_score=dev_score, progress=fitting.progress,
            callback=on_epoch, checkpoint=save_checkpoint, resume=loop_state, start_epoch=start_epoch, stop=stop,
        )
    n_iter += start_epoch
    previous = model.metadata.get("training")
    model.metadata["training"] = {
        **params, "trainer_options": options,
        "best_epoch": n_iter, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
    }
    if previous is not None:
        runs = previous.pop("runs", [])
        model.metadata["training"]["runs"] = runs + [previous]
    if start_epoch or settings.epochs is None:  # what a continued run counts from (params hold epochs=None)
        model.metadata["training"]["epochs_done"] = start_epoch + len(history)
    model.metadata["input"] = read
    if dev is not None:
        model.metadata["dev_history"] = [r.dev for r in history]
    model.metadata["training"]["features_seen"] = encoder.n_features_
    model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
    model.training_state = kept_state or None
    # what only the epochs needed: the rule's buffers (raw weights, averaging sums) and the
    # encoded training data (each fit encodes its own; no caller reads it afterwards)
    rule.release()
    problem = None
    prepared.encoded = None
    encoded.release()
    model.prune()
    return Fit(model, history, n_iter, n_shards)


def check_unchanged_structure(settings, model):
    """ConfigError for a structure parameter of ``settings`` set to another value than the fitted
    model's: continued training keeps the model's order, constraint, layout and hashing (None, or
    the value the model has, is fine)."""
    layout = model.metadata.get("layout", {})
    has = {"order": model.order, "constrain": model.constrain or "none",
           "tag_dict": layout.get("tag_dict", model.metadata.get("training", {}).get("tag_dict")),
           "all_pairs": layout.get("all_pairs", model.emission_pairs is None),
           "hash_bits": getattr(model.encoder, "hash_bits", None)}
    for name, value in has.items():
        given = getattr(settings, name)
        if given is not None and given != value and not (name == "tag_dict" and not given and not value):
            raise ConfigError(f"{name}={given!r} differs from the fitted model's ({value!r}): continued "
                              f"training keeps the model's; leave {name} unset or train anew")


def mixing_run(settings, rule, problem, dev_score, progress, callback, checkpoint=None, resume=None,
               start_epoch=0, stop=None):
    """(history, best epoch, shards) of a run by parameter mixing on the settings' client, scheduler or
    a LocalCluster of its workers (``train.mixing``)."""
    from structperc.train.mixing import dask_client, train_mixed

    def run(client):
        shards = len(client.scheduler_info(n_workers=-1)["workers"])
        history, n_iter = train_mixed(rule, problem, settings.n_epochs, client, seed=settings.seed, mix=settings.mix,
                                      dev_score=dev_score, progress=progress, callback=callback,
                                      checkpoint=checkpoint, resume=resume, start_epoch=start_epoch, stop=stop)
        return history, n_iter, shards

    if settings.client is not None:
        return run(settings.client)
    with dask_client(settings.workers, settings.scheduler) as client:
        return run(client)


def recorded_structure(model, templates=None):
    """The Structure a fitted model records (``templates``: the tagger's own, where the model records
    no choice)."""
    chosen = model.metadata.get("training", {}).get("chosen", {})
    return Structure(chosen.get("templates", templates), chosen.get("constrain", model.constrain or "none"),
                     chosen.get("reason", "given"))
