"""scikit-learn's ``BaseEstimator`` under the public estimators, loaded only when scikit-learn is.

Importing ``sklearn.base`` takes one to two seconds (it loads scipy.stats), which a user who only
fits and predicts never needs, and a user of model selection has paid already: every part of
scikit-learn imports ``sklearn.base``. So ``Tagger`` and ``CRF`` name ``SklearnBase`` among their
bases, and the moment ``sklearn.base`` is loaded (at once, when it already is), scikit-learn's own
``BaseEstimator`` takes its place in their bases (``__bases__``: Python recomputes the method order
of every subclass). Code that can name ``BaseEstimator`` sees ``isinstance(tagger, BaseEstimator)``
and scikit-learn's own methods. Before, ``get_params`` is ``base.Estimator``'s, and the methods only
scikit-learn has (``set_params``, the repr, scikit-learn's tags) import it first.

A pickle is the same either way: ``BaseEstimator`` adds its version only to scikit-learn's own classes.
"""
import importlib.abc
import sys

from structperc.estimator.base import Estimator

_ESTIMATORS = []  # the classes whose bases name SklearnBase


def _base_estimator():
    """scikit-learn's ``BaseEstimator``, imported (which puts it in place)."""
    from sklearn.base import BaseEstimator

    _put_in_place(BaseEstimator)
    return BaseEstimator


class SklearnBase(Estimator):
    """Stands for scikit-learn's ``BaseEstimator`` until ``sklearn.base`` is loaded."""

    def set_params(self, **params):
        return _base_estimator().set_params(self, **params)

    def __repr__(self, N_CHAR_MAX=700):
        return _base_estimator().__repr__(self, N_CHAR_MAX)

    def __sklearn_tags__(self):
        return _base_estimator().__sklearn_tags__(self)


def builds_on_sklearn(cls):
    """Class decorator: ``cls`` (which lists ``SklearnBase`` among its bases) gets scikit-learn's
    ``BaseEstimator`` in its place once ``sklearn.base`` is loaded."""
    _ESTIMATORS.append(cls)
    module = sys.modules.get("sklearn.base")
    if module is not None and hasattr(module, "BaseEstimator"):
        _put_in_place(module.BaseEstimator)
    return cls


def _put_in_place(base_estimator):
    for cls in _ESTIMATORS:
        if SklearnBase in cls.__bases__:
            cls.__bases__ = tuple(base_estimator if base is SklearnBase else base for base in cls.__bases__)


class _WhenLoaded(importlib.abc.MetaPathFinder):
    """Finds ``sklearn.base`` with the finders after it and has its loader put ``BaseEstimator`` in
    place once the module has run; then leaves ``sys.meta_path``."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "sklearn.base":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _put_in_place(module.BaseEstimator)

        loader.exec_module = exec_module
        return spec


if "sklearn.base" not in sys.modules:
    sys.meta_path.insert(0, _WhenLoaded())
