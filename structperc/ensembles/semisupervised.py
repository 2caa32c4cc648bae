"""Learning from unlabelled sentences U: self-training, tri-training and the voting tagger.

Self-training: a tagger trained on the labelled data L labels U; each round the most confident
``share`` of U (among the sentences not added yet) joins the training data with the predicted
labels, and the tagger is trained again on L plus every sentence added so far. Confidence is the
probability P(ŷ | x) of the predicted labeling for crf and memm models, and the margin between the
best and the second-best labeling's score (k-best, k = 2; first-order models) for the others.

Tri-training (Zhou & Li 2005; Søgaard 2010 for taggers): three taggers h_0, h_1, h_2 are trained on
bootstrap samples B_0, B_1, B_2 of the sentences of L. Each round,

    U_i = {x in U : h_j(x) = h_k(x) on every token}   ({i, j, k} = {0, 1, 2}), labelled h_j(x)
    h_i <- train(B_i + U_i)

With ``disagreement`` (``--semi tri-disagree``, Søgaard 2010's tri-training with disagreement), U_i
keeps only the sentences on which h_i differs from the two on some token: h_i learns where the
other two agree that it errs, and is not given more of what it already tags as they do.

U_i is chosen afresh each round from the current taggers. The rounds stop when no U_i changes (same
sentences, same labels) or after ``rounds``. The final tagger is ``ensemble.VotingTagger``: the
token-level majority of the three; where all three differ, the first member's label. It is saved as
one ensemble model file (``structperc.ensembles.vote``) holding the three member models (three encoders:
about three times a single model's size), which ``tag`` and ``eval`` read as any model.
"""
import numpy as np

from structperc.corpus import Corpus, concatenate, index_ranges
from structperc.ensembles.vote import VotingTagger
from structperc.errors import ConfigError
from structperc.estimator.core import TaggerCore
from structperc.estimator.files import recorded_options

METHODS = ("self", "tri", "tri-disagree")


# ------------------------------------------------------------------------------------ corpora
def read_unlabeled(paths, like, limit=None, seed=0, reader_options=None):
    """A Corpus of the sentences of `paths` without labels.

    Raw text files (one sentence per line) are split by ``structperc.clusters.brown.tokenize`` and give
    the column ``word`` only; corpus files are read with ``reader_options`` (those of the labelled
    data). Empty sentences are dropped. limit : keep that many sentences drawn at random (seed),
    in file order. like : the labelled Corpus (its format is given to the result).
    """
    from structperc.clusters.brown import detect_clusters_format, read_sentences
    from structperc.readers import read_corpus

    parts = []
    if not paths:
        raise ConfigError("no unlabelled files given")
    for path in ([paths] if isinstance(paths, (str, bytes)) or not hasattr(paths, "__iter__") else paths):
        if detect_clusters_format(path) == "raw":
            sentences = [s for s in read_sentences(path, format="raw") if s]
            lengths = np.array([len(s) for s in sentences], dtype=np.int64)
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            words = [w for s in sentences for w in s]
            parts.append(Corpus(columns={"word": words}, sentence_offsets=offsets, label=None, path=str(path),
                                line_numbers=np.repeat(np.arange(1, len(sentences) + 1), lengths), format=like.format))
        else:
            corpus = read_corpus(path, **(reader_options or {}), require_label=False)
            keep = np.flatnonzero(np.diff(corpus.sentence_offsets) > 0)
            corpus = corpus.subset(keep)
            parts.append(_view(corpus, [c for c in corpus.columns if c != corpus.label], None, None, like.format))
    common = [c for c in parts[0].columns if all(c in p.columns for p in parts)]
    unlabeled = concatenate([_view(p, common, None, None, like.format) for p in parts])
    if limit is not None and limit < unlabeled.n_sentences:
        pick = np.sort(np.random.default_rng(seed).choice(unlabeled.n_sentences, int(limit), replace=False))
        unlabeled = unlabeled.subset(pick)
    return unlabeled


def _view(corpus, columns, label, labels, format):
    """A Corpus with only `columns` of `corpus`, plus the label column `label` holding `labels`."""
    values = {c: corpus.columns[c] for c in columns}
    if label is not None:
        values[label] = list(labels)
    return Corpus(columns=values, sentence_offsets=corpus.sentence_offsets, label=label, path=corpus.path,
                  line_numbers=corpus.line_numbers, format=format, paths=corpus.paths, file_ids=corpus.file_ids)


def _training_corpus(labeled, sentences, unlabeled=None, u_sentences=None, u_labels=None):
    """The labelled sentences `sentences` (repeats allowed) plus the sentences `u_sentences` of U
    labelled `u_labels` (flat str, in the order of u_sentences), over the columns both share."""
    columns = [c for c in labeled.columns if c != labeled.label and (unlabeled is None or c in unlabeled.columns)]
    part = labeled.subset(sentences)
    parts = [_view(part, columns, labeled.label, part.columns[labeled.label], labeled.format)]
    if u_sentences is not None and len(u_sentences):
        chosen = unlabeled.subset(u_sentences)
        parts.append(_view(chosen, columns, labeled.label, u_labels, labeled.format))
    return concatenate(parts)


def _predict(tagger, corpus):
    """Predicted labels, flat (object ndarray (n_tokens,))."""
    labels, _ = tagger.predict_corpus(corpus)
    return np.asarray(labels, dtype=object)


def _sentence_all(token_flags, offsets):
    """bool (n_sentences,): every token of the sentence is True (sentences are not empty)."""
    return np.logical_and.reduceat(token_flags, offsets[:-1]) if len(token_flags) else np.zeros(0, dtype=bool)


# ------------------------------------------------------------------------------------ self-training
def confidence(tagger, corpus):
    """(predicted labels flat, confidence per sentence): P(ŷ | x) for probabilistic models, else the
    score margin between the best and the second-best labeling (inf for a sentence with one)."""
    from structperc.nbest.lists import nbest_corpus
    from structperc.train import TRAINERS

    model = tagger.model_
    rule = TRAINERS.get(model.metadata.get("training", {}).get("trainer", tagger.trainer))
    encoded = model.encoder.transform(corpus, with_labels=False)
    ids, _ = model.decode(encoded)
    labels = model.label_names(ids)
    if rule is not None and rule.probabilistic:
        from structperc.estimator.marginals import marginals

        _, log_probability = marginals(model, encoded)
        return labels, np.exp(log_probability)
    if model.order != 1:
        raise ConfigError("self-training needs a crf or memm model, or a first-order model (for the k-best "
                          "margin); this model has order 2")
    nb = nbest_corpus(tagger, corpus, 2)
    first = nb.candidate_offsets[:-1]
    count = np.diff(nb.candidate_offsets)
    margin = np.full(corpus.n_sentences, np.inf)
    two = count >= 2
    margin[two] = nb.scores[first[two]] - nb.scores[first[two] + 1]
    return labels, margin


def self_train(params, labeled, unlabeled, rounds=2, share=0.2, callback=None):
    """Self-training; returns the final Tagger.

    params : Tagger keyword arguments; share : fraction of U added per round (the most confident
    sentences not added yet; ties to the earlier sentence). callback(record) after each round, with
    record = dict(round, added).
    """
    offsets = unlabeled.sentence_offsets
    every = np.arange(labeled.n_sentences)
    tagger = TaggerCore(**params).fit(_training_corpus(labeled, every))
    chosen = np.zeros(0, dtype=np.int64)
    chosen_labels = np.zeros(0, dtype=object)
    per_round = int(np.ceil(share * unlabeled.n_sentences))
    for r in range(1, rounds + 1):
        rest = np.setdiff1d(np.arange(unlabeled.n_sentences), chosen)
        if not len(rest) or per_round == 0:
            break
        labels, score = confidence(tagger, unlabeled.subset(rest))
        best = np.argsort(-score, kind="stable")[:per_round]
        rest_offsets = np.concatenate([[0], np.cumsum(np.diff(offsets)[rest])])
        chosen = np.concatenate([chosen, rest[best]])
        best_tokens = index_ranges(rest_offsets[best], rest_offsets[best + 1])
        chosen_labels = np.concatenate([chosen_labels, labels[best_tokens]])
        tagger = TaggerCore(**params).fit(_training_corpus(labeled, every, unlabeled, chosen, chosen_labels))
        if callback is not None:
            callback({"round": r, "added": len(chosen)})
    return tagger


# ------------------------------------------------------------------------------------ tri-training
def agreement(prediction_j, prediction_k, offsets):
    """Sentences (int64 indices) on which two taggers agree on every token."""
    return np.flatnonzero(_sentence_all(np.asarray(prediction_j) == np.asarray(prediction_k), offsets))


TRI = {"method": "tri-training"}  # the info of a tri-training VotingTagger


def tri_train(params, labeled, unlabeled, rounds=2, seed=0, callback=None, disagreement=False):
    """Tri-training; returns a VotingTagger of the three final members.

    params : Tagger keyword arguments (member i trains with seed params["seed"] + i);
    disagreement : give member i only the agreed sentences it tags differently (Søgaard 2010);
    callback(record, voting) after the initial training (round 0) and each round, with
    record = dict(round, added: U sentences given to each member).
    """
    rng = np.random.default_rng(seed)
    n = labeled.n_sentences
    samples = [np.sort(rng.integers(0, n, n)) for _ in range(3)]
    base_seed = params.get("seed", 0)

    def train(i, u_sentences=None, u_labels=None):
        member = {**params, "seed": base_seed + i}
        return TaggerCore(**member).fit(_training_corpus(labeled, samples[i], unlabeled, u_sentences, u_labels))

    info = {**TRI, "disagreement": True} if disagreement else TRI
    members = [train(i) for i in range(3)]
    if callback is not None:
        callback({"round": 0, "added": [0, 0, 0]}, VotingTagger(members, info))
    offsets = unlabeled.sentence_offsets
    previous = [None, None, None]
    for r in range(1, rounds + 1):
        predictions = [_predict(m, unlabeled) for m in members]
        selections = []
        for i in range(3):
            j, k = [m for m in range(3) if m != i]
            chosen = agreement(predictions[j], predictions[k], offsets)
            if disagreement:
                chosen = np.setdiff1d(chosen, agreement(predictions[i], predictions[j], offsets))
            selections.append((chosen, predictions[j][index_ranges(offsets[chosen], offsets[chosen + 1])]))
        if all(prev is not None and np.array_equal(prev[0], cur[0]) and np.array_equal(prev[1], cur[1])
               for prev, cur in zip(previous, selections)):
            break
        members = [train(i, *selections[i]) for i in range(3)]
        previous = selections
        if callback is not None:
            callback({"round": r, "added": [len(s[0]) for s in selections]}, VotingTagger(members, info))
    return VotingTagger(members, info)


def semi_fit_file(tagger, path, unlabeled_paths, method, rounds=2, seed=0, **reader_options):
    """``Tagger.fit_file`` with unlabelled files: self- or tri-training with the tagger's parameters.
    Returns the fitted Tagger (self) or VotingTagger (tri), recording the reader options."""
    from structperc.readers import read_corpus

    if method not in METHODS:
        raise ConfigError(f"unknown semi-supervised method {method!r}: choose one of {', '.join(METHODS)}")
    if not unlabeled_paths:
        raise ConfigError(f"method={method!r} needs unlabeled_paths")
    tagger.trainer_options()
    labeled = read_corpus(path, **reader_options)
    unlabeled = read_unlabeled(unlabeled_paths, labeled, reader_options=reader_options)
    params = tagger.get_params()
    if method == "self":
        fitted = self_train(params, labeled, unlabeled, rounds)
        members = [fitted]
    else:
        fitted = tri_train(params, labeled, unlabeled, rounds, seed=seed, disagreement=method == "tri-disagree")
        members = fitted.members
    reader_options = recorded_options(reader_options)
    for member in members:
        member.model_.metadata["input"] = {
            **reader_options, "format": labeled.format, "columns": list(labeled.columns), "label": labeled.label,
        }
        member.model_.metadata["training"]["semi"] = {
            "method": method, "rounds": rounds, "unlabeled": [str(p) for p in unlabeled_paths],
            "unlabeled_sentences": unlabeled.n_sentences}
    return fitted
