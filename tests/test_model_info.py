"""``model_info``: a model as python-crfsuite's ``Tagger.info()`` gives one, field for field, against
pycrfsuite's own on a CRF of the same features trained to the same optimum; and a model of templates."""
import pytest

from structperc import CRF, Tagger
from structperc.model.info import model_info

pycrfsuite = pytest.importorskip("pycrfsuite")

SENTENCES = [(["the", "cat", "sat"], ["D", "N", "V"]), (["a", "dog", "ran"], ["D", "N", "V"]),
             (["the", "dog", "sat", "down"], ["D", "N", "V", "R"]), (["cats", "ran"], ["N", "V"])]


def features(words):
    return [{"w": word, "bias": 1.0, **({"-1:w": words[t - 1]} if t else {})} for t, word in enumerate(words)]


def test_the_fields_of_pycrfsuites_info_for_the_same_crf(tmp_path):
    X = [features(words) for words, _ in SENTENCES * 5]
    y = [labels for _, labels in SENTENCES * 5]
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": 0.0, "c2": 0.1, "max_iterations": 3000, "epsilon": 1e-9, "delta": 1e-12,
                        "feature.possible_transitions": True})
    trainer.train(str(tmp_path / "model.crfsuite"))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "model.crfsuite"))
    theirs = tagger.info()
    crf = CRF(algorithm="lbfgs", c1=0.0, c2=0.1, max_iterations=3000, epsilon=1e-9, delta=1e-12,
              all_possible_transitions=True).fit(X, y)
    ours = crf.tagger_.info()  # as sklearn-crfsuite's crf.tagger_.info() gives python-crfsuite's
    assert set(vars(ours)) == set(vars(theirs))  # header, labels, attributes, transitions, state_features
    assert set(ours.labels) == set(theirs.labels) and set(ours.attributes) == set(theirs.attributes)
    assert sorted(ours.labels.values(), key=int) == [str(i) for i in range(len(ours.labels))]
    for key in ("num_labels", "num_attrs"):
        assert ours.header[key] == theirs.header[key]
    assert set(ours.state_features) == set(theirs.state_features)
    for key, weight in theirs.state_features.items():
        assert ours.state_features[key] == pytest.approx(weight, abs=1e-3)
    for key in set(ours.transitions) | set(theirs.transitions):
        assert ours.transitions.get(key, 0.0) == pytest.approx(theirs.transitions.get(key, 0.0), abs=1e-3)


def test_a_model_of_templates_names_its_attributes_as_info_shows_them():
    tagger = Tagger(templates=["word[0]"], epochs=3).fit([words for words, _ in SENTENCES],
                                                         [labels for _, labels in SENTENCES])
    info = tagger.info()
    assert info == model_info(tagger.model_)
    assert "word[0]=cat" in info.attributes and info.state_features[("word[0]=cat", "N")] > 0
    assert info.transitions[("D", "N")] > 0
    assert all(weight != 0 for weight in [*info.transitions.values(), *info.state_features.values()])
