"""The training run of ``Tagger``: the model it trains, dev scoring, checkpoints, parameter mixing,
continued training. Functions of the Tagger they are given; ``Tagger``'s methods call them."""
import numbers

import numpy as np

from structperc.utils import heap
from structperc._kernels.score.emission import gold_pairs
from structperc.train.checkpoint import plain_json, read_checkpoint, write_checkpoint
from structperc.chunks import is_bio
from structperc.errors import ConfigError
from structperc.evaluate.metrics import evaluate_labels
from structperc.features.encode import FIRST_ID
from structperc.model.layouts import build_tag_dict, choose_layout, layout_metadata
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.inputs import open_input

# whether a model keeps a weight for every (feature, label) pair: None chooses from the number of labels
# (``structperc.model.layouts.choose_layout``)
ALL_PAIRS_DEFAULT = None


def new_model(tagger, encoder, encoded, rule):
    """The LinearChainModel that ``rule`` trains on the encoded training data: the tagger's order and
    constraint, and the layout of its weights (``model.layouts.choose_layout``: gold pairs with a
    dense count and a tag dictionary, when asked for or when the labels are many). ``encoded.word_ids``
    is dropped when no tag dictionary reads it."""
    layout = choose_layout(len(encoder.labels_), encoded.n_tokens, tagger.get_params(),
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
    constrain = None if tagger.constrain_ == "none" else tagger.constrain_  # None: files as before
    model = LinearChainModel(encoder, order=tagger.order, constrain=constrain, tag_dict=tag_dict,
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


def run_training(tagger, rule, model, encoded, options, read, dev, dev_y, progress, callback, checkpoint=None,
                 checkpoint_every=1, resume=None, client=None, init_state=None, start_epoch=0):
    """Run ``rule`` on the encoded training data (serially, or by parameter mixing), record the
    run in the model's metadata, prune.

    resume : a checkpoint path (``fit``); init_state : the model's kept training state when
        continuing a fitted model (``partial_fit``); start_epoch : the epochs that model has run."""
    from structperc.train import Problem, train_online

    encoder = model.encoder
    dev_score = None
    dev_sentences = None
    if dev is not None:
        dev_encoded, dev_gold = tagger._encode(dev, dev_y)
        dev_sentences = dev_encoded.n_sentences
        chunks = is_bio(model.labels)

        def dev_score(weights):
            predicted, _ = model.decode(dev_encoded, weights)
            names = model.label_names(predicted)
            result = evaluate_labels(dev_gold, names, dev_encoded.sentence_offsets, chunks)
            result["score"] = result["f1"] if chunks else result["accuracy"]
            return result

    last_epoch = start_epoch + tagger.n_epochs()
    kept_state = {}

    def on_epoch(record):
        record.epoch += start_epoch
        if record.epoch == last_epoch and tagger.resumable:
            kept_state.update(rule.training_state())
        if callback is not None:
            callback(record)

    params = tagger.get_params()
    # how and where the run was computed is not part of the model; parameter mixing is
    for name, default in (("workers", 1), ("scheduler", None), ("mix", "uniform"), ("hash_bits", None),
                          ("cache_dir", None)):
        if params[name] == default or name in ("scheduler", "cache_dir"):
            del params[name]
    # what was used: a choice from the data (templates or constrain None) is recorded as made, and why
    chosen = {name: getattr(tagger, f"{name}_") for name in ("templates", "constrain") if params[name] is None}
    params.update(chosen)
    if not isinstance(params["templates"], (str, type(None))):  # None: feature dicts
        params["templates"] = list(params["templates"])
    if chosen:
        params["chosen"] = {**chosen, "reason": tagger.structure_reason_}
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
    if resume is not None:
        loop_state = read_checkpoint(resume, run_key, tagger.n_epochs())
    save_checkpoint = None
    if checkpoint is not None:
        if int(checkpoint_every) != checkpoint_every or checkpoint_every < 1:
            raise ConfigError(f"checkpoint_every must be a positive integer, got {checkpoint_every!r}")

        def save_checkpoint(state):
            if state.epoch % checkpoint_every == 0:
                write_checkpoint(checkpoint, model, state, run_key, read)

    problem = Problem(model, model.data(encoded))
    heap.trim()  # what building the model freed (gold pairs with one label per pair, bit sets)
    problem.resume = init_state
    if tagger.uses_mixing(client):
        tagger.history_, tagger.n_iter_ = mixing_run(tagger, rule, problem, dev_score, progress, on_epoch, client,
                                                         save_checkpoint, loop_state, start_epoch)
        params["workers"] = tagger.n_shards_
        params["mix"] = tagger.mix
    else:
        tagger.history_, tagger.n_iter_ = train_online(
            rule, problem, tagger.n_epochs(), seed=tagger.seed, dev_score=dev_score, progress=progress,
            callback=on_epoch, checkpoint=save_checkpoint, resume=loop_state, start_epoch=start_epoch,
        )
    tagger.n_iter_ += start_epoch
    previous = model.metadata.get("training")
    model.metadata["training"] = {
        **params, "trainer_options": options,
        "best_epoch": tagger.n_iter_, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
    }
    if previous is not None:
        history = previous.pop("runs", [])
        model.metadata["training"]["runs"] = history + [previous]
    if start_epoch:
        model.metadata["training"]["epochs_done"] = last_epoch
    model.metadata["input"] = read
    if dev is not None:
        model.metadata["dev_history"] = [r.dev for r in tagger.history_]
    model.metadata["training"]["features_seen"] = encoder.n_features_
    model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
    model.training_state = kept_state or None
    # what only the epochs needed: the rule's buffers (raw weights, averaging sums) and the
    # encoded training data (each fit encodes its own; no caller reads it afterwards)
    rule.release()
    problem = None
    encoded.release()
    model.prune()


def check_unchanged_structure(tagger, model):
    """ConfigError for a structure parameter of ``tagger`` set to another value than the fitted
    model's: continued training keeps the model's order, constraint, layout and hashing (None, or
    the value the model has, is fine)."""
    layout = model.metadata.get("layout", {})
    has = {"order": model.order, "constrain": model.constrain or "none",
           "tag_dict": layout.get("tag_dict", model.metadata.get("training", {}).get("tag_dict")),
           "all_pairs": layout.get("all_pairs", model.emission_pairs is None),
           "hash_bits": getattr(model.encoder, "hash_bits", None)}
    for name, value in has.items():
        given = getattr(tagger, name)
        if given is not None and given != value and not (name == "tag_dict" and not given and not value):
            raise ConfigError(f"{name}={given!r} differs from the fitted model's ({value!r}): continued "
                              f"training keeps the model's; leave {name} unset or train anew")


def continue_training(tagger, X, y=None, dev=None, dev_y=None, progress=None, callback=None, input_metadata=None,
                      checkpoint=None, checkpoint_every=1, resume=None, client=None):
    """Continue training the fitted (or loaded) model on X for ``epochs`` more epochs; returns the tagger.

    The templates must be the model's. New features (template instances, pair features, or
    attributes of dict input) and new labels get zero weights first; existing ids keep their
    weights (``FeatureEncoder.extend``, ``LinearChainModel.grow``). A new feature must occur
    ``min_count`` times in X (counts from X alone). A model of gold feature-label pairs gains
    the pairs of X (a feature with each gold label it occurs with), for new and existing
    features. The shuffles continue the seed's sequence after the epochs already run.
    A perceptron continues its averaging exactly when the model carries its training state
    (fitted with ``resumable=True``); the other rules start their schedule and average afresh
    from the kept weights. Without a fitted model this is ``fit``. The other arguments are
    ``fit``'s.
    """
    from structperc.train import make_rule

    run = dict(checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume, client=client)
    if not hasattr(tagger, "model_"):
        return tagger.fit(X, y, dev=dev, dev_y=dev_y, progress=progress, callback=callback,
                        input_metadata=input_metadata, **run)
    options = tagger.trainer_options()
    tagger.check_engine(client, checkpoint=checkpoint is not None or resume is not None)
    model, encoder = tagger.model_, tagger.model_.encoder
    if not hasattr(tagger, "constrain_"):  # a model handed over by setting model_: its structure
        tagger._adopt_structure(model)
    check_unchanged_structure(tagger, model)
    rule = make_rule(tagger.trainer, **options)
    if rule.normalization != model.normalization:
        raise ConfigError(f"a {tagger.trainer} model has {rule.normalization} normalization; "
                          f"this model has {model.normalization}")
    source = open_input(X, y, tagger.columns, read=input_metadata, encoder=encoder, training=True)
    encoded = source.extend(encoder, tagger)
    if model.tag_dict is None:
        encoded.word_ids = None
    pairs = None
    if model.emission_pairs is not None:
        pairs = seen_pairs(encoded, encoder.n_features_, len(encoder.labels_),
                           int(model.metadata.get("layout", {}).get("dense_count") or tagger.dense_count or 0))
    model.grow(encoder.n_features_, encoder.labels_, encoder.n_pair_features_, pairs)
    previous = model.metadata.get("training", {})
    init_state = model.training_state if previous.get("trainer") == tagger.trainer else None
    tagger.labels_ = model.labels
    run_training(tagger, rule, model, encoded, options, source.read, dev, dev_y, progress, callback,
                 init_state=init_state, start_epoch=int(previous.get("epochs_done", previous.get("epochs", 0))), **run)
    return tagger


def mixing_run(tagger, rule, problem, dev_score, progress, callback, client, checkpoint=None, resume=None,
               start_epoch=0):
    from structperc.train.mixing import dask_client, train_mixed

    def run(client):
        tagger.n_shards_ = len(client.scheduler_info(n_workers=-1)["workers"])
        return train_mixed(rule, problem, tagger.n_epochs(), client, seed=tagger.seed, mix=tagger.mix,
                           dev_score=dev_score, progress=progress, callback=callback, checkpoint=checkpoint,
                           resume=resume, start_epoch=start_epoch)

    if client is not None:
        return run(client)
    with dask_client(tagger.workers, tagger.scheduler) as client:
        return run(client)


def epochs_of(tagger):
    """The passes over the training data: ``tagger.epochs``, or the learning rule's default for None;
    ConfigError for anything but an integer >= 0 (0: the weights the model starts with)."""
    from structperc.train import TRAINERS
    from structperc.train.base import LearningRule

    if tagger.epochs is None:
        return TRAINERS.get(tagger.trainer, LearningRule).epochs
    epochs = tagger.epochs
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Real) or epochs < 0 or not float(epochs).is_integer():
        raise ConfigError(f"epochs must be an integer >= 0, got {epochs!r}")
    return int(epochs)


def check_engine(tagger, client=None, checkpoint=False):
    """ConfigError for engine options that are invalid or do not apply (mix without mixing), and,
    before any training, for what the learning rule cannot do (``LearningRule.check_run``): its
    order, parameter mixing, a ``checkpoint`` (writing or resuming one), l1."""
    from structperc.train import TRAINERS, make_rule
    from structperc.train.mixing import MIXES, check_mix

    if int(tagger.workers) != tagger.workers or tagger.workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {tagger.workers!r}")
    if tagger.scheduler is not None and tagger.workers != 1:
        raise ConfigError("workers=N and scheduler=ADDRESS exclude each other (the scheduler's workers are used)")
    if tagger.mix not in MIXES:
        raise ConfigError(f"unknown mix {tagger.mix!r}: choose one of {', '.join(MIXES)}")
    if tagger.mix != "uniform" and not tagger.uses_mixing(client):
        raise ConfigError(f"mix={tagger.mix!r} applies only to parameter mixing (workers=N > 1 or scheduler=ADDRESS)")
    if tagger.resumable and tagger.uses_mixing(client):
        raise ConfigError("resumable keeps the state of one serial run; parameter mixing has one per shard")
    if tagger.trainer in TRAINERS:
        check_mix(tagger.mix, TRAINERS[tagger.trainer])
        rule = make_rule(tagger.trainer, **tagger.trainer_options())
        rule.check_run(order=int(tagger.order), mixing=tagger.uses_mixing(client), checkpoint=checkpoint)
