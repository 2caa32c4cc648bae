"""Compile and cache the kernels once, so the first real command does not wait for numba.

``make warm`` runs ``python -m structperc.warmup`` (``make install`` does not: without it, each
command compiles the kernels it calls on first use). Every learning rule is trained for one epoch
on a small synthetic corpus, at both label orders where the rule has them, and the models tag,
give marginals, their chunks' probabilities and k-best lists. The options with kernels of their own
(feature hashing, gold pairs, L1), the rerankers and Brown clustering run once too. numba caches the
machine code beside the kernels' sources.
"""
import sys
import time

import numpy as np

from structperc._kernels import cache


def every_kernel():
    """Every entry point a command announces (``cold``), each once: what the warm-up compiles."""
    from structperc.train import every_variant

    names = [k for _, _, rule in every_variant()
             for k in cache.training_kernels(rule.kernels + rule.l1_kernels, mixing="mixing" in rule.supports)]
    names += cache.tagging_kernels("global") + cache.tagging_kernels("local") + cache.OPTIONS + cache.RERANKING
    names += list(cache.CLUSTERING + cache.NBEST) + [k for kernels in cache.RERANK_APPLYING.values() for k in kernels]
    return list(dict.fromkeys(names))


def _corpus(seed=0, n_sentences=40):
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "big", "red"]
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(2, 8))
        X.append([(words[i], f"P{i % 3}") for i in rng.integers(0, len(words), n)])
        y.append([["B-NP", "I-NP", "O"][i] for i in rng.integers(0, 3, n)])
    return X, y


def _mixing(tagger, corpus):
    """The kernels of parameter mixing (--workers), without starting dask: a shard's data, the
    jump of the rules to mixed weights and the weighted sum."""
    from structperc.train import Problem, make_rule
    from structperc.train.mixing import mix_weights, subset_data

    model = tagger.model_
    data = model.data(model.encoder.transform(corpus))
    subset_data(data, np.arange(0, corpus.n_sentences, 2, dtype=np.int64))
    from structperc.train import TRAINERS

    for name, cls in TRAINERS.items():
        if "mixing" not in cls.supports:
            continue
        rule = make_rule(name, **cls.warmup_options)
        rule.begin(Problem(model, data))
        rule.reset_weights(model.weights)
    mix_weights([model.weights, model.weights], np.array([0.5, 0.5]))


def _options(X, y):
    """The kernels of feature hashing, gold feature-label pairs and the L1 epochs."""
    from structperc.estimator.core import TaggerCore
    from structperc.train import TRAINERS

    TaggerCore(templates="chunk", epochs=1, hash_bits=12).fit(X, y)
    TaggerCore(templates="chunk", epochs=1, all_pairs=False).fit(X, y)
    for name, rule in TRAINERS.items():
        if "l1" in rule.params:
            TaggerCore(templates="chunk", trainer=name, epochs=1, l1=0.001).fit(X, y)


def _reranking(tagger, corpus):
    """The rerankers' kernels: the ranking perceptron, the dual perceptron (linear and polynomial)
    and ranking boosting, trained on the tagger's 3-best lists and choosing among them."""
    from structperc.nbest.lists import nbest_corpus
    from structperc.rerank.pipeline import BoostReranker, DualReranker, Reranker, featurize

    data, vocabulary = featurize(nbest_corpus(tagger, corpus, 3), None, {}, grow=True)
    Reranker(epochs=1).fit_ranking(data, vocabulary).choose(data)
    for kernel in ("linear", "poly:2"):
        DualReranker(kernel=kernel).fit_ranking(data, vocabulary).choose(data)
    BoostReranker(rounds=2).fit_ranking(data, vocabulary).choose(data)


def _clustering(X):
    """The Brown clustering kernels, on the words of X as a raw text file."""
    import os
    import tempfile

    from structperc.clusters.brown import brown_clusters

    with tempfile.TemporaryDirectory(prefix="structperc-warmup-") as folder:
        path = os.path.join(folder, "text.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(" ".join(word for word, _ in sentence) + "\n" for sentence in X)
        brown_clusters([path], n_clusters=3)


def main():
    from structperc._kernels.cache import cold
    from structperc.nbest.lists import nbest_corpus
    from structperc.estimator.core import TaggerCore
    from structperc.corpus import as_corpus
    from structperc.train import every_variant

    start = time.perf_counter()
    if not cold(every_kernel()):
        return
    print(cache.NOTICE, file=sys.stderr, flush=True)
    cache.say_compiling(log=False)  # said: the first compilation does not say it again
    X, y = _corpus()
    corpus = as_corpus(X, y, ["word", "pos"])
    mixed = False
    for name, options, rule in every_variant():
        for order in rule.orders:
            tagger = TaggerCore(templates="chunk", trainer=name, epochs=1, order=order, constrain="bio",
                                tag_dict=1 if order == 2 else None, **options).fit(X, y, dev=X, dev_y=y)
            tagger.predict(X + X)  # 80 sentences: decoded on threads (the kernel of the dev scoring)
            if rule.probabilistic:
                from structperc.estimator.marginals import marginals
                from structperc.estimator.text import chunk_annotations

                marginals(tagger.model_, tagger.model_.encoder.transform(corpus, with_labels=False))
                ids, _, encoded = tagger.predict_ids(corpus)  # and the chunks' probabilities
                chunk_annotations(tagger.model_, tagger.model_.label_names(ids).tolist(), ids, encoded, True)
            if order == 1:
                nbest_corpus(tagger, corpus, 3)
            if not mixed and "mixing" in rule.supports and order == 1:
                mixed = True
                _mixing(tagger, corpus)
                _reranking(tagger, corpus)
    _options(X, y)
    _clustering(X)
    print(f"kernels compiled in {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
