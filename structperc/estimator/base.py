"""scikit-learn's estimator protocol, without importing scikit-learn.

``Tagger`` and ``CRF`` follow scikit-learn's conventions (hyperparameters stored verbatim by
``__init__``, ``get_params``/``set_params``, a repr of the parameters that differ from the defaults,
``__sklearn_tags__``), so ``clone``, ``cross_val_score``, ``GridSearchCV`` and
``RandomizedSearchCV`` accept them. They do not inherit ``sklearn.base.BaseEstimator``: importing it
loads scipy.stats and costs more than a whole ``structperc tag`` of a small file (about 1.7 s against
0.3 s for numpy and numba, measured on this project's machine), and tagging must start fast.
scikit-learn is imported only when scikit-learn itself asks for the tags, that is when it is
already loaded.
"""
import inspect


class Estimator:
    """The parts of ``sklearn.base.BaseEstimator`` that model selection uses."""

    @classmethod
    def _get_param_names(cls):
        """The constructor's keyword arguments, sorted, as scikit-learn lists them."""
        signature = inspect.signature(cls.__init__)
        return sorted(name for name, p in signature.parameters.items()
                      if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep=True):
        """The constructor arguments (name -> value), as scikit-learn's ``get_params``."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor arguments; an unknown name is a ValueError listing the valid ones."""
        names = self._get_param_names()
        for name, value in params.items():
            if name not in names:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}: "
                                 f"choose from {', '.join(names)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = defaults.get(name, inspect.Parameter.empty)
            try:
                same = value is default or bool(value == default)
            except (TypeError, ValueError):  # values whose == is not a bool (arrays)
                same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        """scikit-learn's tags: X is a list of sentences (token lists or feature dicts) and y a list
        of label lists, neither a 2-D array, so scikit-learn's array checks do not apply."""
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    input_tags=InputTags(two_d_array=False, string=True, dict=True), requires_fit=True,
                    non_deterministic=False)
