"""Feature dicts (scikit-learn-crfsuite's input): the encoding rules, fit / predict / marginals /
score through ``Tagger``, the attribute strings in the model file, and the CLI refusing a dict model."""

import numpy as np
import pytest
import forked_cli

from builders import WORDS, random_sentences
from structperc import Tagger
from structperc.features.dicts import AttributeEncoder
from structperc.errors import ConfigError


def token_features(sentence, i):
    word, pos = sentence[i]
    features = {"bias": 1.0, "w": word, "pos": pos, "upper": word[0] in "bcd", "none": None, "no": False,
                "len": len(word) / 3.0, "chars": sorted(set(word[:2]))}
    if i == 0:
        features["BOS"] = True
    else:
        features["-1:w"] = sentence[i - 1][0]
    return features


def dict_data(seed, n=40):
    rng = np.random.default_rng(seed)
    sentences, _ = random_sentences(rng, n, 3)
    lexicon = {w: "ABC"[i % 3] for i, w in enumerate(WORDS)}
    X = [[token_features(s, i) for i in range(len(s))] for s in sentences]
    y = [[lexicon[w] for w, _ in s] for s in sentences]
    return X, y


def naive_attributes(token):
    """The (attribute, value) pairs of one token dict, written out from the rules."""
    out = []
    for key, v in token.items():
        if isinstance(v, str):
            out.append((f"{key}={v}", 1.0))
        elif v is True:
            out.append((key, 1.0))
        elif v is False or v is None:
            continue
        elif isinstance(v, list):
            out += [(f"{key}={item}", 1.0) for item in v]
        elif v != 0:
            out.append((key, float(v)))
    return out


def test_encoding_follows_the_rules_token_by_token():
    X, y = dict_data(0)
    encoder = AttributeEncoder()
    encoded = encoder.fit_transform(X, [label for s in y for label in s])
    values = encoded.feature_values
    assert values is not None and values.dtype == np.float32
    tokens = [tok for s in X for tok in s]
    for i, token in enumerate(tokens):
        lo, hi = encoded.feature_offsets[i], encoded.feature_offsets[i + 1]
        got = sorted((encoder.attributes_[f], float(v)) for f, v in zip(encoded.feature_ids[lo:hi], values[lo:hi]))
        expected = sorted((name, float(np.float32(v))) for name, v in naive_attributes(token))
        assert got == expected
    # transform: the same ids, unseen attributes dropped
    again = encoder.transform(X + [[{"w": "never-seen", "bias": 1.0}]])
    np.testing.assert_array_equal(again.feature_ids[: len(encoded.feature_ids)], encoded.feature_ids)
    assert [encoder.attributes_[f] for f in again.feature_ids[len(encoded.feature_ids):]] == ["bias"]


def test_all_binary_dicts_have_no_values_array():
    X = [[{"w": "a", "b": True, "bias": 1.0}, {"w": "b", "bias": 1}]]
    encoded = AttributeEncoder().fit_transform(X, ["A", "B"])
    assert encoded.feature_values is None


def test_a_bad_value_is_an_error():
    with pytest.raises(ConfigError, match="'w'"):
        AttributeEncoder().fit_transform([[{"w": object()}]], ["A"])


@pytest.mark.parametrize("trainer", ["crf", "memm"])
def test_fit_predict_marginals_score_and_inspection(trainer, tmp_path):
    X, y = dict_data(1, n=80)
    tagger = Tagger(trainer=trainer, epochs=5).fit(X, y)
    predicted = tagger.predict(X)
    assert [len(s) for s in predicted] == [len(s) for s in X]
    assert tagger.score(X, y) >= 0.95
    marginals = tagger.predict_marginals(X)
    assert [len(s) for s in marginals] == [len(s) for s in X]
    for sentence, labels in zip(marginals, predicted):
        for token, label in zip(sentence, labels):
            assert set(token) == set(tagger.labels_)
            assert sum(token.values()) == pytest.approx(1.0)
            assert max(token, key=token.get) == label or trainer == "crf"
    state = tagger.state_features_
    emission = tagger.model_.emission_weights()
    assert len(state) == np.count_nonzero(emission)
    assert all(isinstance(attr, str) and label in tagger.labels_ for attr, label in state)
    assert ("w=cat", "B") in state and state[("w=cat", "B")] > 0  # "cat" is B in the lexicon
    transitions = tagger.transition_features_
    assert set(transitions) == {(a, b) for a in tagger.labels_ for b in tagger.labels_}
    path = tmp_path / "dicts.npz"
    tagger.save(path)
    loaded = Tagger.load(path)
    assert loaded.predict(X) == predicted
    assert loaded.state_features_ == state
    np.testing.assert_allclose(
        [[p for p in tok.values()] for s in loaded.predict_marginals(X) for tok in s],
        [[p for p in tok.values()] for s in marginals for tok in s])


def test_dict_and_token_models_refuse_each_others_input(tmp_path):
    X, y = dict_data(2)
    tagger = Tagger(trainer="perceptron", epochs=2).fit(X, y)
    with pytest.raises(ConfigError, match="feature dicts"):
        tagger.predict([["the", "cat"]])
    words = Tagger(templates=["w[0]"], epochs=2, columns=["word"]).fit([["the", "cat"]], [["A", "B"]])
    with pytest.raises(ConfigError, match="templates"):
        words.predict(X)


def test_cli_refuses_a_dict_model_on_a_conll_file(tmp_path):
    X, y = dict_data(3)
    model = tmp_path / "dicts.npz"
    Tagger(trainer="perceptron", epochs=2).fit(X, y).save(model)
    corpus = tmp_path / "in.txt"
    corpus.write_text("the DT\ncat NN\n\n")
    result = forked_cli.run(["tag", str(corpus), "--model", str(model)])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "feature dicts" in lines[0] and "no templates" in lines[0]
    info = forked_cli.run(["info", str(model)])
    assert info.returncode == 0 and "w=" in info.stdout
