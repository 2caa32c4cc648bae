"""Continued training: ``Tagger.partial_fit`` and ``train --init`` against one longer run, the growth
of the weight blocks for new features and labels, and the errors."""
import json
import subprocess
import sys

import numpy as np
import pytest

from builders import WORDS, random_sentences
from structperc import Tagger
from structperc.errors import ConfigError
from test_dicts import dict_data

TEMPLATES = ["w[0]", "w[-1]|w[0]", "pos[0]", "bias"]


def token_data(seed, n=40, tags=("A", "B", "C")):
    rng = np.random.default_rng(seed)
    X, _ = random_sentences(rng, n, 3)
    lexicon = {w: tags[i % len(tags)] for i, w in enumerate(WORDS)}
    return X, [[lexicon[w] for w, _ in s] for s in X]


@pytest.mark.parametrize("kind", ["dicts", "tokens"])
def test_three_then_two_epochs_equal_five_for_the_averaged_perceptron(kind, tmp_path):
    X, y = dict_data(5) if kind == "dicts" else token_data(5)
    options = dict(trainer="perceptron", seed=7, columns=None if kind == "dicts" else ["word", "pos"], resumable=True)
    if kind == "tokens":
        options["templates"] = TEMPLATES
    once = Tagger(epochs=5, **options).fit(X, y)
    first = Tagger(epochs=3, **options).fit(X, y)
    first.save(tmp_path / "three.npz")
    assert Tagger(**{**options, "resumable": False}).fit(X, y).model_.training_state is None
    continued = Tagger.load(tmp_path / "three.npz").set_params(epochs=2).partial_fit(X, y)
    assert continued.n_iter_ == 5
    assert continued.state_features_ == once.state_features_
    assert continued.transition_features_ == once.transition_features_
    # without the averaging state the run continues from the averaged weights: not the same model
    plain = Tagger.load(tmp_path / "three.npz")
    plain.model_.training_state = None
    plain.set_params(epochs=2).partial_fit(X, y)
    assert plain.state_features_ != once.state_features_
    runs = continued.model_.metadata["training"]["runs"]
    assert len(runs) == 1 and runs[0]["epochs"] == 3


def test_new_attributes_and_labels_start_at_zero_and_old_weights_stay():
    X, y = dict_data(6)
    tagger = Tagger(trainer="perceptron", epochs=3).fit(X, y)
    model = tagger.model_
    before = dict(tagger.state_features_)
    transitions = dict(tagger.transition_features_)
    weights = model.weights.copy()
    layout = model.layout()
    n_features, L = model.n_features, model.n_labels
    X_new = [[{**tok, "fresh": "yes"} for tok in s] for s in X[:5]]
    y_new = [["Z"] * len(s) for s in y[:5]]
    model.encoder.extend(X_new, [label for s in y_new for label in s])
    model.grow(model.encoder.n_features_, model.encoder.labels_)
    assert model.labels == tagger.labels_ + ["Z"] and model.n_features == n_features + 1
    emission = model.emission_weights()
    np.testing.assert_array_equal(emission[:n_features, :L], weights[: layout.off_trans].reshape(-1, L))
    assert not emission[n_features:].any() and not emission[:, L].any()
    grown = model.transition_weights()
    old = weights[layout.off_trans: layout.off_end].reshape(L + 1, L)
    np.testing.assert_array_equal(grown[:L, :L], old[:L])
    np.testing.assert_array_equal(grown[L + 1, :L], old[L])  # the start row moved to the end
    assert not grown[L].any() and not grown[:, L].any()
    assert model.weights[model.layout().off_end + L] == 0.0
    assert {k: v for k, v in tagger.state_features_.items()} == before
    assert all(tagger.transition_features_[k] == v for k, v in transitions.items())


def test_partial_fit_learns_a_new_label():
    X, y = dict_data(7)
    tagger = Tagger(trainer="perceptron", epochs=3, average=False).fit(X, y)
    X_new = [[{**tok, "fresh": "yes"} for tok in s] for s in X[:10]]
    y_new = [["Z"] * len(s) for s in y[:10]]
    tagger.set_params(epochs=3).partial_fit(X_new, y_new)
    assert "Z" in tagger.labels_
    assert tagger.predict(X_new) == y_new
    assert tagger.model_.metadata["training"]["epochs_done"] == 6


def test_templates_must_match():
    X, y = token_data(8)
    tagger = Tagger(templates=TEMPLATES, epochs=2, columns=["word", "pos"]).fit(X, y)
    with pytest.raises(ConfigError, match="differ from the model"):
        tagger.set_params(templates=["w[0]"]).partial_fit(X, y)


def test_cli_init_continues_and_info_shows_both_runs(tmp_path):
    X, y = token_data(9, tags=("B-NP", "I-NP", "O"))
    X2, y2 = token_data(10, tags=("B-NP", "I-NP", "B-VP"))
    for path, sents, labels in ((tmp_path / "a.txt", X, y), (tmp_path / "b.txt", X2, y2)):
        path.write_text("".join("".join(f"{w} {p} {label}\n" for (w, p), label in zip(s, ls)) + "\n"
                                for s, ls in zip(sents, labels)))
    (tmp_path / "t.tpl").write_text("\n".join(TEMPLATES) + "\n")
    run = [sys.executable, "-m", "structperc", "train"]
    first = subprocess.run(run + [str(tmp_path / "a.txt"), "--model", str(tmp_path / "m1.npz"), "--epochs", "2",
                                  "--templates", str(tmp_path / "t.tpl"), "--resumable", "-q"],
                           capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m2.npz"), "--epochs", "3",
                                   "--init", str(tmp_path / "m1.npz"), "-q"], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    info = subprocess.run([sys.executable, "-m", "structperc", "info", str(tmp_path / "m2.npz"), "--json"],
                          capture_output=True, text=True)
    summary = json.loads(info.stdout)
    assert "B-VP" in summary["labels"]
    assert summary["training"]["epochs_done"] == 5
    assert [r["epochs"] for r in summary["training"]["runs"]] == [2]
    bad = subprocess.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m3.npz"), "--init",
                                str(tmp_path / "m1.npz"), "--templates", "chunk", "-q"], capture_output=True, text=True)
    # a cold numba cache adds its one notice; the error itself is one line
    errors = [line for line in bad.stderr.strip().splitlines() if line != "compiling kernels, once"]
    assert bad.returncode == 2 and len(errors) == 1
    assert "differ from the model" in bad.stderr
