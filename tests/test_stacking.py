"""Stacking: the shared fold split and the jackknifed column against naive re-implementations, an
oracle base model whose column the stacked model learns to use, and `train --stack` end to end."""
import json

import numpy as np
import pytest
import forked_cli

from structperc import load_model  # noqa: E402
from structperc.errors import ConfigError
from structperc.nbest.jackknife import fold_split
from structperc.ensembles.stacking import StackedTagger, jackknife_labels, stack_fit, with_column
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from test_bagging import synthetic, write_conll

BASE = dict(templates=["w[0]", "w[-1]", "pos[0]", "bias"], epochs=2)


def naive_folds(n_sentences, folds, seed):
    """Deal a seeded permutation of the sentences round-robin: the i-th sentence of the permutation
    goes to fold i mod folds."""
    order = np.random.default_rng(seed).permutation(n_sentences).tolist()
    fold_of = [None] * n_sentences
    for i, sentence in enumerate(order):
        fold_of[sentence] = i % folds
    return fold_of


@pytest.mark.parametrize("n_sentences, folds, seed", [(10, 2, 0), (23, 5, 3), (5, 5, 1)])
def test_fold_split_is_the_naive_round_robin_deal(n_sentences, folds, seed):
    fold_of = fold_split(n_sentences, folds, seed)
    assert fold_of.tolist() == naive_folds(n_sentences, folds, seed)
    sizes = np.bincount(fold_of, minlength=folds)
    assert sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize("n_sentences, folds", [(10, 2), (23, 5), (5, 5), (101, 10)])
def test_fold_split_in_blocks_is_contiguous_and_balanced(n_sentences, folds):
    fold_of = fold_split(n_sentences, folds, seed=7, blocks=True).tolist()
    # naive: fold f holds sentences ceil(f n / folds) .. ceil((f + 1) n / folds) - 1
    cuts = [(f * n_sentences + folds - 1) // folds for f in range(folds + 1)]
    expected = [f for f in range(folds) for _ in range(cuts[f], cuts[f + 1])]
    assert fold_of == expected
    sizes = np.bincount(fold_of, minlength=folds)
    assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


def test_fold_split_refuses_too_few_folds_or_sentences():
    with pytest.raises(ConfigError, match="at least 2 folds"):
        fold_split(10, 1)
    with pytest.raises(ConfigError, match="cannot be split"):
        fold_split(3, 4)


def test_jackknifed_labels_come_from_models_trained_without_the_held_out_fold():
    X, y = synthetic(24, 7)
    corpus = as_corpus(X, y, ["word", "pos"])
    labels = jackknife_labels(corpus, BASE, folds=3, seed=2)
    fold_of = naive_folds(len(X), 3, 2)
    expected = [None] * len(X)
    for f in range(3):
        kept = [i for i in range(len(X)) if fold_of[i] != f]
        tagger = Tagger(**BASE).fit(as_corpus([X[i] for i in kept], [y[i] for i in kept], ["word", "pos"]))
        for i in range(len(X)):
            if fold_of[i] == f:
                expected[i] = tagger.predict([X[i]])[0]
    assert labels == [label for sentence in expected for label in sentence]


def oracle_data(n_sentences, seed):
    """Words that say nothing about the label, and a column `hint` that is the label itself."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(2, 7))
        tags = ["ABCD"[i] for i in rng.integers(0, 4, n)]
        X.append([(f"w{int(rng.integers(0, 5))}", tag) for tag in tags])
        y.append(tags)
    return as_corpus(X, y, ["word", "hint"])


def test_the_stacked_model_uses_the_column_of_an_oracle_base_model():
    train, test = oracle_data(60, 0), oracle_data(30, 1)
    base = Tagger(templates=["hint[0]"], epochs=5).fit(train)
    base_accuracy = base.score(test)
    assert base_accuracy == 1.0
    stacked = stack_fit(Tagger(templates=["w[0]", "stack[0]"], epochs=5), base, train, folds=3)
    assert stacked.info["jackknife_accuracy"] == 100.0
    assert stacked.score(test) >= base_accuracy
    alone = Tagger(templates=["w[0]"], epochs=5).fit(train)  # the same model without the column
    assert alone.score(test) < 0.6
    with pytest.raises(ConfigError, match="never read the column"):
        stack_fit(Tagger(templates=["w[0]"]), base, train, folds=3)
    with pytest.raises(ConfigError, match="already has a column"):
        with_column(stacked.input_view(train), "stack", ["A"] * train.n_tokens)


# ------------------------------------------------------------------ through the CLI
def _cli(*args, timeout=600):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, timeout=timeout)


def test_train_stack_then_tag_and_eval_with_the_one_file(tmp_path):
    train = write_conll(tmp_path / "train.txt", *synthetic(40, 4))
    test_X, test_y = synthetic(20, 5)
    test = write_conll(tmp_path / "test.txt", test_X, test_y)
    base_path, stacked_path = tmp_path / "base.npz", tmp_path / "stacked.npz"
    r = _cli("train", train, "--model", base_path, "--columns", "word,pos,label", "--templates", "pos", "--epochs", 2,
             "-q")
    assert r.returncode == 0, r.stderr
    r = _cli("train", train, "--model", stacked_path, "--columns", "word,pos,label", "--stack", base_path,
             "--stack-folds", 4, "--epochs", 3, "--dev", test, "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["ensemble"]["folds"] == 4 and summary["ensemble"]["column"] == "stack"

    stacked = load_model(stacked_path)
    assert isinstance(stacked, StackedTagger)
    base = Tagger.load(base_path)
    np.testing.assert_array_equal(stacked.base.model_.weights, base.model_.weights)  # B travels in the file
    top = stacked.members[1]
    templates = top.model_.encoder.template_strings_
    # default templates: B's (the pos preset), then the ones on the stack column
    assert templates[:len(base.model_.encoder.template_strings_)] == base.model_.encoder.template_strings_
    assert templates[-4:] == ["stack[-1]", "stack[0]", "stack[1]", "stack[0]|word[0]"]

    # B tags the input, then the stacked model reads B's label as the column `stack`
    base_labels = base.predict(test_X)
    with_stack = [[(w, p, b) for (w, p), b in zip(sentence, labels)] for sentence, labels in zip(test_X, base_labels)]
    expected = [label for sentence in top.predict(as_corpus(with_stack, None, ["word", "pos", "stack"]))
                for label in sentence]
    tagged = _cli("tag", test, "--model", stacked_path, "-q")
    assert tagged.returncode == 0, tagged.stderr
    rows = [line.split() for line in tagged.stdout.splitlines() if line.strip()]
    assert [row[-1] for row in rows] == expected
    assert all(len(row) == 4 for row in rows)  # the input's three columns and the label: no stack column
    gold = [label for labels in test_y for label in labels]
    accuracy = 100.0 * sum(e == g for e, g in zip(expected, gold)) / len(gold)
    scored = _cli("eval", test, "--model", stacked_path, "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["accuracy"] == pytest.approx(accuracy)
    assert summary["dev"]["accuracy"] == pytest.approx(accuracy)  # the dev file was stacked the same way

    shown = _cli("info", stacked_path, "--json")
    assert json.loads(shown.stdout)["ensemble"]["kind"] == "stack"
    refused = _cli("train", train, "--model", tmp_path / "x.npz", "--columns", "word,pos,label", "--stack",
                   stacked_path)
    assert refused.returncode == 2 and "single base model" in refused.stderr
    refused = _cli("train", train, "--model", tmp_path / "x.npz", "--columns", "word,pos,label", "--stack-folds", 3)
    assert refused.returncode == 2 and "--stack-folds applies only with --stack" in refused.stderr
    refused = _cli("train", train, "--model", tmp_path / "x.npz", "--columns", "word,pos,label", "--stack",
                   base_path, "--init", base_path)
    assert refused.returncode == 2 and "--stack does not take --init" in refused.stderr
    assert not (tmp_path / "x.npz").exists()

