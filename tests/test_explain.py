"""explain: the terms of a path's score add up to the model's own score of the path (w · Φ and the
decoder's score), on random models of order 1 and 2; the runner-up and its margin against a
brute-force search over one-token changes of the path."""
import json
import re

import numpy as np
import pytest
from builders import TEMPLATES, fitted_model, random_sentences

from structperc.errors import ConfigError, DataError
from structperc.estimator.tagger import Tagger
from structperc.model.explain import Explainer


def terms_total(explanation):
    """The sum of every term listed, token by token (not the totals the explanation states)."""
    total = explanation["end"]
    for token in explanation["tokens"]:
        total += sum(f["value"] * f["weight"] for f in token["features"])
        total += sum(term["weight"] for term in token["transitions"])
    return total


def with_label(y, t, d):
    z = np.array(y, dtype=np.int64)
    z[t] = d
    return z


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_terms_add_up_to_the_score_of_the_predicted_path(order, seed):
    rng = np.random.default_rng(seed)
    model, encoded = fitted_model(rng, TEMPLATES, n_labels=3, order=order)
    explainer = Explainer(model)
    predicted, decoder_scores = model.decode(encoded)
    for s in range(encoded.n_sentences):
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        y = predicted[a:b]
        explanation = explainer.explain_path(encoded, s, y)
        score = model.score(encoded, s, y)
        assert terms_total(explanation) == pytest.approx(score, abs=1e-9)
        assert explanation["score"] == pytest.approx(score, abs=1e-9)
        assert explanation["score"] == pytest.approx(decoder_scores[s], abs=1e-9)
        assert explanation["emission"] + explanation["transition"] + explanation["end"] == pytest.approx(score,
                                                                                                        abs=1e-9)
        # any other labeling too, e.g. a random one
        z = rng.integers(0, model.n_labels, b - a)
        assert terms_total(explainer.explain_path(encoded, s, z)) == pytest.approx(model.score(encoded, s, z),
                                                                                   abs=1e-9)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_runner_up_is_the_best_one_token_change(order, seed):
    rng = np.random.default_rng(10 + seed)
    model, encoded = fitted_model(rng, TEMPLATES, n_labels=4, order=order)
    explainer = Explainer(model)
    predicted, _ = model.decode(encoded)
    for s in range(encoded.n_sentences):
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        y = predicted[a:b]
        explanation = explainer.explain_path(encoded, s, y)
        score = model.score(encoded, s, y)
        for t, token in enumerate(explanation["tokens"]):
            changed = {d: model.score(encoded, s, with_label(y, t, d)) for d in range(model.n_labels) if d != y[t]}
            best = max(changed, key=lambda d: (changed[d], -d))
            assert token["other"] == model.labels[best]
            assert token["margin"] == pytest.approx(score - changed[best], abs=1e-9)
            assert token["margin"] >= -1e-9  # Viterbi's path: no single change scores higher
            # the emission of the other label, from the features listed
            assert token["other_emission"] == pytest.approx(
                sum(f["value"] * f["other_weight"] for f in token["features"]), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_runner_up_fits_the_constraint(seed):
    """With the BIO constraint, the runner-up is the best one-label change whose transitions are all
    allowed, and a token where none is has no runner-up."""
    from builders import small_model

    model, encoded = small_model(seed, constrain="bio", n_sentences=8, max_len=5)
    predicted, _ = model.decode(encoded)
    explainer = Explainer(model)

    def allowed(z):
        previous = np.concatenate([[model.n_labels], z[:-1]])
        return bool(np.all(np.isfinite(model.mask_penalty[previous, z])))

    for s in range(encoded.n_sentences):
        a, b = encoded.sentence_offsets[s], encoded.sentence_offsets[s + 1]
        y = predicted[a:b]
        explanation = explainer.explain_path(encoded, s, y)
        score = model.score(encoded, s, y)
        for t, token in enumerate(explanation["tokens"]):
            changed = {d: model.score(encoded, s, with_label(y, t, d)) for d in range(model.n_labels)
                       if d != y[t] and allowed(with_label(y, t, d))}
            if not changed:
                assert token["other"] is None and token["margin"] is None
                continue
            best = max(changed, key=lambda d: (changed[d], -d))
            assert token["other"] == model.labels[best]
            assert token["margin"] == pytest.approx(score - changed[best], abs=1e-9)


def test_versus_compares_with_the_given_labels():
    rng = np.random.default_rng(3)
    model, encoded = fitted_model(rng, TEMPLATES, n_labels=3, order=1)
    predicted, _ = model.decode(encoded)
    a, b = encoded.sentence_offsets[0], encoded.sentence_offsets[1]
    y = predicted[a:b]
    versus = (y + 1) % 3
    explanation = Explainer(model).explain_path(encoded, 0, y, versus)
    score = model.score(encoded, 0, y)
    for t, token in enumerate(explanation["tokens"]):
        assert token["other"] == model.labels[versus[t]]
        assert token["margin"] == pytest.approx(score - model.score(encoded, 0, with_label(y, t, versus[t])), abs=1e-9)


@pytest.fixture(scope="module")
def tagger():
    rng = np.random.default_rng(0)
    X, y = random_sentences(rng, 20, 3)
    tagger = Tagger(templates=TEMPLATES, columns=["word", "pos"], epochs=2, all_pairs=False).fit(X, y)
    tagger.model_.weights = rng.normal(size=tagger.model_.weights.shape)  # every pair's weight matters
    return tagger, X


def test_tagger_explain_of_the_prediction(tagger):
    tagger, X = tagger
    for sentence in X[:5]:
        explanation = tagger.explain(sentence)
        assert explanation["labels"] == tagger.predict([sentence])[0]
        encoded, _ = tagger.encode([sentence])
        ids = np.array([tagger.model_.labels.index(x) for x in explanation["labels"]])
        assert terms_total(explanation) == pytest.approx(tagger.model_.score(encoded, 0, ids), abs=1e-9)
        assert [t["token"] for t in explanation["tokens"]] == [w for w, _ in sentence]
        json.dumps(explanation)  # a plain dict of JSON values
        text = explanation.text(top=2)
        assert text.splitlines()[0].startswith(f"score {explanation['score']:+.4f} = emission")
        for i, token in enumerate(explanation["tokens"], 1):
            assert re.search(rf"^ *{i} {re.escape(token['token'])} +{re.escape(token['label'])}  over ", text, re.M)


def test_tagger_explain_of_given_labels_and_bad_labels(tagger):
    tagger, X = tagger
    sentence = X[0]
    labels = ["A"] * len(sentence)
    explanation = tagger.explain(sentence, labels=labels, versus=[None] * len(sentence))
    assert explanation["labels"] == labels
    with pytest.raises(DataError, match="'Z' is not a label of the model"):
        tagger.explain(sentence, labels=["Z"] * len(sentence))
    with pytest.raises(DataError, match="labels has 1 labels"):
        tagger.explain(sentence + sentence, labels=["A"])
    with pytest.raises(DataError, match="list of tokens"):
        tagger.explain("the cat")


def test_memm_is_refused():
    rng = np.random.default_rng(0)
    X, y = random_sentences(rng, 10, 3)
    memm = Tagger(templates=TEMPLATES, columns=["word", "pos"], trainer="memm", epochs=1).fit(X, y)
    with pytest.raises(ConfigError, match="globally normalized"):
        memm.explain(X[0])


def test_crf_explain_delegates_to_its_tagger():
    from structperc import CRF

    X = [[{"w": "the"}, {"w": "cat"}], [{"w": "a"}, {"w": "dog"}, {"w": "ran"}]]
    y = [["D", "N"], ["D", "N", "V"]]
    crf = CRF(algorithm="lbfgs", max_iterations=20).fit(X, y)
    explanation = crf.explain(X[1])
    assert explanation["labels"] == crf.predict_single(X[1])
    assert [t["token"] for t in explanation["tokens"]] == ["#1", "#2", "#3"]
    assert "w=ran" in [f["feature"] for f in explanation["tokens"][2]["features"]]
