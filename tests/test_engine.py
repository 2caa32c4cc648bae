"""Encoder, Φ(x, y), decoding and the perceptron against naive references; the trainer registry."""

import numpy as np
import pytest

from naive import brute_force_phi_best, explicit_average, sequence_score
from naive import template_keys as naive_template_keys
from structperc._kernels.score import scoring
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.tagger import Tagger
from structperc.corpus import as_corpus
from structperc.features.encode import FIRST_ID, FeatureEncoder
from structperc.features.lexicon import read_lexicons
from structperc.features.templates import PRESETS, load_templates, parse_template
from structperc.errors import ConfigError
from structperc.train import TRAINERS, Problem, make_rule
from structperc.train.perceptron import PerceptronRule
from builders import TEMPLATES, WORDS, random_sentences



@pytest.mark.parametrize("seed", range(5))
def test_score_of_phi_matches_explicit_score_matrices(seed, fitted_model):
    """w·Φ(x, y) equals the sum of emission/transition/end scores the decoder uses."""
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        emission = scoring.emission_scores(model.weights, model.layout(), model.data(enc), a, b)
        transition = scoring.transition_scores(model.weights, model.layout(), model.data(enc), a, b)
        end = scoring.end_scores(model.weights, model.layout())
        y = rng.integers(0, model.n_labels, b - a)
        assert model.score(enc, s, y) == pytest.approx(sequence_score(emission, transition, end, y))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_decode_is_brute_force_argmax_and_reports_w_dot_phi(seed, constrain):
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 10, 3, tags=("B-NP", "I-NP", "O"))
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, constrain=constrain)
    model.weights = rng.normal(size=model.weights.shape)
    predicted, scores = model.decode(enc)
    labels = model.labels
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        best_score = -np.inf
        for candidate in np.ndindex(*([model.n_labels] * (b - a))):
            cand = np.array(candidate)
            names = [labels[c] for c in cand]
            if constrain == "bio" and any(
                n.startswith("I-") and (i == 0 or names[i - 1][2:] != n[2:] or names[i - 1] == "O")
                for i, n in enumerate(names)
            ):
                continue
            best_score = max(best_score, model.score(enc, s, cand))
        assert scores[s] == pytest.approx(best_score)
        assert model.score(enc, s, predicted[a:b]) == pytest.approx(scores[s])


def test_feature_vector_counts_every_firing(fitted_model):
    rng = np.random.default_rng(3)
    model, enc = fitted_model(rng, ["w[0]", "bias"])
    y = np.zeros(enc.sentence_offsets[1], dtype=np.int64)
    phi = model.feature_vector(enc, 0, y)
    n = len(y)
    # each token: w[0] and bias with label 0, one transition; plus one end feature
    assert phi.sum() == 2 * n + n + 1
    assert phi[model.layout().off_end + 0] == 1


def test_unseen_values_and_boundaries_are_encoded_distinctly():
    enc = FeatureEncoder(["w[-1]", "w[1]", "w[0]"])
    train = as_corpus([["a", "b"]], [["X", "Y"]])
    enc.fit_transform(train, train.columns["label"])
    test = enc.transform(as_corpus([["a", "zzz", "b"]]), with_labels=False)
    described = [enc.describe_feature(int(f)) for f in test.feature_ids]
    # token 0 "a": w[-1]=<s> (seen in training), w[1]=zzz (unseen: dropped), w[0]=a
    # token 1 "zzz": w[-1]=a, w[1]=b, w[0] unseen
    # token 2 "b": w[-1]=zzz unseen, w[1]=</s>, w[0]=b
    assert described == ["word[-1]=<s>", "word[0]=a", "word[-1]=a", "word[1]=b", "word[1]=</s>", "word[0]=b"]


def test_min_count_drops_rare_features():
    X = [["a", "b"], ["a", "c"], ["a", "b"]]
    y = [["X", "Y"]] * 3
    corpus = as_corpus(X, y)
    counts = {}
    for k in (0, 2, 3):
        enc = FeatureEncoder(["w[0]"], min_count=k)
        enc.fit_transform(corpus, corpus.columns["label"])
        counts[k] = sorted(enc.describe_feature(i) for i in range(enc.n_features_))
    assert counts[0] == ["word[0]=a", "word[0]=b", "word[0]=c"]
    assert counts[2] == ["word[0]=a", "word[0]=b"]
    assert counts[3] == ["word[0]=a"]


def test_rare_templates_fire_only_on_rare_words():
    X = [["the", "cat"]] * 5 + [["the", "gnu"]]
    y = [["D", "N"]] * 6
    enc = FeatureEncoder(["suffix2[0]@rare"], rare_threshold=5)
    corpus = as_corpus(X, y)
    enc.fit_transform(corpus, corpus.columns["label"])
    names = sorted(enc.describe_feature(i) for i in range(enc.n_features_))
    assert names == ["suffix2[0]@rare=nu"]


def naive_perceptron(model, enc, order_of_visits):
    """Plain-Python structured perceptron with brute-force decoding (every labeling scored as w · Φ,
    at the model's label order and under its transition mask); returns the weight history."""
    w = np.zeros_like(model.weights)
    history = []
    for s in order_of_visits:
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        guess, _ = brute_force_phi_best(model, enc, s, w)
        gold = enc.labels[a:b]
        if not np.array_equal(guess, gold):
            w = w + model.feature_vector(enc, s, gold) - model.feature_vector(enc, s, guess)
        history.append(w.copy())
    return history


@pytest.mark.parametrize("seed", range(4))
def test_perceptron_kernel_matches_naive_perceptron_and_explicit_average(seed, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES)
    model.weights = np.zeros_like(model.weights)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    history = naive_perceptron(model, enc, visits)
    rule = PerceptronRule(average=True)
    rule.begin(Problem(model, model.data(enc)))
    rule.run(visits[:7])
    rule.run(visits[7:])
    np.testing.assert_allclose(rule.w, history[-1])
    np.testing.assert_allclose(rule.weights(), explicit_average(history), atol=1e-12)
    model.weights = np.zeros_like(model.weights)  # rules train the model's weights in place
    plain = PerceptronRule(average=False)
    plain.begin(Problem(model, model.data(enc)))
    plain.run(visits)
    np.testing.assert_allclose(plain.weights(), history[-1])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("order, constrain", [(2, None), (1, "bio"), (2, "bio")])
def test_perceptron_kernel_matches_naive_perceptron_at_order_2_and_under_bio(seed, order, constrain):
    """Weights after every visit and the average, against the naive perceptron (brute force over w · Φ)."""
    rng = np.random.default_rng(seed)
    X, y = random_sentences(rng, 8, 3, max_len=4, tags=("B-NP", "I-NP", "O"))
    # gold must be allowed under bio: no I-NP at the start or after O
    y = [[("B-NP" if tag == "I-NP" and (i == 0 or s[i - 1] == "O") else tag) for i, tag in enumerate(s)] for s in y]
    corpus = as_corpus(X, y, ["word", "pos"])
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    model = LinearChainModel(encoder, order=order, constrain=constrain)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(3)]).astype(np.int64)
    history = naive_perceptron(model, enc, visits)
    assert any(not np.array_equal(h, history[-1]) for h in history)  # it did learn along the way
    rule = PerceptronRule(average=True)
    rule.begin(Problem(model, model.data(enc)))
    for visit, expected in zip(visits, history):
        rule.run(np.array([visit], dtype=np.int64))
        np.testing.assert_array_equal(rule.w, expected)
    np.testing.assert_allclose(rule.weights(), explicit_average(history), atol=1e-12)


def test_perceptron_separates_a_separable_problem():
    rng = np.random.default_rng(0)
    lexicon = {w: ["A", "B", "C"][i % 3] for i, w in enumerate(WORDS)}
    X = [[WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(1, 8))] for _ in range(60)]
    y = [[lexicon[w] for w in sent] for sent in X]
    tagger = Tagger(templates=["w[0]"], epochs=10, average=False).fit(X, y)
    assert tagger.history_[-1].stats["sentence_errors"] == 0
    assert tagger.predict(X) == y


def test_same_seed_same_model_and_fit_leaves_input_alone():
    rng = np.random.default_rng(1)
    X, y = random_sentences(rng, 30, 3)
    X_copy = [list(s) for s in X]
    a = Tagger(templates=TEMPLATES, epochs=3, seed=7, columns=["word", "pos"]).fit(X, y)
    b = Tagger(templates=TEMPLATES, epochs=3, seed=7, columns=["word", "pos"]).fit(X, y)
    np.testing.assert_array_equal(a.model_.weights, b.model_.weights)
    assert X == X_copy


def test_dev_keeps_best_epoch_weights():
    rng = np.random.default_rng(2)
    X, y = random_sentences(rng, 40, 3)
    dev_X, dev_y = random_sentences(rng, 20, 3)
    tagger = Tagger(templates=TEMPLATES, epochs=6, columns=["word", "pos"]).fit(X, y, dev=dev_X, dev_y=dev_y)
    scores = [r.dev["accuracy"] for r in tagger.history_]
    assert tagger.n_iter_ == int(np.argmax(scores)) + 1
    assert 100 * tagger.score(dev_X, dev_y) == pytest.approx(max(scores))


def test_save_load_gives_identical_predictions(tmp_path):
    rng = np.random.default_rng(4)
    X, y = random_sentences(rng, 30, 3, tags=("B-NP", "I-NP", "O"))
    tagger = Tagger(templates=TEMPLATES, epochs=3, constrain="bio", columns=["word", "pos"]).fit(X, y)
    path = tagger.save(tmp_path / "m.npz")
    loaded = Tagger.load(path)
    loaded.columns = ["word", "pos"]
    assert loaded.predict(X) == tagger.predict(X)
    np.testing.assert_array_equal(loaded.model_.weights, tagger.model_.weights)
    assert loaded.model_.encoder.template_strings_ == tagger.model_.encoder.template_strings_
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("seed", range(3))
def test_pruning_zero_features_changes_no_score(seed, fitted_model):
    rng = np.random.default_rng(seed)
    model, enc = fitted_model(rng, TEMPLATES, constrain=None)
    emission = model.emission_weights()
    emission[rng.random(emission.shape[0]) < 0.5] = 0.0
    before_labels, before_scores = model.decode(enc)
    corpus_again = as_corpus(*random_sentences(np.random.default_rng(seed), 12, 3), ["word", "pos"])
    n_before = model.encoder.n_features_
    model.prune()
    assert model.encoder.n_features_ < n_before
    assert len(model.weights) == model.layout().size
    after = model.encoder.transform(corpus_again)
    after_labels, after_scores = model.decode(after)
    np.testing.assert_array_equal(after_labels, before_labels)
    np.testing.assert_array_equal(after_scores, before_scores)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_encodes_and_counts_one_feature_per_template_and_token(preset, tmp_path):
    # the stacking presets read a base model's labels, the column `stack`
    X = [[("The", "DT", "1", "B-NP"), ("cat", "NN", "1", "I-NP"), ("sat", "VBD", "0", "O")],
         [("Dogs", "NNS", "1", "B-NP"), ("bark", "VBP", "1", "B-NP")]]
    y = [["B-NP", "I-NP", "O"], ["B-NP", "O"]]
    corpus = as_corpus(X, y, columns=["word", "pos", "space_after", "stack"])
    templates = load_templates(preset)
    # the cluster presets read a lexicon: one that lists some of the words
    paths = tmp_path / "paths.txt"
    paths.write_text("0110\tcat\t3\n0111\tDogs\t2\n10\tsat\t1\n")
    lexicons = read_lexicons({"clusters": str(paths)}, False)
    enc = FeatureEncoder(preset, rare_threshold=2, lexicons=lexicons)  # every training word is rare: @rare fires too
    encoded = enc.fit_transform(corpus, corpus.columns["label"])
    n_tokens = sum(map(len, X))
    # in training every template fires once at every token, label templates and pair templates apart
    assert np.diff(encoded.feature_offsets).sum() == n_tokens * sum(not t.pair for t in templates)
    assert np.diff(encoded.pair_offsets).sum() == n_tokens * sum(t.pair for t in templates)


@pytest.mark.parametrize("seed", range(5))
def test_template_keys_match_the_formula(seed):
    rng = np.random.default_rng(seed)
    fields = ["word", "pos", "shape"]
    templates = [parse_template(t) for t in (
        "bias", "w[0]", "w[-2]|pos[1]", "pos[-1]|pos[0]|pos[1]", "shape[0]@rare", "w[3]|shape[-3]@rare")]
    lengths = rng.integers(1, 6, size=4)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    radix = {"word": 9, "pos": 5, "shape": 4}
    values = {f: rng.integers(0, radix[f], size=n).astype(np.int64) for f in fields}
    rare = rng.random(n) < 0.5
    enc = FeatureEncoder(["bias"])
    enc.vocabularies_ = {f: ["x"] * (radix[f] - FIRST_ID) for f in fields}  # sets each field's radix
    keys = enc._keys(templates, values, rare, offsets)
    assert keys.tolist() == naive_template_keys(templates, values, radix, rare, offsets)


def test_rules_take_exactly_their_declared_options_with_their_defaults():
    for name, cls in TRAINERS.items():
        rule = cls()
        assert {k: getattr(rule, k) for k in cls.params} == {k: p.default for k, p in cls.params.items()}, name
        assert all(p.help for p in cls.params.values()), name
        with pytest.raises(ConfigError, match=f"trainer {name!r} does not take option 'bogus'"):
            cls(bogus=1)
        assert isinstance(cls.probabilistic, bool)
    assert [name for name, cls in TRAINERS.items() if cls.probabilistic] == ["crf", "memm"]


def test_an_option_the_rule_does_not_take_is_an_error_naming_both():
    with pytest.raises(ConfigError, match=r"^trainer 'perceptron' does not take option 'l2' \(it takes: average\)$"):
        make_rule("perceptron", l2=0.1)
    with pytest.raises(ConfigError, match="trainer 'memm' does not take option 'cost'"):
        make_rule("memm", cost=1.0)
    with pytest.raises(ConfigError, match="unknown trainer 'nope'"):
        make_rule("nope")
    assert make_rule("hinge", cost=2.0, average=False).cost == 2.0
    X, y = [["the", "cat"]], [["A", "B"]]
    with pytest.raises(ConfigError, match="does not take option 'batch_size'"):
        Tagger(templates=["w[0]"], trainer="hinge", epochs=1, batch_size=2).fit(X, y)
