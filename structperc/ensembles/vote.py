"""Several models, one output: voting, ensemble model files and bagging.

Votes: hard (plurality), weighted, per-chunk and soft (marginal). Every vote works on label
strings, so the models may number their labels differently. Ties break deterministically: among
labels with equal weighted votes, the one predicted by the earliest model (in the order given) wins.

Ensemble model files: one ``.npz`` holding several member models, each under the array prefix
``member{i}__`` with its own encoder, and their metadata in the JSON metadata, with the kind of
ensemble (``vote``: ``VotingTagger``; ``stack``: ``stacking.StackedTagger``) and a record of how it
was built (``info``). ``structperc.load_model`` reads them, so ``tag``, ``eval`` and ``info`` take them as any
model.

Bagging (Breiman 1996): N taggers, each trained on a bootstrap sample of the training sentences (as
many sentences as the corpus, drawn with replacement), voted token by token. The bags train as
independent tasks on the workers of a dask cluster; bag b's sample and shuffles depend on (seed, b)
only, so the ensemble is the same whatever the number of workers.
"""
import time

import numpy as np

from structperc.chunks import chunk_spans, is_bio
from structperc.errors import ConfigError, DataError
from structperc.estimator.core import TaggerCore
from structperc.ensembles.base import EnsembleTagger
from structperc.estimator.inputs import open_input

METHODS = ("token", "chunk", "soft")


def _check_weights(weights, n_models):
    if weights is None:
        return np.ones(n_models)
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (n_models,):
        raise ConfigError(f"weights needs one weight per model ({n_models}), got {len(weights)}")
    if np.any(weights < 0) or not weights.sum() > 0:
        raise ConfigError("weights must be >= 0 and not all zero")
    return weights


def vote_tokens(predictions, weights=None):
    """Weighted plurality vote per token.

    predictions : list (one per model) of sequences of label strings, flat over the same tokens
    weights : one non-negative weight per model, or None (all 1: plurality)
    Returns a list of label strings.
    """
    weights = _check_weights(weights, len(predictions))
    stacked = np.stack([np.asarray(p, dtype=object) for p in predictions])
    # votes[m, t]: the total weight of the models that agree with model m at token t, summed in model order
    votes = np.zeros(stacked.shape)
    for m in range(len(stacked)):
        for other, weight in zip(stacked, weights):
            votes[m] += weight * (other == stacked[m])
    winner = np.argmax(votes, axis=0)  # the earliest model among those whose label has the most weight
    return stacked[winner, np.arange(stacked.shape[1])].tolist()


def vote_chunks(predictions, sentence_offsets, weights=None):
    """Vote per chunk: a span (type, first, last) is kept when the weights of the models that
    predict it exactly sum to more than half the total weight.

    Spans kept this way never overlap (a model's own spans do not, and two overlapping spans cannot
    both hold a majority), so the result is written back as a valid BIO sequence: B-type on a kept
    span's first token, I-type on the rest, O elsewhere.
    """
    weights = _check_weights(weights, len(predictions))
    half = weights.sum() / 2.0
    out = []
    for i in range(len(sentence_offsets) - 1):
        a, b = int(sentence_offsets[i]), int(sentence_offsets[i + 1])
        support = {}
        for labels, weight in zip(predictions, weights):
            for span in chunk_spans(list(labels[a:b])):
                support[span] = support.get(span, 0.0) + weight
        sentence = ["O"] * (b - a)
        for (kind, first, last), total in support.items():
            if total > half:
                sentence[first] = f"B-{kind}"
                for t in range(first + 1, last + 1):
                    sentence[t] = f"I-{kind}"
        out.extend(sentence)
    return out


def vote_marginals(marginals, label_sets, weights=None):
    """Soft vote: the label of highest weighted mean marginal per token.

    marginals : list (one per model) of ndarray (n_tokens, n_labels of that model), P(y_t = c | x)
    label_sets : list of each model's label names (column order)
    Returns a list of label strings.
    """
    weights = _check_weights(weights, len(marginals))
    names = []
    for labels in label_sets:
        names.extend(label for label in labels if label not in names)
    index = {label: j for j, label in enumerate(names)}
    total = np.zeros((marginals[0].shape[0], len(names)))
    for node, labels, weight in zip(marginals, label_sets, weights):
        total[:, [index[label] for label in labels]] += weight * node
    return [names[j] for j in np.argmax(total, axis=1)]


def predict_all(taggers, corpus, method):
    """Each tagger's flat label strings on ``corpus`` (for "soft": its marginals and labels)."""
    if method == "soft":
        from structperc.estimator.marginals import marginals

        nodes = []
        for tagger in taggers:
            node, _ = marginals(tagger.model_, tagger.encode_input(corpus))
            nodes.append(node)
        return nodes
    return [tagger.predict_corpus(corpus)[0] for tagger in taggers]


def vote(taggers, corpus, method="token", weights=None):
    """The voted labels (flat list of strings) of ``taggers`` on ``corpus``.

    method : "token" (weighted plurality per token), "chunk" (per chunk, BIO label sets only) or
        "soft" (weighted mean of the marginals; every model probabilistic: crf, memm)
    """
    if method not in METHODS:
        raise ConfigError(f"unknown vote method {method!r}: choose one of {', '.join(METHODS)}")
    if method == "chunk" and not all(is_bio(t.model_.labels) for t in taggers):
        raise ConfigError("chunk voting needs chunk (BIO) label sets in every model")
    if method == "soft":
        from structperc.estimator.marginals import check_probabilistic

        for tagger in taggers:
            check_probabilistic(tagger.model_)
    predictions = predict_all(taggers, corpus, method)
    if method == "token":
        return vote_tokens(predictions, weights)
    if method == "chunk":
        return vote_chunks(predictions, corpus.sentence_offsets, weights)
    return vote_marginals(predictions, [t.model_.labels for t in taggers], weights)


def vote_file(model_paths, input, output=None, method="token", weights=None, format=None, tag_sep=None,
              encoding=None):
    """Read ``input`` as the first model's training corpus was read, vote, and write it in the
    layout of ``Tagger.tag_file`` (the input columns, then the voted label) to ``output`` (atomically)
    or standard output. Returns sentences, tokens, seconds."""
    from structperc.utils.atomic import open_output
    from structperc.readers import write_tagged

    if len(model_paths) < 2:
        raise ConfigError(f"voting needs at least two models, got {len(model_paths)}")
    taggers = [TaggerCore.load(path).prepare() for path in model_paths]
    start = time.perf_counter()
    corpus = taggers[0].read(input, format, require_label=False, tag_sep=tag_sep, encoding=encoding)
    labels = vote(taggers, corpus, method, weights)
    with open_output(output) as out:
        write_tagged(out, corpus, labels)
    return {"sentences": corpus.n_sentences, "tokens": corpus.n_tokens, "seconds": time.perf_counter() - start}


class VotingTagger(EnsembleTagger):
    """Token-level plurality vote of fitted Taggers (``vote_tokens``: ties to the earliest member's
    label). Reading is the first member's (its reader options); ``labels_`` is the union of the
    members' labels. The vote has no marginals, probabilities or forced labels.
    """

    kind = "vote"

    def __init__(self, members, info=None):
        super().__init__(members, info)
        self.labels_ = sorted({label for m in self.members for label in m.labels_})

    def fit(self, X, y=None, **options):
        """Refit every member on X (and y) with its own parameters, as scikit-learn's voting
        estimators fit theirs; ``options`` are ``Tagger.fit``'s (dev, progress, ...). Returns self."""
        for member in self.members:
            member.fit(X, y, **options)
        lead = self.members[self.lead]
        self.model_, self.n_iter_ = lead.model_, lead.n_iter_
        self.labels_ = sorted({label for m in self.members for label in m.labels_})
        return self

    def _refuse(self, what):
        method = self.info.get("method")
        raise ConfigError(f"a voting model{f' ({method})' if method else ''} {what}")

    def _corpus(self, X, y=None):
        """The Corpus of X (``inputs.open_input``); feature dicts are refused."""
        source = open_input(X, y, self.columns)
        if source.columns is None:
            self._refuse("takes token columns, not feature dicts")
        return source.corpus

    def predict_corpus(self, corpus, forced=None):
        if forced is not None:
            self._refuse("takes no forced labels")
        return vote_tokens([m.predict_corpus(corpus)[0] for m in self.members]), None

    def encode_input(self, corpus):
        self._refuse("has no single encoding of its input: no marginals, probabilities or k-best lists")

    def predict(self, X, forced=None):
        if forced is not None:
            self._refuse("takes no forced labels")
        corpus = self._corpus(X)
        flat, _ = self.predict_corpus(corpus)
        o = corpus.sentence_offsets
        return [flat[o[i]: o[i + 1]] for i in range(len(o) - 1)]

    def _gold_and_predicted(self, X, y=None):
        corpus = self._corpus(X, y)
        if corpus.label is None:
            raise DataError("evaluation data has no label column")
        return corpus.columns[corpus.label], self.predict_corpus(corpus)[0], corpus.sentence_offsets

    def tag_file(self, input, output=None, format=None, marginals=None, probability=False, tag_sep=None,
                 force_column=None, encoding=None, **options):
        """``Tagger.tag_file`` with the voted labels; the vote has no marginals, probabilities or
        forced labels. options : the other options of ``Tagger.tag_file`` (encoding, output_format, keep_gold)."""
        if marginals or probability:
            self._refuse("gives no marginals or probabilities")
        if force_column is not None:
            self._refuse("takes no forced labels (force_column)")
        return super().tag_file(input, output, format, tag_sep=tag_sep, encoding=encoding, **options)


# ---------------------------------------------------------------------------------------- bagging
BAGGING_WORKERS = 2  # the LocalCluster's size when neither workers nor scheduler is given
# the engine options of a member: each bag trains serially, in one task
_SERIAL = {"workers": 1, "scheduler": None, "mix": "uniform", "cache_dir": None}


def _check_bags(n_bags):
    if int(n_bags) != n_bags or n_bags < 1:
        raise ConfigError(f"bagging needs at least one bag, got {n_bags}")


def bag_indices(n_sentences, n_bags, seed=0):
    """Bootstrap samples: for each bag, ``n_sentences`` sentence indices drawn with replacement.

    Bag b draws from its own generator, seeded by (seed, b), so a bag's sample does not depend on
    how many bags there are or on which worker trains it. Returns a list of int64 arrays.
    """
    return [np.random.default_rng([seed, b]).integers(0, n_sentences, n_sentences) for b in range(n_bags)]


def train_bag(corpus, tagger_params, seed, indices, dev=None, input_metadata=None):
    """Train one bag: a Tagger with ``tagger_params`` (and shuffle seed ``seed``) on the sentences
    ``indices`` of ``corpus`` (``dev``, ``input_metadata``: as in ``Tagger.fit``). The unit of work a
    parallel scheduler hands out."""
    return TaggerCore(**{**tagger_params, "seed": seed}).fit(corpus.subset(indices), dev=dev,
                                                         input_metadata=input_metadata)


def train_bagging(corpus, tagger_params, n_bags, seed=0, client=None, dev=None, input_metadata=None,
                  progress=None):
    """``n_bags`` Taggers; bag b is trained by ``train_bag`` on its bootstrap sample (``bag_indices``)
    with the shuffle seed seed + b. Returns them in bag order; vote over them with ``VotingTagger``.

    client : None (train here, one bag after the other), or a dask.distributed Client: each bag is
        one task on its workers, the corpus (and dev corpus) scattered to them once.
    progress : optional callable(bags done, n_bags), called as each bag ends.
    """
    _check_bags(n_bags)
    samples = bag_indices(corpus.n_sentences, n_bags, seed)
    params = {**tagger_params, **_SERIAL}
    if client is None:
        members = []
        for b, indices in enumerate(samples):
            members.append(train_bag(corpus, params, seed + b, indices, dev, input_metadata))
            if progress is not None:
                progress(b + 1, n_bags)
        return members
    from dask.distributed import KilledWorker, as_completed

    from structperc.train.mixing import EngineError

    data = client.scatter(corpus, hash=False)
    dev_data = None if dev is None else client.scatter(dev, hash=False)
    futures = [client.submit(train_bag, data, params, seed + b, indices, dev_data, input_metadata, pure=False)
               for b, indices in enumerate(samples)]
    try:
        for done, _ in enumerate(as_completed(futures), 1):
            if progress is not None:
                progress(done, n_bags)
        return client.gather(futures)  # in bag order, whatever the order they finished in
    except KilledWorker:
        raise EngineError("workers lost while training the bags; no model written") from None


def bagging_fit_file(tagger, path, n_bags, seed=0, dev=None, workers=None, scheduler=None, client=None,
                     progress=None, **reader_options):
    """Bagging on a corpus file: ``train_bagging`` with the Tagger parameters of ``tagger`` (its engine
    options aside: every bag trains serially) on a dask cluster, the one of ``client``, the one at
    ``scheduler``, or a LocalCluster of ``workers`` workers (default ``BAGGING_WORKERS``) started for
    the run. Returns a VotingTagger whose info records the bags, the seed and the sample sizes (and
    the vote's score on ``dev``, when given; each member also keeps its best dev epoch).

    reader_options : as in ``Tagger.fit_file``.
    """
    from structperc.features.lexicon import read_lexicons
    from structperc.estimator.files import read_training_files
    from structperc.features.templates import PRESETS, load_templates
    from structperc.train.mixing import dask_client

    tagger.trainer_options()
    if scheduler is not None and workers is not None:
        raise ConfigError("workers=N and scheduler=ADDRESS exclude each other (the scheduler's workers are used)")
    _check_bags(n_bags)
    params = tagger.get_params()
    # the template file and the lexicons are read here: the workers need not see this machine's files
    templates = params["templates"]  # None: each bag chooses from its sample
    if templates is not None and not (isinstance(templates, str) and templates in PRESETS):
        params["templates"] = [str(t) for t in load_templates(params["templates"])]
    params["lexicons"] = read_lexicons(params["lexicons"], params["lexicon_lower"]) or None
    corpus, dev_corpus, reader_options = read_training_files(path, dev, **reader_options)
    run = dict(seed=seed, dev=dev_corpus, input_metadata=reader_options, progress=progress)
    if client is not None:
        members = train_bagging(corpus, params, n_bags, client=client, **run)
    else:
        with dask_client(workers or BAGGING_WORKERS, scheduler) as client:
            members = train_bagging(corpus, params, n_bags, client=client, **run)
    samples = bag_indices(corpus.n_sentences, n_bags, seed)
    lengths = np.diff(corpus.sentence_offsets)
    info = {"method": "bagging", "bags": int(n_bags), "seed": int(seed), "sentences": corpus.n_sentences,
            "tokens": corpus.n_tokens, "sample_sentences": [len(s) for s in samples],
            "sample_tokens": [int(lengths[s].sum()) for s in samples],
            "distinct_sentences": [len(np.unique(s)) for s in samples]}
    voting = VotingTagger(members, info)
    if dev_corpus is not None:
        score = voting.evaluate(dev_corpus)
        voting.info["dev"] = {k: v for k, v in score.items() if k not in ("seconds", "tokens_per_second")}
    return voting
