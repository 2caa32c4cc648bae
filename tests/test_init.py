"""Continued training: ``Tagger.partial_fit`` and ``train --init`` against one longer run, the growth
of the weight blocks for new features and labels, and the errors."""
import json

import numpy as np
import pytest
import forked_cli

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
    # the new attributes: fresh=yes, and any attribute of value 0 that training pruned (a zero-valued
    # attribute is an attribute, as in CRFsuite, and gets its weights again when the model grows)
    new = model.encoder.attributes_[n_features:]
    assert model.labels == tagger.labels_ + ["Z"] and "fresh=yes" in new
    assert model.n_features == n_features + len(new) and all(
        name == "fresh=yes" or any(name in tok for s in X for tok in s) for name in new)
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
    run = ["train"]  # `python -m structperc train`, forked from one process that imported the command line
    first = forked_cli.run(run + [str(tmp_path / "a.txt"), "--model", str(tmp_path / "m1.npz"), "--epochs", "2",
                                  "--templates", str(tmp_path / "t.tpl"), "--resumable", "-q"])
    assert first.returncode == 0, first.stderr
    second = forked_cli.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m2.npz"), "--epochs", "3",
                                   "--init", str(tmp_path / "m1.npz"), "-q"])
    assert second.returncode == 0, second.stderr
    info = forked_cli.run(["info", str(tmp_path / "m2.npz"), "--json"])
    summary = json.loads(info.stdout)
    assert "B-VP" in summary["labels"]
    assert summary["training"]["epochs_done"] == 5
    assert [r["epochs"] for r in summary["training"]["runs"]] == [2]
    bad = forked_cli.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m3.npz"), "--init",
                                str(tmp_path / "m1.npz"), "--templates", "chunk", "-q"])
    # a cold numba cache adds its one notice; the error itself is one line
    errors = [line for line in bad.stderr.strip().splitlines() if line != "compiling kernels, once"]
    assert bad.returncode == 2 and len(errors) == 1
    assert "differ from the model" in bad.stderr
    # the options that shape the model are the model's: another value, or a lexicon, is refused
    lexicon = tmp_path / "lex.txt"
    lexicon.write_text("w1\tA\n")
    for extra, words in ((["--order", "2"], "--order 2 differs"), (["--min-count", "3"], "--min-count 3 differs"),
                         (["--constrain", "bio"], "--constrain bio differs"),
                         (["--lexicon", f"c={lexicon}"], "--lexicon does not apply")):
        refused = forked_cli.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m4.npz"), "--init",
                                        str(tmp_path / "m1.npz"), *extra, "-q"])
        assert refused.returncode == 2 and words in refused.stderr, (extra, refused.stderr)
        assert not (tmp_path / "m4.npz").exists()
    same = forked_cli.run(run + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m5.npz"), "--init",
                                 str(tmp_path / "m1.npz"), "--order", "1", "--min-count", "0", "-q"])
    assert same.returncode == 0, same.stderr


# ---------------------------------------------------------------- new features in continued training
PAIR_TEMPLATES = TEMPLATES + ["pair:pos[0]", "pair:w[-1]|w[0]"]
COLUMNS = ["word", "pos"]


def with_new_word(X, y, seed, word="gnu", label="Z"):
    """X, y with one token of every sentence replaced by `word` (labelled `label`), a word that
    ``token_data`` never draws."""
    rng = np.random.default_rng(seed)
    X2, y2 = [], []
    for sentence, labels in zip(X, y):
        sentence, labels = list(sentence), list(labels)
        i = int(rng.integers(len(sentence)))
        sentence[i] = (word, sentence[i][1])
        labels[i] = label
        X2.append(sentence)
        y2.append(labels)
    return X2, y2


def weight_blocks(model, w):
    """Copies of the (F, L) emission (dense), (L + 1, L) transition, (L,) end and (P, L + 1, L) pair
    blocks of a weight-shaped vector w of the model."""
    layout, L = model.layout(), model.n_labels
    return (np.array(model.emission_weights(w)), w[layout.off_trans: layout.off_end].reshape(L + 1, L).copy(),
            w[layout.off_end: layout.off_pair].copy(),
            w[layout.off_pair: layout.off_trans2].reshape(-1, L + 1, L).copy())


def weight_vectors(model):
    """The weights and the training state's weight-shaped vectors (raw w, averaging sums u)."""
    state = model.training_state or {}
    return {"weights": model.weights, **{k: state[k] for k in ("w", "u") if k in state}}


def model_pairs(model):
    """{(feature id, label id)} of a model of gold feature-label pairs."""
    offsets, labels = model.emission_pairs
    return {(f, int(c)) for f in range(model.n_features) for c in labels[offsets[f]: offsets[f + 1]]}


@pytest.mark.parametrize("all_pairs", [True, False])
@pytest.mark.parametrize("templates", [TEMPLATES, "chunk-pair"])
def test_partial_fit_adds_the_features_of_a_new_word_and_predicts_with_them(templates, all_pairs):
    X, y = token_data(11)
    X2, y2 = with_new_word(*token_data(12), seed=12)
    tagger = Tagger(templates=templates, epochs=3, columns=COLUMNS, all_pairs=all_pairs).fit(X, y)
    n_features = tagger.model_.encoder.n_features_
    n_pair = tagger.model_.encoder.n_pair_features_
    tagger.set_params(epochs=4).partial_fit(X2, y2)
    encoder = tagger.model_.encoder
    assert encoder.n_features_ > n_features
    assert encoder.n_pair_features_ > n_pair or n_pair == 0
    assert tagger.state_features_[("word[0]=gnu", "Z")] > 0
    if templates == "chunk-pair":
        names = {encoder.describe_feature(g, pair=True) for g in range(encoder.n_pair_features_)}
        assert "pair:word[0]=gnu" in names
    # unseen sentences: the new word takes the label it had in the new data (its features are the
    # only ones that tell; a model without them tags it by its random neighbours)
    X3, _ = with_new_word(*token_data(13, n=20), seed=13)
    predicted = tagger.predict(X3)
    at_new_word = [label for sentence, labels in zip(X3, predicted)
                   for (word, _), label in zip(sentence, labels) if word == "gnu"]
    assert len(at_new_word) == 20 and at_new_word.count("Z") >= 18


@pytest.mark.parametrize("all_pairs", [True, False])
@pytest.mark.parametrize("templates", [PAIR_TEMPLATES, "chunk-pair"])
def test_growth_keeps_every_weight_and_training_state_and_adds_zeros(templates, all_pairs):
    from structperc._kernels.score.emission import gold_pairs
    from structperc.corpus import as_corpus

    X, y = token_data(14)
    tagger = Tagger(templates=templates, epochs=3, columns=COLUMNS, all_pairs=all_pairs, resumable=True).fit(X, y)
    model = tagger.model_
    encoder = model.encoder
    F0, P0, L0 = model.n_features, model.n_pair_features, model.n_labels
    before = {name: weight_blocks(model, v) for name, v in weight_vectors(model).items()}
    assert set(before) == {"weights", "w", "u"}
    old_pairs = None if all_pairs else model_pairs(model)
    X2, y2 = with_new_word(*token_data(15), seed=15)
    encoder.labels_ = encoder.labels_ + ["Z"]
    encoded = encoder.extend(as_corpus(X2, y2, COLUMNS))
    pairs = None
    if not all_pairs:
        pairs = gold_pairs(encoded.feature_offsets, encoded.feature_ids, encoded.labels, encoder.n_features_,
                           len(encoder.labels_), 0)
    model.grow(encoder.n_features_, encoder.labels_, encoder.n_pair_features_, pairs)
    assert model.n_features > F0 and model.n_pair_features > P0 and model.n_labels == L0 + 1
    states = [*range(L0), L0 + 1]  # the old start state L0 is now L0 + 1
    for name, v in weight_vectors(model).items():
        emission, transition, end, pair = weight_blocks(model, v)
        old_emission, old_transition, old_end, old_pair = before[name]
        np.testing.assert_array_equal(emission[:F0, :L0], old_emission)
        assert not emission[F0:].any() and not emission[:, L0:].any()
        np.testing.assert_array_equal(transition[np.ix_(states, range(L0))], old_transition)
        np.testing.assert_array_equal(end[:L0], old_end)
        np.testing.assert_array_equal(pair[:P0][:, states][:, :, :L0], old_pair)
        assert not pair[P0:].any() and not pair[:, :, L0:].any() and not pair[:, L0].any()
    assert model.training_state["counter"] == 3 * len(X)
    if not all_pairs:
        # the model's pairs and those of the new data: each feature of a token with its gold label
        o, ids, gold = encoded.feature_offsets, encoded.feature_ids, encoded.labels
        seen = {(int(f), int(gold[i])) for i in range(len(gold)) for f in ids[o[i]: o[i + 1]]}
        assert model_pairs(model) == old_pairs | seen
        assert len(model.emission_pairs[1]) == len(old_pairs | seen)


def named_weights(model, w):
    """{block and names: weight} of the nonzero entries of a weight vector of the model."""
    encoder, names = model.encoder, model.labels + ["<s>"]
    emission, transition, end, pair = weight_blocks(model, w)
    out = {("emission", encoder.describe_feature(int(f)), names[c]): emission[f, c] for f, c in zip(*np.nonzero(emission))}
    out.update({("transition", names[p], names[c]): transition[p, c] for p, c in zip(*np.nonzero(transition))})
    out.update({("end", names[c]): end[c] for c in np.flatnonzero(end)})
    out.update({("pair", encoder.describe_feature(int(g), pair=True), names[p], names[c]): pair[g, p, c]
                for g, p, c in zip(*np.nonzero(pair))})
    return out


def test_continued_averaged_perceptron_with_new_features_equals_a_naive_run_over_all_features():
    """fit(A) for 2 epochs, then partial_fit(B) for 1, B with a word A lacks: the averaged weights of
    a naive perceptron that holds every feature of A and B from the start, visiting the same
    sentences in the same order (weights compared by feature and label names)."""
    from naive import explicit_average
    from test_engine import naive_perceptron

    from structperc.features.encode import FeatureEncoder
    from structperc.model.linear_chain import LinearChainModel
    from structperc.corpus import as_corpus

    seed = 7
    XA, yA = token_data(16, n=10)
    XB, yB = with_new_word(*token_data(17, n=8), seed=17, label="B")
    options = dict(templates=PAIR_TEMPLATES, trainer="perceptron", seed=seed, columns=COLUMNS, resumable=True)
    tagger = Tagger(epochs=2, **options).fit(XA, yA)
    tagger.set_params(epochs=1).partial_fit(XB, yB)
    both = as_corpus(XA + XB, yA + yB, COLUMNS)
    encoder = FeatureEncoder(PAIR_TEMPLATES)
    encoded = encoder.fit_transform(both, both.columns["label"])
    assert encoder.labels_ == tagger.labels_
    reference = LinearChainModel(encoder)
    # the visit orders of fit (epochs 1, 2 over A) and partial_fit (epoch 3 over B)
    rng = np.random.default_rng(seed)
    visits = [rng.permutation(len(XA)), rng.permutation(len(XA))]
    rng = np.random.default_rng(seed)
    rng.permutation(len(XB))
    rng.permutation(len(XB))
    visits.append(len(XA) + rng.permutation(len(XB)))
    history = naive_perceptron(reference, encoded, np.concatenate(visits).astype(np.int64))
    expected = named_weights(reference, explicit_average(history))
    got = named_weights(tagger.model_, tagger.model_.weights)
    expected = {k: v for k, v in expected.items() if abs(v) > 1e-9}
    got = {k: v for k, v in got.items() if abs(v) > 1e-9}
    assert set(got) == set(expected)
    assert any(k[0] == "emission" and k[1] == "word[0]=gnu" for k in got)
    np.testing.assert_allclose([got[k] for k in sorted(expected)], [expected[k] for k in sorted(expected)],
                               atol=1e-9)


def assert_old_ids_stay(again, before, n_old, n_old_pair, exact):
    """The ids below the old counts at every token of `again` are those of `before`; with `exact`, no
    other id fires."""
    for kind, n in (("feature", n_old), ("pair", n_old_pair)):
        o, ids = getattr(again, f"{kind}_offsets"), getattr(again, f"{kind}_ids")
        o_before, ids_before = getattr(before, f"{kind}_offsets"), getattr(before, f"{kind}_ids")
        for i in range(again.n_tokens):
            row = ids[o[i]: o[i + 1]]
            np.testing.assert_array_equal(row[row < n], ids_before[o_before[i]: o_before[i + 1]])
            assert not exact or (row < n).all()


@pytest.mark.parametrize("min_count", [0, 2])
def test_extended_ids_of_new_data_are_a_fresh_encoders_up_to_renumbering(min_count):
    """The new corpus encoded by the grown index against a fresh encoder fitted on it alone: the same
    features at every token (by name), the old ids keep their names, and a new feature is one the
    fresh encoder keeps (seen min_count times in the new data)."""
    from collections import Counter

    from structperc.features.encode import FeatureEncoder
    from structperc.corpus import as_corpus

    templates = PAIR_TEMPLATES + ["suffix2[0]", "pos[0]|w[1]", "pair:suffix2[0]|pos[-1]"]
    XA, yA = token_data(18, n=15)
    XB, yB = with_new_word(*token_data(19, n=15), seed=19)
    XB, yB = with_new_word(XB, yB, seed=20, word="yak", label="A")
    A, B = as_corpus(XA, yA, COLUMNS), as_corpus(XB, yB, COLUMNS)
    encoder = FeatureEncoder(templates, min_count=min_count)
    encoded_a = encoder.fit_transform(A, A.columns["label"])
    old = [encoder.describe_feature(f) for f in range(encoder.n_features_)]
    old_pair = [encoder.describe_feature(g, pair=True) for g in range(encoder.n_pair_features_)]
    encoder.labels_ = encoder.labels_ + ["Z"]
    grown = encoder.extend(B)
    assert [encoder.describe_feature(f) for f in range(len(old))] == old
    assert [encoder.describe_feature(g, pair=True) for g in range(len(old_pair))] == old_pair
    # the old data encodes to the same ids, plus (min_count > 1) the features it held too rarely
    # that the new data adds
    assert_old_ids_stay(encoder.transform(A), encoded_a, len(old), len(old_pair), exact=min_count <= 1)
    np.testing.assert_array_equal(encoder.transform(B).feature_ids, grown.feature_ids)
    assert "word[0]=gnu" in {encoder.describe_feature(f) for f in range(len(old), encoder.n_features_)}
    counts = Counter(w for s in XA + XB for w, _ in s)
    assert dict(zip(encoder.vocabularies_["word"], encoder.word_counts_.tolist())) == counts
    fresh = FeatureEncoder(templates, min_count=min_count)
    alone = fresh.fit_transform(B, B.columns["label"])
    for kind, pair in (("feature", False), ("pair", True)):
        o_grown, ids_grown = getattr(grown, f"{kind}_offsets"), getattr(grown, f"{kind}_ids")
        o_alone, ids_alone = getattr(alone, f"{kind}_offsets"), getattr(alone, f"{kind}_ids")
        n_old = len(old_pair if pair else old)
        renumber = {}
        for i in range(grown.n_tokens):
            mine = [int(f) for f in ids_grown[o_grown[i]: o_grown[i + 1]]]
            theirs = [int(f) for f in ids_alone[o_alone[i]: o_alone[i + 1]]]
            names = [encoder.describe_feature(f, pair=pair) for f in mine]
            fresh_names = [fresh.describe_feature(f, pair=pair) for f in theirs]
            if min_count <= 1:
                assert names == fresh_names
                for f, g in zip(theirs, mine):
                    assert renumber.setdefault(f, g) == g  # one id for one id: a renumbering
            else:
                # every feature the fresh encoder keeps is there; the others are old ones
                assert set(fresh_names) <= set(names)
                assert all(f < n_old for f, name in zip(mine, names) if name not in fresh_names)
        if min_count <= 1:
            assert len(set(renumber.values())) == len(renumber)
            # the new features are numbered after the old ones in the fresh encoder's (first-seen) order
            added = [renumber[f] for f in sorted(renumber) if renumber[f] >= n_old]
            assert added == list(range(n_old, n_old + len(added)))
        new = {encoder.describe_feature(f, pair=pair) for f in range(n_old, len(getattr(encoder, f"{kind}_keys_")))}
        kept = {fresh.describe_feature(f, pair=pair) for f in range(len(getattr(fresh, f"{kind}_keys_")))}
        assert new == kept - set(old_pair if pair else old)


def test_hashing_adds_the_ids_a_pruned_index_lacks_with_the_first_radices():
    """Under hashing an id is a hashed key: old ids keep their buckets, the buckets of the new data
    are those of its keys under the radices of the first training (written out with
    ``naive.template_keys``), and every bucket it fires is in the grown index."""
    from naive import template_keys

    from structperc._kernels.encode.keys import bucket_of
    from structperc.features.encode import FIRST_ID, FeatureEncoder
    from structperc.corpus import as_corpus

    bits = 12
    XA, yA = token_data(21, n=15)
    XB, yB = with_new_word(*token_data(22, n=15), seed=22)
    A, B = as_corpus(XA, yA, COLUMNS), as_corpus(XB, yB, COLUMNS)
    encoder = FeatureEncoder(PAIR_TEMPLATES, hash_bits=bits)
    encoder.fit_transform(A, A.columns["label"])
    # a trained model keeps only the ids with a weight: prune every third
    keep = np.arange(encoder.n_features_) % 3 == 0
    keep_pair = np.arange(encoder.n_pair_features_) % 3 == 0
    encoder.drop_features(keep, keep_pair)
    before = encoder.transform(A)
    kept = encoder.feature_keys_.copy(), encoder.pair_keys_.copy()
    radix = {f: len(v) + FIRST_ID for f, v in encoder.vocabularies_.items()}
    encoder.labels_ = encoder.labels_ + ["Z"]
    grown = encoder.extend(B)
    assert len(encoder.vocabularies_["word"]) + FIRST_ID == radix["word"] + 1  # "gnu"
    np.testing.assert_array_equal(encoder.feature_keys_[: len(kept[0])], kept[0])
    np.testing.assert_array_equal(encoder.pair_keys_[: len(kept[1])], kept[1])
    # the old data: the same ids, plus the pruned ones the new data fires again
    assert_old_ids_stay(encoder.transform(A), before, len(kept[0]), len(kept[1]), exact=False)
    values, rare = encoder._field_values(B, fit=False)
    offsets = B.sentence_offsets
    for kind, templates in (("feature", encoder._emission_templates), ("pair", encoder._pair_templates)):
        expected = [[int(bucket_of(k, bits)) for k in row if k >= 0]
                    for row in template_keys(templates, values, radix, rare, offsets)]
        o, ids = getattr(grown, f"{kind}_offsets"), getattr(grown, f"{kind}_ids")
        buckets = getattr(encoder, f"{kind}_keys_")
        assert [buckets[ids[o[i]: o[i + 1]]].tolist() for i in range(grown.n_tokens)] == expected
    # the model file keeps the radices
    copy = FeatureEncoder.from_state(*encoder.state())
    np.testing.assert_array_equal(copy.transform(B).feature_ids, grown.feature_ids)
    np.testing.assert_array_equal(copy.transform(B).pair_ids, grown.pair_ids)


def test_hashed_model_learns_a_new_word_and_reloads(tmp_path):
    X, y = token_data(23)
    X2, y2 = with_new_word(*token_data(24), seed=24)
    tagger = Tagger(templates=PAIR_TEMPLATES, epochs=3, columns=COLUMNS, hash_bits=14).fit(X, y)
    tagger.set_params(epochs=4).partial_fit(X2, y2)
    tagger.save(tmp_path / "m.npz")
    X3, _ = with_new_word(*token_data(25, n=20), seed=25)
    predicted = Tagger.load(tmp_path / "m.npz").predict(X3)
    assert predicted == tagger.predict(X3)
    at_new_word = [label for sentence, labels in zip(X3, predicted)
                   for (word, _), label in zip(sentence, labels) if word == "gnu"]
    assert at_new_word.count("Z") >= 18


def test_a_new_word_may_take_every_label_of_the_tag_dictionary():
    X, y = token_data(26)
    X2, y2 = with_new_word(*token_data(27), seed=27, label="A")
    tagger = Tagger(templates=TEMPLATES, epochs=3, columns=COLUMNS, tag_dict=1).fit(X, y)
    from structperc.features.encode import FIRST_ID

    offsets, _ = tagger.model_.tag_dict
    tagger.set_params(epochs=3).partial_fit(X2, y2)
    offsets2, labels2 = tagger.model_.tag_dict
    assert len(offsets2) == len(offsets) + 1  # a row for "gnu", the one new word
    gnu = tagger.model_.encoder.vocabularies_["word"].index("gnu") + FIRST_ID
    assert offsets2[gnu + 1] == offsets2[gnu]  # an empty row: every label
    X3, _ = with_new_word(*token_data(28, n=20), seed=28)
    at_new_word = [label for sentence, labels in zip(X3, tagger.predict(X3))
                   for (word, _), label in zip(sentence, labels) if word == "gnu"]
    assert at_new_word.count("A") >= 18


def test_cli_init_on_the_second_half_adds_the_features_of_its_words(tmp_path):
    """A corpus whose vocabulary grows (rare words w0, w1, ... among common ones): train on its first
    half, --init on its second half; the second model has more features, among them its new words'."""
    rng = np.random.default_rng(29)
    common = {w: ("B-NP", "I-NP", "O")[i % 3] for i, w in enumerate(WORDS)}
    lines, n_rare = [], 0
    for _ in range(60):
        for _ in range(int(rng.integers(2, 7))):
            if rng.random() < 0.3:
                word, label = f"w{n_rare}", "B-NP"
                n_rare += 1
            else:
                word = WORDS[int(rng.integers(len(WORDS)))]
                label = common[word]
            lines.append(f"{word} P{int(rng.integers(3))} {label}\n")
        lines.append("\n")
    sentences = "".join(lines).split("\n\n")[:-1]
    halves = ("\n\n".join(sentences[:30]) + "\n\n", "\n\n".join(sentences[30:]) + "\n\n")
    (tmp_path / "a.txt").write_text(halves[0])
    (tmp_path / "b.txt").write_text(halves[1])
    train = ["train", "--epochs", "3", "-q"]  # `python -m structperc train`, forked (forked_cli.py)
    first = forked_cli.run(train + [str(tmp_path / "a.txt"), "--model", str(tmp_path / "m1.npz")])
    assert first.returncode == 0, first.stderr
    second = forked_cli.run(train + [str(tmp_path / "b.txt"), "--model", str(tmp_path / "m2.npz"),
                                     "--init", str(tmp_path / "m1.npz")])
    assert second.returncode == 0, second.stderr
    info = [json.loads(forked_cli.run(["info", tmp_path / name, "--json"], check=True).stdout)
            for name in ("m1.npz", "m2.npz")]
    assert info[1]["features"] > info[0]["features"]
    assert info[1]["pair_features"] == info[0]["pair_features"] == 0
    new_word = next(line.split()[0] for line in halves[1].splitlines() if line.startswith("w"))
    assert new_word not in halves[0].split()
    model = Tagger.load(tmp_path / "m2.npz").model_
    names = {model.encoder.describe_feature(f) for f in range(model.n_features)}
    assert f"word[0]={new_word}" in names
