"""Tagger under scikit-learn's own model selection and estimator checks."""
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, KFold, RandomizedSearchCV, cross_val_score
from sklearn.utils import estimator_checks, get_tags

from structperc import CRF, Tagger
from structperc.errors import ConfigError
from structperc.evaluate.scorers import chunk_f1_score, flat_accuracy_score, flat_f1_score


LEXICON = {"the": ("DT", "B-NP"), "a": ("DT", "B-NP"), "dog": ("NN", "I-NP"), "cat": ("NN", "I-NP"),
           "park": ("NN", "I-NP"), "runs": ("VB", "O"), "sees": ("VB", "O"), "in": ("IN", "O")}


@pytest.fixture(autouse=True, scope="module")
def _no_lingering_workers():
    """n_jobs=2 starts joblib's reusable worker processes: stop them, so that later tests that count
    this process's children see only their own."""
    yield
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)


def _data(n=60, seed=0):
    """Learnable sentences: a determiner and a noun make an NP, verbs and prepositions are O."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        words = []
        for _ in range(int(rng.integers(1, 4))):
            words += [str(rng.choice(["the", "a"])), str(rng.choice(["dog", "cat", "park"])),
                      str(rng.choice(["runs", "sees", "in"]))]
        X.append([(w, LEXICON[w][0]) for w in words])
        y.append([LEXICON[w][1] for w in words])
    return X, y


def test_tagger_and_a_loaded_model_are_scikit_learn_estimators(tmp_path):
    import structperc

    X, y = _data()
    path = tmp_path / "m.npz"
    Tagger(templates="chunk", epochs=2).fit(X, y).save(path)
    for tagger in (Tagger(), Tagger.load(path), structperc.load_model(path)):
        assert isinstance(tagger, BaseEstimator) and isinstance(tagger, Tagger)
    assert clone(structperc.load_model(path)).get_params() == Tagger.load(path).get_params()


def test_repr_shows_the_parameters_that_differ_from_the_defaults():
    assert repr(Tagger()) == "Tagger()"
    assert repr(Tagger(epochs=3, trainer="crf")) == "Tagger(epochs=3, trainer='crf')"


def test_clone_gives_an_unfitted_copy_with_the_same_parameters():
    X, y = _data()
    tagger = Tagger(templates="chunk", epochs=2).fit(X, y)
    copy = clone(tagger)
    assert copy.get_params() == tagger.get_params()
    assert not hasattr(copy, "model_")


def test_classes_and_score_as_scikit_learn_has_them():
    X, y = _data()
    tagger = Tagger(templates="chunk", epochs=3).fit(X, y)
    assert list(tagger.classes_) == sorted({label for labels in y for label in labels})
    score = tagger.score(X, y)
    assert 0.0 <= score <= 1.0
    assert score == pytest.approx(flat_accuracy_score(y, tagger.predict(X)))


@pytest.mark.parametrize("estimator", [Tagger(), CRF()], ids=["Tagger", "CRF"])
def test_tags_say_the_input_is_not_an_array(estimator):
    tags = get_tags(estimator)
    assert tags.input_tags.two_d_array is False and tags.target_tags.required is True


# scikit-learn's checks that do not feed the estimator a 2-D numeric array: its constructor, parameters,
# repr, tags and mixin order. The others (dtypes, NaN and inf, sparse input, n_features_in_, sample order,
# ...) build X as such an array, which a list of sentences is not; given the tags above,
# check_estimator itself leaves them out.
PARAMETER_CHECKS = [
    estimator_checks.check_no_attributes_set_in_init,
    estimator_checks.check_get_params_invariance,
    estimator_checks.check_set_params,
    estimator_checks.check_parameters_default_constructible,
    estimator_checks.check_do_not_raise_errors_in_init_or_set_params,
    estimator_checks.check_estimator_cloneable,
    estimator_checks.check_estimator_repr,
    estimator_checks.check_estimator_tags_renamed,
    estimator_checks.check_valid_tag_types,
    estimator_checks.check_mixin_order,
]


@pytest.mark.parametrize("estimator", [Tagger(), CRF()], ids=["Tagger", "CRF"])
@pytest.mark.parametrize("check", PARAMETER_CHECKS, ids=lambda check: check.__name__)
def test_scikit_learn_checks_on_parameters(check, estimator):
    check(type(estimator).__name__, estimator)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")  # the checks it leaves out
@pytest.mark.parametrize("estimator", [Tagger(), CRF()], ids=["Tagger", "CRF"])
def test_check_estimator_passes_every_check_it_runs(estimator):
    results = estimator_checks.check_estimator(estimator, on_fail=None)
    assert results and all(r["status"] != "failed" for r in results), [
        (r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]


def test_cross_val_score_with_a_flat_f1_scorer_on_two_jobs():
    X, y = _data(80)
    scores = cross_val_score(Tagger(templates="chunk", epochs=3), X, y, cv=KFold(3), n_jobs=2,
                             scoring=make_scorer(flat_f1_score), error_score="raise")
    assert scores.shape == (3,)
    # the same folds fitted by hand give the same scores
    for (train, test), score in zip(KFold(3).split(X), scores):
        tagger = Tagger(templates="chunk", epochs=3).fit([X[i] for i in train], [y[i] for i in train])
        expected = flat_f1_score([y[i] for i in test], tagger.predict([X[i] for i in test]))
        assert score == pytest.approx(expected)


def test_grid_and_randomized_search_pick_from_the_grid():
    X, y = _data(60)
    grid = GridSearchCV(Tagger(templates="chunk"), {"epochs": [1, 4]}, cv=KFold(2),
                        scoring=make_scorer(chunk_f1_score), error_score="raise").fit(X, y)
    assert grid.best_params_["epochs"] in (1, 4)
    assert len(grid.cv_results_["mean_test_score"]) == 2
    assert isinstance(grid.best_estimator_, Tagger) and hasattr(grid.best_estimator_, "model_")
    search = RandomizedSearchCV(Tagger(templates="chunk"), {"epochs": [1, 2, 3], "min_count": [0, 1]}, n_iter=3,
                                cv=KFold(2), n_jobs=2, random_state=0, scoring=make_scorer(flat_f1_score),
                                error_score="raise").fit(X, y)
    assert len(search.cv_results_["params"]) == 3
    assert search.best_estimator_.predict(X[:2])


def test_an_unknown_parameter_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"Invalid parameter 'epoch' for estimator Tagger\(\)\. Valid parameters are: .*'epochs'"):
        Tagger().set_params(epoch=3)


def test_pickle_and_joblib_round_trips_keep_the_predictions(tmp_path):
    X, y = _data()
    tagger = Tagger(templates="chunk", epochs=2).fit(X, y)
    again = pickle.loads(pickle.dumps(tagger))
    assert again.predict(X) == tagger.predict(X)
    joblib.dump(tagger, tmp_path / "t.joblib")
    assert joblib.load(tmp_path / "t.joblib").predict(X) == tagger.predict(X)
    np.testing.assert_array_equal(again.model_.weights, tagger.model_.weights)


# ---------------------------------------------------------------------------------------- strict options
def _dicts(X):
    return [[{"w": word, "pos": pos} for word, pos in sentence] for sentence in X]


@pytest.mark.parametrize("option, value", [("templates", "chunk"), ("rare_threshold", 2), ("lexicons", ["x=y"]),
                                           ("lexicon_lower", True), ("columns", ["word", "pos"]), ("hash_bits", 10),
                                           ("tag_dict", 2)])
def test_options_of_templates_are_errors_with_feature_dicts(option, value):
    X, y = _data(10)
    with pytest.raises(ConfigError, match=f"^{option} "):
        Tagger(epochs=1, **{option: value}).fit(_dicts(X), y)


def test_columns_with_a_corpus_of_other_columns_is_an_error():
    from structperc.corpus import as_corpus

    X, y = _data(10)
    corpus = as_corpus(X, y, ["word", "pos"])
    with pytest.raises(ConfigError, match="columns form, tag names the values of token lists"):
        Tagger(templates="chunk", epochs=1, columns=["form", "tag"]).fit(corpus)
    Tagger(templates="chunk", epochs=1, columns=["word", "pos"]).fit(corpus)  # its own names: fine


@pytest.mark.parametrize("option, value", [("order", 2), ("constrain", "none"), ("tag_dict", 3),
                                           ("all_pairs", False), ("hash_bits", 12)])
def test_partial_fit_refuses_another_structure(option, value):
    X, y = _data(20)
    tagger = Tagger(templates="chunk", epochs=1, constrain="bio").fit(X, y)
    tagger.set_params(**{option: value})
    with pytest.raises(ConfigError, match=f"^{option}={value!r} differs from the fitted model's"):
        tagger.partial_fit(X, y)
