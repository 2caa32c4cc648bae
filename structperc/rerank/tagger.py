"""A reranked tagger is one model: a base tagger, the reranker of its k-best lists, and what the
reranker's features read (the training corpus's gazetteer, the word clusters), in one file.

``RerankedCore.fit`` does every step: the base (fitted on the training corpus unless it is fitted
already), the jackknifed k-best lists of the training corpus (the base's settings retrained on each
fold, ``nbest.jackknife_nbest``), the features (``rerank.context``), the learner; with a dev corpus,
the learner's settings are chosen on it (``selection_`` lists what was tried). Tagging runs the base's
k-best, featurizes the lists in their documents' context and takes the reranker's choice; a linear
reranker scores the candidates without their rows (``context.scores_in_context``).

``RerankedTagger`` is ``RerankedCore`` on scikit-learn's ``BaseEstimator`` (``fit``, ``predict``,
``score``, ``clone``); ``structperc.load_model`` and the commands (``tag``, ``eval``) read its file,
an ensemble file of kind "rerank" whose one member is the base.
"""
import copy
import time

import numpy as np

from structperc._kernels.rank.ranking import group_argmax
from structperc.chunks import is_bio
from structperc.corpus import as_corpus
from structperc.errors import ConfigError, ModelFileError
from structperc.estimator.base import Estimator
from structperc.estimator.sklearn_base import SklearnBase, builds_on_sklearn
from structperc.estimator.tagger import SequenceTags
from structperc.evaluate.metrics import evaluate_labels
from structperc.rerank.clusters import ClusterPaths
from structperc.rerank.context import (FAMILIES, Gazetteer, ListContext, check_families, document_ids,
                                       featurize_in_context, jackknifed_gazetteers, posterior_temperature,
                                       scores_in_context)
from structperc.rerank.learners import LEARNERS, LossReranker, Reranker, reranker_from_state

KIND = "rerank"
# the defaults that won on ned.testa (experiments/rerank_ner.py, experiments/results/rerank_ner.md): k,
# the folds, the families (Collins' entity features left out) and the learner. The families that
# cross-validation over ned.train's lists chose (experiments/rerank_ner_cv.py) score higher there,
# lower on testa, and tag slower; rerank_ner.md gives both
DEFAULT_K = 20
DEFAULT_FOLDS = 5
DEFAULT_FAMILIES = ("document", "gazetteer", "sequence", "rank", "posterior")
DEFAULT_LEARNER = "perceptron"
# learner names beside ``LEARNERS``: "scaled" is the loss-scaled perceptron at the settings that won
# on ned.testa before the posterior family joined the families
NAMED_LEARNERS = {"scaled": lambda: LossReranker(epochs=5, update="scaled", margin=0.0, score_weight=5.0),
                  "mira": lambda: LossReranker(update="mira")}
# the settings ``fit`` tries on a dev corpus: epochs x the initial weight of the base's score
SELECTION_GRID = [{"epochs": e, "score_weight": w} for e in (5, 10, 20) for w in (1.0, 5.0)]


def _learner(learner):
    """A fresh reranker: ``LEARNERS[learner]()`` for a name, a copy of an unfitted reranker otherwise."""
    if isinstance(learner, str):
        if learner in NAMED_LEARNERS:
            return NAMED_LEARNERS[learner]()
        if learner not in LEARNERS:
            raise ConfigError(f"unknown reranker learner {learner!r}: choose one of "
                              f"{', '.join([*NAMED_LEARNERS, *LEARNERS])}")
        return LEARNERS[learner]()
    if not hasattr(learner, "fit_ranking"):
        raise ConfigError(f"learner must be a name ({', '.join(LEARNERS)}) or a reranker, got {learner!r}")
    return copy.deepcopy(learner)


class RerankedCore(Estimator):
    """A base tagger whose k-best lists a reranker rescores with non-local features.

    Parameters
    ----------
    base : a Tagger (fitted or not) over token columns, first-order
    k : candidates per sentence
    learner : "perceptron" (the averaged ranking perceptron), "scaled" (the loss-scaled ranking
        perceptron: 5 epochs, base-score weight 5), "mira", a name of ``rerank.learners.LEARNERS``, or
        an unfitted reranker (e.g. ``Reranker(epochs=10)``)
    families : feature families (``rerank.context.FAMILIES``; None: all of them, ``cluster`` only with
        ``clusters``)
    folds : jackknife folds of the training lists (contiguous blocks of sentences)
    document_size : sentences per document where the input marks no documents (None: each
        sentence alone)
    select : choose the learner's epochs and base-score weight (``SELECTION_GRID``) on the dev
        corpus, or without one on the last tenth of the training lists (the reranker learns on the
        rest, then the chosen setting on all of them)
    seed : seed of the learner's shuffles
    clusters : word clusters for the ``cluster`` family: a paths file of ``structperc clusters``
        (``bitstring<TAB>word<TAB>count`` lines) or a dict word -> bit string; read by ``fit``, kept
        in the model file, and not read where the families leave ``cluster`` out

    Attributes
    ----------
    base_ : the fitted base tagger; reranker_ : the fitted reranker; vocabulary_ : feature string -> id;
    gazetteer_ : Gazetteer of the training corpus; clusters_ : ``rerank.clusters.ClusterPaths`` of
    ``clusters`` (None without the ``cluster`` family); temperature_ : the ``posterior`` family's
    (``rerank.context.posterior_temperature`` of the training lists); selection_ :
    list of dict(settings, dev_f1), or [];
    training_lists_ : summary of the jackknifed training lists (1-best, oracle)
    """

    fitted_attributes = ("base_", "reranker_")

    def __init__(self, base=None, k=DEFAULT_K, learner=DEFAULT_LEARNER, families=DEFAULT_FAMILIES, folds=DEFAULT_FOLDS,
                 document_size=None, select=True, seed=0, clusters=None):
        self.base = base
        self.k = k
        self.learner = learner
        self.families = families
        self.folds = folds
        self.document_size = document_size
        self.select = select
        self.seed = seed
        self.clusters = clusters

    # ------------------------------------------------------------------ fitting
    def check_params(self):
        if self.base is None:
            raise ConfigError("a reranked tagger needs a base tagger (base=Tagger(...))")
        if int(self.k) < 2:
            raise ConfigError(f"k must be at least 2 for reranking, got {self.k!r}")
        _learner(self.learner)
        return check_families(self.families, self.clusters)

    def _corpus(self, X, y=None):
        """A Corpus of X (kept) or of token lists, named by the base's ``columns``."""
        base = self.base_ if hasattr(self, "base_") else self.base
        return as_corpus(X, y, getattr(base, "columns", None))

    def fit(self, X, y=None, dev=None, dev_y=None, progress=None):
        """Fit on a Corpus (or token lists and labels y); with ``dev`` (a Corpus, or lists with
        ``dev_y``) choose the learner's settings on it. progress : optional callable(message)."""
        families = self.check_params()
        clusters = ClusterPaths.of(self.clusters) if "cluster" in families else None
        say = progress or (lambda message: None)
        corpus = self._corpus(X, y)
        if corpus.label is None:
            raise ConfigError("fitting a reranked tagger needs labelled sentences")
        if hasattr(self.base, "model_"):
            base = self.base
        else:
            base = copy.deepcopy(self.base)
            say("fitting the base tagger")
            base.fit(corpus)
        if base.model_.order != 1:
            raise ConfigError("reranking needs a first-order base (k-best lists of order 1)")
        from structperc.nbest.jackknife import fold_split
        from structperc.nbest.lists import jackknife_nbest

        folds = int(self.folds)
        say(f"jackknifing {self.k}-best lists over {folds} folds")
        lists = jackknife_nbest(corpus, base, folds=folds, k=int(self.k), seed=self.seed, blocks=True,
                                progress=lambda f, n, s: say(f"  fold {f}/{n}: {s:.0f}s"))
        fold_of = fold_split(corpus.n_sentences, folds, self.seed, blocks=True)
        context = ListContext(lists, document_ids(corpus, self.document_size),
                              jackknifed_gazetteers(corpus, fold_of), fold_of, blocks=fold_of)
        say("featurizing")
        self.temperature_ = posterior_temperature(lists, families)
        data, vocabulary = featurize_in_context(lists, families, context, {}, grow=True, clusters=clusters,
                                                temperature=self.temperature_)
        self.base_ = base
        self.clusters_ = clusters
        self.gazetteer_ = Gazetteer.from_corpus(corpus)
        self.vocabulary_ = vocabulary
        self.families_ = families
        self.training_lists_ = {key: float(v) if isinstance(v, (float, np.floating)) else v
                                for key, v in lists.summary().items()}
        learner = _learner(self.learner)
        self.selection_ = []
        selectable = self.select and isinstance(learner, (Reranker, LossReranker))
        if selectable and dev is not None:
            dev_lists, dev_data = self._featurized(self._corpus(dev, dev_y), gold=True)
            self.reranker_ = self._select(learner, data, vocabulary, dev_lists, dev_data, say)
        elif selectable and corpus.n_sentences >= 2 * folds * 10:
            # no dev corpus: settings chosen on the last tenth of the training lists, learned on the rest
            cut = corpus.n_sentences - corpus.n_sentences // 10
            groups_of = data.qids - 1
            held = data.take_groups(np.flatnonzero(groups_of >= cut))
            held.qids = held.qids - cut
            settings = self._select(learner, data.take_groups(np.flatnonzero(groups_of < cut)), vocabulary,
                                    lists.take(np.arange(cut, corpus.n_sentences)), held, say).settings_
            self.reranker_ = self._with(learner, settings).fit_ranking(data, vocabulary)
        else:
            self.reranker_ = learner.fit_ranking(data, vocabulary)
        return self

    @staticmethod
    def _with(learner, settings):
        trial = copy.deepcopy(learner)
        for name, value in settings.items():
            setattr(trial, name, value)
        trial.settings_ = settings
        return trial

    def _select(self, learner, data, vocabulary, dev_lists, dev_data, say):
        """The learner at the ``SELECTION_GRID`` setting that scores best on the dev lists (fitted on
        ``data``); every setting's dev F1 goes to ``selection_``."""
        best = None
        for settings in SELECTION_GRID:
            trial = self._with(learner, settings).fit_ranking(data, vocabulary)
            f1 = float(dev_lists.corpus_score(self._choice(dev_lists, dev_data, trial)))
            self.selection_.append({"settings": settings, "dev_f1": f1})
            say(f"  {settings}: dev {f1:.2f}")
            if best is None or f1 > best[0]:
                best = (f1, trial)
        return best[1]

    # ------------------------------------------------------------------ prediction
    def _in_context(self, corpus, gold=False, encoded=None):
        """(NBestList, ListContext) of a Corpus; the candidates are scored against its labels only
        with ``gold`` (choosing settings on dev), as tagging needs no scores. encoded : the base's
        encoding of the input, when the caller has it."""
        import dataclasses

        from structperc.nbest.lists import nbest_corpus

        if not gold and corpus.label is not None:
            corpus = dataclasses.replace(corpus, label=None)
        lists = nbest_corpus(self.base_, corpus, int(self.k), encoded)
        context = ListContext(lists, document_ids(corpus, self.document_size), [self.gazetteer_],
                              np.zeros(corpus.n_sentences, dtype=np.int64))
        return lists, context

    def _featurized(self, corpus, gold=False, encoded=None):
        """(NBestList, RankingData) of a Corpus (``_in_context``)."""
        lists, context = self._in_context(corpus, gold, encoded)
        data, _ = featurize_in_context(lists, self.families_, context, self.vocabulary_, grow=False,
                                       clusters=self.clusters_, temperature=self.temperature_)
        return lists, data

    @staticmethod
    def _choice(lists, data, reranker):
        choice = np.full(lists.n_sentences, -1, dtype=np.int64)
        choice[data.qids - 1] = reranker.choose(data)
        return choice

    def predict_corpus(self, corpus, forced=None):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's base score
        of the chosen candidate."""
        return self._reranked(corpus, forced)

    def _reranked(self, corpus, forced=None, encoded=None):
        if forced is not None:
            raise ConfigError("a reranked model cannot keep forced labels: tag with its base model")
        weights = self.reranker_.linear_weights()
        if weights is None:
            lists, data = self._featurized(corpus, encoded=encoded)
            choice = self._choice(lists, data, self.reranker_)
        else:  # a linear reranker scores the candidates without their rows
            lists, context = self._in_context(corpus, encoded=encoded)
            choice = group_argmax(scores_in_context(lists, self.families_, context, self.vocabulary_, weights,
                                                    clusters=self.clusters_, temperature=self.temperature_),
                                  lists.candidate_offsets)
        scores = np.where(choice >= 0, lists.scores[np.maximum(choice, 0)] if len(lists.scores) else 0.0, 0.0)
        return lists.selected_labels(choice), scores

    def predict_ids(self, corpus, forced=None):
        """(label ids flat over the tokens, sentence scores, the base's encoding of the input): the
        reranked labels as ``Tagger.predict_ids`` gives its own, for what scores them under the base
        (the chunks' probabilities of raw-text output). The input is encoded once, for the k-best
        lists and for the caller."""
        encoded = self.base_.encode_input(corpus)
        names, scores = self._reranked(corpus, forced, encoded)
        index = {label: i for i, label in enumerate(self.model_.labels)}
        ids = np.fromiter(map(index.__getitem__, names), dtype=np.int64, count=len(names))
        return ids, scores, encoded

    def predict(self, X):
        """Per-sentence lists of predicted labels (X: a Corpus or token lists)."""
        corpus = self._corpus(X)
        flat, _ = self.predict_corpus(corpus)
        o = corpus.sentence_offsets
        return [flat[o[i]: o[i + 1]] for i in range(corpus.n_sentences)]

    def evaluate(self, X, y=None, details=False):
        """As ``Tagger.evaluate``: accuracy, chunk precision / recall / F1, tokens, sentences, seconds
        and tokens_per_second of the reranked output."""
        corpus = self._corpus(X, y)
        if corpus.label is None:
            from structperc.errors import DataError

            raise DataError("evaluation data has no label column")
        start = time.perf_counter()
        predicted, _ = self.predict_corpus(corpus)
        seconds = time.perf_counter() - start
        result = evaluate_labels(corpus.columns[corpus.label], predicted, corpus.sentence_offsets,
                                 is_bio(self.labels_), details)
        result["seconds"] = seconds
        result["tokens_per_second"] = result["tokens"] / seconds if seconds > 0 else float("inf")
        return result

    def score(self, X, y=None):
        """Chunk F1 as a fraction for chunk labels, else token accuracy (scikit-learn's ``score``)."""
        result = self.evaluate(X, y)
        return (result["f1"] if "f1" in result else result["accuracy"]) / 100.0

    # ------------------------------------------------------------------ the base's face
    @property
    def model_(self):
        """The base's LinearChainModel (labels, reader options, input checks)."""
        return self.base_.model_

    @property
    def labels_(self):
        return self.base_.labels_

    @property
    def classes_(self):
        return self.base_.classes_

    def labels(self):
        return list(self.labels_)

    def missing_symbol(self):
        return self.base_.missing_symbol()

    def reader_options(self, format=None, tag_sep=None, encoding=None):
        return self.base_.reader_options(format, tag_sep, encoding)

    def read(self, path, format=None, require_label=True, tag_sep=None, encoding=None):
        """Read a corpus file as the base's training corpus was read."""
        return self.base_.read(path, format, require_label, tag_sep, encoding)

    def evaluate_file(self, path, format=None, tag_sep=None, encoding=None):
        return self.evaluate(self.read(path, format, tag_sep=tag_sep, encoding=encoding))

    def tag_file(self, input, output=None, format=None, marginals=None, probability=False, tag_sep=None,
                 force_column=None, encoding=None, output_format=None, keep_gold=False, familiarity=False):
        """Read, tag and write batch by batch, as ``Tagger.tag_file``; a reranked model has no
        marginals and keeps no forced labels."""
        from structperc.estimator.files import tag_file

        if marginals or probability:
            raise ConfigError("a reranked model gives no marginals or probabilities: use its base model")
        return tag_file(self, input, output, format, None, False, tag_sep, force_column, encoding, output_format,
                        keep_gold, familiarity)

    def prepare(self):
        self.base_.prepare()
        return self

    def encode_input(self, corpus):
        """A reranked model's scores are not sums of token features (the report's and explain's
        subject): a ConfigError that names the base model instead."""
        raise ConfigError("a reranked model's choices are not sums of token features: explain or report on its "
                          "base model (structperc rerank fit --base), or evaluate without --report")

    def describe(self, top=10):
        summary = self.base_.describe(top)
        summary["reranked"] = {"k": int(self.k), "learner": self.reranker_.learner, "families": self.families_,
                               "features": len(self.vocabulary_), "selection": self.selection_,
                               "training_lists": self.training_lists_}
        return summary

    # ------------------------------------------------------------------ file
    def save(self, path):
        """One ensemble model file (kind "rerank"): the base as member 0, the reranker's arrays
        (``reranker__``), the gazetteer, the clusters and the settings."""
        from structperc.model.linear_chain import FORMAT_VERSION
        from structperc.utils.npz import ENSEMBLE_MARKER, write_npz

        base_arrays, base_meta = self.base_.model_.state()
        reranker_arrays, reranker_meta = self.reranker_.state()
        arrays = {f"member0__{key}": value for key, value in base_arrays.items()}
        arrays.update({f"reranker__{key}": value for key, value in reranker_arrays.items()})
        arrays.update(self.gazetteer_.arrays())
        if self.clusters_ is not None:
            arrays.update(self.clusters_.arrays())
        arrays[ENSEMBLE_MARKER] = np.array(1)
        meta = {"format_version": FORMAT_VERSION, "ensemble": KIND, "members": [base_meta],
                "reranker": reranker_meta,
                "info": {"k": int(self.k), "families": self.families_, "folds": int(self.folds),
                         "document_size": self.document_size, "seed": int(self.seed),
                         "selection": self.selection_, "training_lists": self.training_lists_,
                         "temperature": float(self.temperature_)}}
        return write_npz(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """The reranked tagger of a file written by ``save``."""
        from structperc.utils.npz import read_npz

        arrays, meta = read_npz(path, "model")
        return cls.from_state(arrays, meta, path)

    @classmethod
    def from_state(cls, arrays, meta, path="<model>"):
        from structperc.estimator.tagger import Tagger
        from structperc.model.linear_chain import LinearChainModel

        if meta.get("ensemble") != KIND or "reranker" not in meta:
            raise ModelFileError(f"{path}: not a reranked model file")
        try:
            base_model = LinearChainModel.from_state(
                {k[len("member0__"):]: v for k, v in arrays.items() if k.startswith("member0__")},
                meta["members"][0], path)
            reranker = reranker_from_state({k[len("reranker__"):]: v for k, v in arrays.items()
                                            if k.startswith("reranker__")}, meta["reranker"], path)
            info = meta["info"]
            base = Tagger.from_model(base_model)
            clusters = ClusterPaths.from_arrays(arrays)
            if clusters is None and "cluster" in info["families"]:
                raise ModelFileError(f"{path}: reranked model file lacks the clusters of its cluster family")
            tagger = cls(base=base, k=info["k"], learner=reranker.learner, families=info["families"],
                         folds=info["folds"], document_size=info["document_size"], seed=info["seed"],
                         clusters=None if clusters is None else clusters.paths)
            tagger.base_ = base
            tagger.clusters_ = clusters
            tagger.reranker_ = reranker
            tagger.vocabulary_ = reranker.vocabulary_
            tagger.families_ = check_families(info["families"], clusters)
            tagger.gazetteer_ = Gazetteer.from_arrays(arrays)
            tagger.selection_ = info["selection"]
            tagger.training_lists_ = info["training_lists"]
            tagger.temperature_ = float(info.get("temperature", 1.0))  # files before the posterior family
        except KeyError as exc:
            raise ModelFileError(f"{path}: reranked model file lacks {exc}") from None
        return tagger


@builds_on_sklearn
class RerankedTagger(SequenceTags, SklearnBase, RerankedCore):
    __doc__ = RerankedCore.__doc__


def is_reranked(tagger):
    """Whether a fitted model (``load_model``'s) is a reranked one."""
    return isinstance(tagger, RerankedCore)


def is_reranked_meta(meta):
    """Whether an ensemble file's metadata is a reranked model's (``ensembles.files.load_ensemble``)."""
    return meta.get("ensemble") == KIND


__all__ = ["RerankedCore", "RerankedTagger", "FAMILIES", "is_reranked", "is_reranked_meta"]
