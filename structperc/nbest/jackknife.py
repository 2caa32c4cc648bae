"""Jackknifing: a tagger's output on its own training sentences that looks like output on unseen
text. The sentences are dealt into K folds; for each fold a tagger of the same configuration is
trained on the other K - 1 folds and applied to the held-out one.

Used for the n-best lists of reranker training (``nbest.jackknife_nbest``) and for the predicted
column of stacking (``stacking.jackknife_labels``).
"""
import time

import numpy as np

from structperc.errors import ConfigError


def fold_split(n_sentences, folds, seed=0, blocks=False):
    """The fold (int64 (n_sentences,)) of every sentence: a permutation drawn from ``seed`` deals
    the sentences round-robin, so fold f holds the sentences whose permuted position is f modulo
    ``folds`` (fold sizes differ by at most one).

    blocks : fold f is instead the f-th of ``folds`` contiguous runs of sentences (sizes differ by at
        most one; ``seed`` unused). A document then falls in one fold, or two at a cut, so the model
        that labels a fold has not seen the rest of its documents: for named entities, which recur
        within a document, the held-out labels are then as hard as new text's."""
    if int(folds) != folds or folds < 2:
        raise ConfigError(f"jackknifing needs at least 2 folds, got {folds!r}")
    if n_sentences < folds:
        raise ConfigError(f"{n_sentences} sentences cannot be split into {folds} folds")
    if blocks:
        return np.arange(n_sentences, dtype=np.int64) * folds // n_sentences
    fold_of = np.empty(n_sentences, dtype=np.int64)
    fold_of[np.random.default_rng(seed).permutation(n_sentences)] = np.arange(n_sentences) % folds
    return fold_of


def jackknife(corpus, tagger_params, apply, folds=10, seed=0, progress=None, blocks=False):
    """For each fold f (``fold_split``): a ``Tagger(**tagger_params)`` trained on the sentences of the
    other folds, then ``apply(tagger, held)`` on the Corpus ``held`` of fold f's sentences (in corpus
    order). Returns a list, one entry per fold, of (fold f's sentence indices, what apply returned).

    tagger_params : a dict of Tagger parameters, or an estimator (a ``Tagger``, a ``CRF``) whose
        class and parameters (``get_params``) each fold's tagger takes.

    progress : optional callable(fold, folds, seconds) called after each fold; blocks : contiguous
        folds (``fold_split``).
    """
    from structperc.estimator.core import TaggerCore as Tagger

    fold_of = fold_split(corpus.n_sentences, folds, seed, blocks)
    parts = []
    for f in range(folds):
        start = time.perf_counter()
        held = np.flatnonzero(fold_of == f)
        tagger = (Tagger(**tagger_params) if isinstance(tagger_params, dict)
                  else type(tagger_params)(**tagger_params.get_params()))
        tagger.fit(corpus.subset(np.flatnonzero(fold_of != f)))
        parts.append((held, apply(tagger, corpus.subset(held))))
        if progress is not None:
            progress(f + 1, folds, time.perf_counter() - start)
    return parts
