"""Small random models and corpora shared by the kernel tests (the conftest fixtures hand them out),
and the command-line process the interrupt tests signal."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from structperc._kernels.learn.crf import add_counts
from structperc._kernels.learn.sgd import Update, scaled_scores
from structperc.features.encode import FeatureEncoder
from structperc.model.linear_chain import LinearChainModel
from structperc.corpus import as_corpus

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "big", "red"]
ROOT = Path(__file__).resolve().parents[1]


def _default_sigint():
    # a shell without job control starts background commands with SIGINT ignored, and a Python
    # started so keeps ignoring it: restore the default, so the child turns SIGINT into Ctrl-C
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def structperc_process(*args, **kwargs):
    """``python -m structperc ARGS`` as a real process (text pipes for stdout and stderr) that takes
    SIGINT as Ctrl-C whatever the test runner's own SIGINT disposition."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "structperc", *map(str, args)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint, **kwargs)

TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[1]", "suffix2[0]", "bias", "pair:pos[0]"]


def random_sentences(rng, n_sentences, n_labels, max_len=6, tags=("A", "B", "C", "D")):
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(1, max_len + 1))
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
        pos = [f"P{i}" for i in rng.integers(0, 3, n)]
        X.append(list(zip(words, pos)))
        y.append([tags[i] for i in rng.integers(0, n_labels, n)])
    return X, y


def fitted_model(rng, templates, n_labels=3, order=1, constrain=None):
    X, y = random_sentences(rng, 12, n_labels)
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(templates)
    encoded = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, order=order, constrain=constrain)
    model.weights = rng.normal(size=model.weights.shape)
    return model, encoded


def small_model(seed, constrain=None, n_sentences=6, max_len=4, scale=0.5):
    """A model over random sentences (emission and pair features), random weights."""
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, n_sentences, 3, max_len=max_len, tags=("B-NP", "I-NP", "O"))
    if constrain == "bio":  # gold must be allowed: no I-NP after O or at the start
        y = [[("B-NP" if l == "I-NP" and (i == 0 or s[i - 1] == "O") else l) for i, l in enumerate(s)] for s in y]
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, constrain=constrain)
    model.weights = scale * rng.normal(size=model.weights.shape)
    return model, enc


def potentials(model, enc, s, w):
    """The score tables (emission, transition, end) of sentence s under w."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return scaled_scores(w, 1.0, model.layout(), model.data(enc), a, b)


def add_expected_counts(target, scale, layout, data, a, b, node, edge):
    """target += scale * E[Φ(x, y')] for tokens [a, b), from node and edge marginals: the CRF's
    count kernel (``add_counts``) on one weight vector, as the gradient checks call it."""
    add_counts(Update(target, target[:0], scale, 0.0), layout, data, a, b, node, edge)
