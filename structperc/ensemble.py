"""Several models, one output: hard (plurality), weighted, per-chunk and soft (marginal) voting.

Every vote works on label strings, so the models may number their labels differently. Ties break
deterministically: among labels with equal weighted votes, the one predicted by the earliest model
(in the order given) wins.
"""
import time

import numpy as np

from .chunks import chunk_spans, is_bio
from .errors import ConfigError

METHODS = ("token", "chunk", "soft")


def _check_weights(weights, n_models):
    if weights is None:
        return np.ones(n_models)
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (n_models,):
        raise ConfigError(f"--weights needs one weight per model ({n_models}), got {len(weights)}")
    if np.any(weights < 0) or not weights.sum() > 0:
        raise ConfigError("--weights must be >= 0 and not all zero")
    return weights


def vote_tokens(predictions, weights=None):
    """Weighted plurality vote per token.

    predictions : list (one per model) of sequences of label strings, flat over the same tokens
    weights : one non-negative weight per model, or None (all 1: plurality)
    Returns a list of label strings.
    """
    weights = _check_weights(weights, len(predictions))
    out = []
    for labels in zip(*predictions):
        totals = {}
        for label, weight in zip(labels, weights):
            totals[label] = totals.get(label, 0.0) + weight  # dict order: first model to name a label
        out.append(max(totals, key=totals.get))
    return out


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
        from .probability import marginals

        nodes = []
        for tagger in taggers:
            encoded = tagger.model_.encoder.transform(corpus, with_labels=False)
            node, _ = marginals(tagger.model_, encoded)
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
        from .probability import check_probabilistic

        for tagger in taggers:
            check_probabilistic(tagger.model_)
    predictions = predict_all(taggers, corpus, method)
    if method == "token":
        return vote_tokens(predictions, weights)
    if method == "chunk":
        return vote_chunks(predictions, corpus.sentence_offsets, weights)
    return vote_marginals(predictions, [t.model_.labels for t in taggers], weights)


def vote_file(model_paths, input, output=None, method="token", weights=None, format=None, tag_sep=None):
    """Read ``input`` as the first model's training corpus was read, vote, and write it in the
    layout of ``Tagger.tag_file`` (the input columns, then the voted label) to ``output`` (atomically)
    or standard output. Returns sentences, tokens, seconds."""
    from .files import open_output
    from .readers import write_tagged
    from .tagger import Tagger

    if len(model_paths) < 2:
        raise ConfigError(f"voting needs at least two models, got {len(model_paths)}")
    taggers = [Tagger.load(path).prepare() for path in model_paths]
    start = time.perf_counter()
    corpus = taggers[0].read(input, format, require_label=False, tag_sep=tag_sep)
    labels = vote(taggers, corpus, method, weights)
    with open_output(output) as out:
        write_tagged(out, corpus, labels)
    return {"sentences": corpus.n_sentences, "tokens": corpus.n_tokens, "seconds": time.perf_counter() - start}


# ---------------------------------------------------------------------------------------- bagging
def bag_indices(n_sentences, n_bags, seed=0):
    """Bootstrap samples: for each bag, ``n_sentences`` sentence indices drawn with replacement.

    Bag b draws from its own generator, seeded by (seed, b), so a bag's sample does not depend on
    how many bags there are or on which worker trains it. Returns a list of int64 arrays.
    """
    return [np.random.default_rng([seed, b]).integers(0, n_sentences, n_sentences) for b in range(n_bags)]


def train_bag(corpus, tagger_params, seed, indices):
    """Train one bag: a Tagger with ``tagger_params`` (and shuffle seed ``seed``) on the sentences
    ``indices`` of ``corpus``. The unit of work a parallel scheduler hands out."""
    from .tagger import Tagger

    return Tagger(**{**tagger_params, "seed": seed}).fit(corpus.subset(indices))


def train_bagging(corpus, tagger_params, n_bags, seed=0):
    """``n_bags`` Taggers, each trained by ``train_bag`` on its bootstrap sample (``bag_indices``);
    vote over them with ``vote``."""
    if n_bags < 1:
        raise ConfigError(f"bagging needs at least one bag, got {n_bags}")
    samples = bag_indices(corpus.n_sentences, n_bags, seed)
    return [train_bag(corpus, tagger_params, seed + b, indices) for b, indices in enumerate(samples)]
