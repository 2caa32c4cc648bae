"""``Tagger``: the scikit-learn style estimator over encoder, model and learning rules."""
import time

import numpy as np

from .corpus import Corpus
from .encode import FIRST_ID, FeatureEncoder
from .errors import ConfigError
from .evaluate import evaluate_labels
from .model import LinearChainModel, is_bio
from .train import Problem, make_rule, train_online


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
    average : average the weights (perceptron; averaged SGD for the log-linear rules)
    min_count : feature count cut-off (Collins' cc)
    rare_threshold : training count below which a word is rare (``@rare`` templates)
    constrain : None or "bio" (I-X only after B-X or I-X), in training and decoding
    order : 1 (bigram labels) or 2 (trigram labels)
    tag_dict : None, or k: words seen >= k times may only take the tags seen with them
    seed : seed of the per-epoch shuffles
    columns : names of the token values when fitting on plain lists
    trainer_options : dict of extra options for the learning rule (l2, eta0, batch_size, ...)

    Attributes
    ----------
    model_ : LinearChainModel
    labels_ : list of str
    history_ : list of EpochRecord
    n_iter_ : the epoch whose weights were kept (best on dev, or the last)
    """

    def __init__(self, templates="chunk", trainer="perceptron", epochs=10, average=True, min_count=0,
                 rare_threshold=5, constrain=None, order=1, tag_dict=None, seed=0, columns=None,
                 trainer_options=None):
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
        self.trainer_options = trainer_options

    def fit(self, X, y=None, dev=None, dev_y=None, progress=None):
        """Train on X (a Corpus with labels, or token lists with labels y); returns self.

        dev : optional held-out data (Corpus, or token lists with dev_y); when given, the weights of
        the best dev epoch are kept (Collins' Numits).
        """
        corpus = _as_corpus(X, y, self.columns)
        if corpus.label is None:
            raise ValueError("training data has no label column")
        encoder = FeatureEncoder(self.templates, self.min_count, self.rare_threshold)
        encoded = encoder.fit_transform(corpus, corpus.columns[corpus.label])
        tag_dict = None
        if self.tag_dict:
            if encoded.word_ids is None:
                raise ConfigError("--tag-dict needs templates that use the word column")
            tag_dict = build_tag_dict(encoded.word_ids, encoded.labels, len(encoder.vocabularies_["word"]) + FIRST_ID,
                                      len(encoder.labels_), self.tag_dict)
        options = {"average": self.average, **(self.trainer_options or {})}
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
            dev_score=dev_score, progress=progress,
        )
        model.metadata["training"] = {
            "templates": self.templates if isinstance(self.templates, str) else list(self.templates),
            "trainer": self.trainer, "epochs": self.epochs, "average": self.average,
            "min_count": self.min_count, "rare_threshold": self.rare_threshold,
            "constrain": self.constrain, "order": self.order, "tag_dict": self.tag_dict,
            "seed": self.seed, "trainer_options": self.trainer_options or {},
            "best_epoch": self.n_iter_, "n_sentences": encoded.n_sentences, "n_tokens": encoded.n_tokens,
        }
        if dev is not None:
            model.metadata["dev_history"] = [r.dev for r in self.history_]
        model.metadata["training"]["features_seen"] = encoder.n_features_
        model.metadata["training"]["pair_features_seen"] = encoder.n_pair_features_
        del rule  # its buffers (the raw weights, the averaging sums) are no longer needed
        model.prune()
        return self

    # ------------------------------------------------------------------ prediction
    def predict_corpus(self, corpus, weights=None):
        """Predicted label strings, flat over the tokens of a Corpus, and each sentence's score."""
        encoded = self.model_.encoder.transform(corpus, with_labels=False)
        ids, scores = self.model_.decode(encoded, weights)
        return [self.model_.labels[i] for i in ids], scores

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

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        return self.model_.save(path)

    @classmethod
    def load(cls, path):
        model = LinearChainModel.load(path)
        training = model.metadata.get("training", {})
        tagger = cls(**{k: training[k] for k in (
            "templates", "trainer", "epochs", "average", "min_count", "rare_threshold", "constrain",
            "order", "tag_dict", "seed") if k in training})
        tagger.columns = model.metadata.get("input", {}).get("columns")
        tagger.model_ = model
        tagger.labels_ = model.labels
        tagger.n_iter_ = training.get("best_epoch")
        return tagger

