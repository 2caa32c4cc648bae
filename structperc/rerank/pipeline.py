"""Reranking n-best lists: the file pipelines behind ``structperc nbest`` and ``structperc rerank``.

The pieces live in ``rerank_features`` (global features, featurizing n-best lists), ``rerank_data``
(RankingData, the SVMrank format, vocabulary files, scores of a choice) and ``rerank_learners`` (the
rerankers); their public names are importable from here.
"""
import numpy as np

from structperc.errors import ConfigError
from structperc.rerank.data import (  # noqa: F401
    FIRST_FEATURE_ID,
    SCORE_FEATURE,
    RankingData,
    chosen_score,
    read_svmrank,
    read_vocabulary,
    write_svmrank,
    write_vocabulary,
)
from structperc.rerank.features import (  # noqa: F401
    DEFAULT_FEATURES,
    ENTITY_BACKOFF,
    ENTITY_FEATURES,
    FEATURES,
    GLOBAL_FEATURES,
    NER_FEATURES,
    candidate_feature_strings,
    check_feature_names,
    featurize,
)
from structperc.rerank.learners import (  # noqa: F401
    FORMAT_VERSION,
    LEARNERS,
    BoostReranker,
    DualReranker,
    Reranker,
    load_reranker,
)


def write_nbest_file(tagger, input, k, output=None, format="block", features=None, vocab=None, vocab_out=None,
                     encoding=None):
    """The k best labelings of every sentence of a corpus file, written as "block" or "svmrank".

    input is read as ``tagger`` read its training corpus, with or without the label column.
    svmrank: ``vocab`` reads a fixed feature vocabulary (unseen features are dropped), otherwise one
    is learned on these lists and written to ``vocab_out`` when given. output: a file written
    atomically, or None for standard output. Returns the NBestList summary plus "output".
    """
    from structperc.utils.atomic import open_output
    from structperc.nbest.lists import nbest_corpus, write_block

    if format not in ("block", "svmrank"):
        raise ConfigError(f"unknown n-best format {format!r}: choose one of block, svmrank")
    names = check_feature_names(features)
    vocabulary = read_vocabulary(vocab)[1] if vocab else None
    nb = nbest_corpus(tagger, tagger.read(input, require_label=False, encoding=encoding), k)
    with open_output(output) as out:
        if format == "block":
            write_block(out, nb)
        else:
            data, vocabulary = featurize(nb, names, vocabulary, grow=vocab is None)
            write_svmrank(out, data)
    if format == "svmrank" and vocab_out:
        write_vocabulary(vocab_out, vocabulary, names)
    summary = nb.summary()
    summary["output"] = str(output) if output else None
    return summary


def train_reranker_file(path, vocab=None, learner="perceptron", **params):
    """A reranker trained on an SVMrank file: ``LEARNERS[learner](**params)`` (perceptron, dual or
    boost); with ``vocab`` (a feature vocabulary file) its features and vocabulary are stored in the
    reranker. Returns (reranker, summary)."""
    if learner not in LEARNERS:
        raise ConfigError(f"unknown reranker learner {learner!r}: choose one of {', '.join(LEARNERS)}")
    data = read_svmrank(path)
    features, vocabulary = read_vocabulary(vocab) if vocab else (None, None)
    reranker = LEARNERS[learner](features=features, **params).fit_ranking(data, vocabulary)
    summary = {"learner": learner, "groups": data.n_groups, "candidates": data.n_rows,
               "history": reranker.history_}
    if hasattr(reranker, "weights_"):
        summary["weights"] = len(reranker.weights_)
    if learner == "dual":
        summary["support_rows"] = len(reranker.support_offsets_) - 1
    return reranker, summary


def apply_reranker_file(reranker, path, output=None):
    """Choose one candidate per qid of an SVMrank file and write "QID INDEX SCORE # COMMENT" lines
    (INDEX: 0-based position within the qid; SCORE: w . x) to ``output`` (atomically) or standard
    output. Returns {"groups"} plus, when the file has targets, the "reranked", "first" and "oracle"
    scores of ``chosen_score``."""
    from structperc.utils.atomic import open_output

    data = read_svmrank(path)
    rows = reranker.choose(data)
    scores = reranker.decision_function(data)
    with open_output(output) as out:
        lines = []
        for g, j in enumerate(rows):
            line = f"{int(data.qids[g])} {int(j - data.group_offsets[g])} {float(scores[j])!r}"
            if data.comments[j]:
                line += f" # {data.comments[j]}"
            lines.append(line + "\n")
        out.write("".join(lines))
    summary = {"groups": data.n_groups}
    if np.any(data.targets != 0):
        summary["reranked"] = chosen_score(data, rows)
        summary["first"] = chosen_score(data, data.group_offsets[:-1])
        summary["oracle"] = chosen_score(data, data.best_rows())
    return summary
