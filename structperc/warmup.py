"""Compile and cache the kernels once, so the first real command does not wait for numba.

``make install`` runs ``python -m structperc.warmup``: every learning rule is trained for one epoch
on a small synthetic corpus, at both label orders where the rule has them, and the models tag,
give marginals and k-best lists. numba caches the machine code beside the kernels' sources.
"""
import sys
import time

import numpy as np


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
    from .train import Problem, make_rule
    from .train.mixing import mix_weights, subset_data

    model = tagger.model_
    data = model.data(model.encoder.transform(corpus))
    subset_data(data, np.arange(0, corpus.n_sentences, 2, dtype=np.int64))
    for name in ("perceptron", "crf"):
        rule = make_rule(name, **({"eta0": 0.1} if name == "crf" else {}))
        rule.begin(Problem(model, data))
        rule.reset_weights(model.weights)
    mix_weights([model.weights, model.weights], np.array([0.5, 0.5]))


def main():
    from .kernel_cache import MIXING, PARALLEL_DECODING, cold, tagging_kernels, training_kernels
    from .nbest import nbest_corpus
    from .tagger import Tagger, _as_corpus
    from .train import TRAINERS

    start = time.perf_counter()
    if not cold([k for name in TRAINERS for k in training_kernels(name)] + list(tagging_kernels("global"))
                + list(PARALLEL_DECODING) + list(MIXING)):
        return
    print("compiling kernels, once", file=sys.stderr, flush=True)
    X, y = _corpus()
    corpus = _as_corpus(X, y, ["word", "pos"])
    for name, rule in TRAINERS.items():
        for order in getattr(rule, "orders", (1, 2)):
            tagger = Tagger(templates="chunk", trainer=name, epochs=1, order=order, constrain="bio",
                            tag_dict=1 if order == 2 else None).fit(X, y, dev=X, dev_y=y)
            tagger.predict(X + X)  # 80 sentences: the parallel decoder (the dev scoring ran the serial one)
            if rule.probabilistic:
                from .probability import marginals

                marginals(tagger.model_, tagger.model_.encoder.transform(corpus, with_labels=False))
            if order == 1:
                nbest_corpus(tagger, corpus, 3)
            if name == "perceptron" and order == 1:
                _mixing(tagger, corpus)
    print(f"kernels compiled in {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
