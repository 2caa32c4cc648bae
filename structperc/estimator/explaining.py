"""``Tagger.explain``: one sentence in, the terms of its path's score out (``model.explain``)."""
import numpy as np

from structperc.corpus import Corpus
from structperc.errors import ConfigError, DataError
from structperc.model.explain import Explainer, Explanation, corpus_words


def explain(tagger, sentence, labels=None, versus=None):
    """Why the model labels one sentence as it does: every term of the path's score.

    Parameters
    ----------
    tagger : a fitted Tagger (or TaggerCore); an ensemble is a ConfigError: its labels come from
        several models, not from the score of one path
    sentence : list of tokens (str, tuples of column values, or feature dicts), as ``tag`` takes,
        or a Corpus of one sentence
    labels : None (the prediction), or the labeling to explain (a list of labels)
    versus : None (compare each label with its runner-up: the label that keeps the most of the
        score when it alone replaces it), or a list of labels to compare with (None, or the token's
        own label: the runner-up there)

    Returns
    -------
    Explanation
        A dict with the path's score, its emission, transition and end parts, and per token the
        label, the other label and the margin over it, the features that fired with their weights
        for both labels and the transition terms (``Explainer.explain_path``); ``text()`` is the
        terminal view. A ConfigError for a MEMM (its scores are normalized per token).
    """
    if hasattr(tagger, "members"):
        raise ConfigError(f"an ensemble's labels ({tagger.kind}) come from {len(tagger.members)} models, not from "
                          f"the score of one path: explain one of its models")
    if isinstance(sentence, str):
        raise DataError(f"explain takes one sentence as a list of tokens, got the str {sentence[:40]!r}")
    explainer = Explainer(tagger.model_)
    if isinstance(sentence, Corpus):
        if sentence.n_sentences != 1:
            raise DataError(f"explain takes one sentence, the corpus has {sentence.n_sentences}")
        encoded, _ = tagger.encode(sentence)
        tokens = corpus_words(sentence)
    else:
        sentence = list(sentence)
        encoded, _ = tagger.encode([sentence])
        tokens = [token_text(token, t) for t, token in enumerate(sentence)]
    n = len(tokens)
    y = tagger.decode(encoded)[0] if labels is None else label_ids(tagger, labels, n, "labels")
    other = None if versus is None else label_ids(tagger, versus, n, "versus", free=True)
    return Explanation(explainer.explain_path(encoded, 0, y, other, tokens))


def token_text(token, t):
    """What a token shows: the word (the first column), or its number for a feature dict."""
    if isinstance(token, str):
        return token
    if isinstance(token, (tuple, list)) and token:
        return str(token[0])
    return f"#{t + 1}"


def label_ids(tagger, labels, n, name, free=False):
    """Label ids of a list of n labels of the tagger's model; with ``free``, None gives -1."""
    labels = list(labels)
    if len(labels) != n:
        raise DataError(f"{name} has {len(labels)} labels, the sentence {n} tokens")
    known = tagger.model_.labels
    index = {label: i for i, label in enumerate(known)}
    ids = []
    for label in labels:
        if label is None and free:
            ids.append(-1)
        elif label in index:
            ids.append(index[label])
        else:
            raise DataError(f"{name}: {label!r} is not a label of the model ({', '.join(known[:8])}"
                            f"{', ...' if len(known) > 8 else ''})")
    return np.asarray(ids, dtype=np.int64)
