"""The constructor arguments of an estimator, read as scikit-learn reads them.

``TaggerCore`` needs them without importing scikit-learn: training records them in the model file
(``fitting.py``), a loaded model restores them (``TaggerCore.from_model``) and the ensembles copy
them from member to member. ``structperc.Tagger`` takes scikit-learn's own ``BaseEstimator`` methods
instead, which come first in its method order.
"""
import functools
import inspect

from structperc.train import RULE_OPTIONS


def not_fitted(estimator, attribute):
    """scikit-learn's ``NotFittedError`` for reading ``attribute`` of an unfitted ``estimator``.
    scikit-learn is imported here, on this error path only, so that tagging never imports it."""
    from sklearn.exceptions import NotFittedError

    name = type(estimator).__name__
    return NotFittedError(f"This {name} instance is not fitted yet (it has no {attribute}): call fit, or load a "
                          f"model with {name}.load, before using it.")


class Fitted:
    """Reading a fitted attribute (one of ``fitted_attributes``) before ``fit`` raises scikit-learn's
    ``NotFittedError`` (an AttributeError and a ValueError) instead of a bare AttributeError, so
    ``predict`` before ``fit`` says what is missing, as scikit-learn's estimators do."""

    fitted_attributes = ()

    def __getattr__(self, name):  # called only when normal lookup fails
        if name in type(self).fitted_attributes:
            raise not_fitted(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class Estimator(Fitted):
    """``_get_param_names`` and ``get_params``, as ``sklearn.base.BaseEstimator`` has them; ``model_``
    read before fitting raises ``NotFittedError`` (``Fitted``)."""

    fitted_attributes = ("model_",)

    @classmethod
    def _get_param_names(cls):
        """The constructor's keyword arguments, sorted, as scikit-learn lists them."""
        signature = inspect.signature(cls.__init__)
        return sorted(name for name, p in signature.parameters.items()
                      if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    @classmethod
    def param_defaults(cls):
        """The constructor's keyword arguments and their defaults (name -> default)."""
        signature = inspect.signature(cls.__init__)
        return {name: p.default for name, p in signature.parameters.items()
                if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}

    def get_params(self, deep=True):
        """The constructor arguments (name -> value), as scikit-learn's ``get_params``."""
        return {name: getattr(self, name) for name in self._get_param_names()}


def with_rule_parameters(init):
    """``init`` (an estimator's ``__init__(self, ..., **rule_options)``) with a signature that lists every
    option of the registered learning rules as a keyword-only parameter defaulting to None, so that
    scikit-learn's ``get_params`` (``inspect.signature``) reads them: adding a rule to the registry adds
    its options to ``Tagger`` without touching this file."""
    signature = inspect.signature(init)
    fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    taken = {p.name for p in fixed}
    options = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
               for name in RULE_OPTIONS if name not in taken]

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=fixed + options)
    return wrapper


# The parameters a model file gives back (``TaggerCore.from_model``): those that describe the model. Where and how
# to run (workers, scheduler and mix, which applies only with them; cache_dir; the lexicons' paths) are
# the caller's, never read from a file that may come from someone else.
MODEL_PARAMS = ("templates", "trainer", "epochs", "min_count", "rare_threshold", "constrain", "order", "tag_dict",
                "seed", "columns", "missing_label", "all_pairs", "dense_count", "hash_bits", "lexicon_lower",
                "resumable", *RULE_OPTIONS)


def recorded_params(model, param_names):
    """The constructor arguments among ``param_names`` that a fitted model records and that describe it
    (``MODEL_PARAMS``), name -> value; the others keep their defaults."""
    training = model.metadata.get("training", {})
    names = [name for name in param_names if name in MODEL_PARAMS]
    params = {k: training[k] for k in names if k in training}
    # files written before the options were recorded one by one
    params.update({k: v for k, v in training.get("trainer_options", {}).items()
                   if k in names and params.get(k) is None})
    if "columns" not in training:
        params["columns"] = model.metadata.get("input", {}).get("columns")
    # a structure chosen from the data was asked for as None: the parameter is restored as given
    params.update({name: None for name in training.get("chosen", {}) if name in names})
    return params
