"""The layout chosen from the data when the user names none (structperc.model.layouts), its
override by explicit values, and what `train` and `info` say about it."""
import os

import numpy as np
import pytest
import forked_cli

from structperc.estimator.tagger import Tagger
from structperc.model.layouts import MANY_LABELS, TAG_DICT, choose_layout, describe_layout

NONE_GIVEN = {"all_pairs": None, "dense_count": None, "tag_dict": None}


@pytest.mark.parametrize("n_labels", [3, 9, 17, 23, 49, MANY_LABELS - 1])
def test_small_label_sets_keep_every_pair_and_no_tag_dict(n_labels):
    layout = choose_layout(n_labels, 200_000, NONE_GIVEN)
    assert (layout.all_pairs, layout.dense_count, layout.tag_dict) == (True, None, None)


def test_many_labels_take_gold_pairs_and_a_dense_count():
    layout = choose_layout(321, 204_577, NONE_GIVEN)
    assert (layout.all_pairs, layout.dense_count, layout.tag_dict) == (False, 50, TAG_DICT)
    if TAG_DICT is None:
        assert describe_layout(layout) == "gold pairs, dense count 50, no tag dict (auto: 321 labels)"
    # four times the corpus, four times the count: the same share of features keeps every label
    assert choose_layout(500, 4 * 204_577, NONE_GIVEN).dense_count == 200
    assert choose_layout(321, 1_000, NONE_GIVEN).dense_count == 50
    assert choose_layout(321, 204_577, NONE_GIVEN, words=False).tag_dict is None


def test_explicit_values_override_the_choice():
    given = {"all_pairs": True, "dense_count": None, "tag_dict": 0}
    layout = choose_layout(321, 204_577, given)
    assert (layout.all_pairs, layout.dense_count, layout.tag_dict, layout.auto) == (True, None, None, ())
    assert describe_layout(layout) == "all pairs, no tag dict"
    layout = choose_layout(321, 204_577, {"all_pairs": False, "dense_count": None, "tag_dict": 3})
    assert (layout.all_pairs, layout.dense_count, layout.tag_dict) == (False, None, 3)
    layout = choose_layout(17, 204_577, {"all_pairs": None, "dense_count": 7, "tag_dict": None})
    assert (layout.all_pairs, layout.dense_count, layout.tag_dict) == (False, 7, None)


def many_label_corpus(n_labels=MANY_LABELS + 20, n_sentences=150, seed=0):
    """Token lists whose words each take one or two of ``n_labels`` labels."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n_labels)]
    X, y = [], []
    for _ in range(n_sentences):
        ids = rng.integers(0, n_labels, size=rng.integers(2, 7))
        X.append([words[i] for i in ids])
        y.append([f"T{(i + (rng.random() < 0.2)) % n_labels:03d}" for i in ids])
    return X, y


def test_tagger_chooses_the_layout_for_many_labels_and_keeps_it_for_few():
    X, y = many_label_corpus()
    tagger = Tagger(templates="pos", epochs=2).fit(X, y)
    model = tagger.model_
    tag_dict = f"tag dict {TAG_DICT}" if TAG_DICT else "no tag dict"
    assert model.metadata["layout"]["text"].startswith(f"gold pairs, dense count 50, {tag_dict} (auto:")
    assert (model.tag_dict is not None) == bool(TAG_DICT) and model.emission_pairs is not None
    assert tagger.all_pairs is None and tagger.tag_dict is None  # the parameters stay as given
    explicit = Tagger(templates="pos", epochs=2, all_pairs=True, tag_dict=0).fit(X, y).model_
    assert explicit.tag_dict is None and explicit.emission_pairs is None
    assert explicit.metadata["layout"]["text"] == "all pairs, no tag dict"
    # a small label set trains exactly as with every pair and no tag dictionary
    small_y = [[label[:2] for label in labels] for labels in y]
    default = Tagger(templates="pos", epochs=2).fit(X, small_y).model_
    given = Tagger(templates="pos", epochs=2, all_pairs=True).fit(X, small_y).model_
    assert default.tag_dict is None and default.emission_pairs is None
    np.testing.assert_array_equal(default.weights, given.weights)


def test_train_and_info_say_the_chosen_layout(tmp_path):
    X, y = many_label_corpus()
    path = tmp_path / "many.tagged"
    path.write_text("\n".join(" ".join(f"{w}/{t}" for w, t in zip(ws, ts)) for ws, ts in zip(X, y)) + "\n")
    model = tmp_path / "many.npz"
    env = {**os.environ}
    train = forked_cli.run(["train", str(path), "--templates", "pos", "--epochs", "1", "--model", str(model)], env=env)
    assert train.returncode == 0, train.stderr
    n_labels = len({label for labels in y for label in labels})
    assert n_labels >= MANY_LABELS
    tag_dict = f"tag dict {TAG_DICT}" if TAG_DICT else "no tag dict"
    expected = f"layout: gold pairs, dense count 50, {tag_dict} (auto: {n_labels} labels)"
    assert expected in train.stderr.splitlines()
    info = forked_cli.run(["info", str(model)], env=env)
    assert info.returncode == 0, info.stderr
    assert expected in info.stdout.splitlines()
