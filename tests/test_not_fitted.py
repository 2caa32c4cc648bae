"""Using an estimator before fit raises scikit-learn's NotFittedError, as scikit-learn's own do."""
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from structperc import CRF, Tagger
from structperc.estimator.core import TaggerCore

SENTENCES = [["The", "cat", "sat"]]


@pytest.mark.parametrize("make", [Tagger, TaggerCore, CRF], ids=["Tagger", "TaggerCore", "CRF"])
def test_predict_before_fit_is_not_fitted_error(make):
    estimator = make()
    X = [[{"w": w} for w in s] for s in SENTENCES] if make is CRF else SENTENCES
    with pytest.raises(NotFittedError, match="not fitted yet"):
        estimator.predict(X)
    if make is not TaggerCore:  # the scikit-learn estimators: scikit-learn's own check agrees
        with pytest.raises(NotFittedError):
            check_is_fitted(estimator)


def test_other_missing_attributes_stay_plain_attribute_errors():
    with pytest.raises(AttributeError) as caught:
        Tagger().no_such_attribute
    assert not isinstance(caught.value, NotFittedError)
    assert not hasattr(Tagger(), "model_")
