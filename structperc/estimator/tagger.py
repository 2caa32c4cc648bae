"""``Tagger``: the public estimator, ``TaggerCore`` on scikit-learn's ``BaseEstimator``.

scikit-learn's ``BaseEstimator`` comes first in the method order, so ``get_params``, ``set_params``,
the repr, ``clone`` and pickling are scikit-learn's own; fitting, prediction, files and persistence
are ``TaggerCore``'s. It takes its place once scikit-learn is loaded (``sklearn_base.py``): a fit
and predict alone do not import it. Only the tags are this module's (``SequenceTags``, which ``CRF``
has too): a list of sentences is not a 2-D array; and ``explain`` (``explaining.py``), for the Python
API.
"""
from structperc.estimator import explaining
from structperc.estimator.core import TaggerCore
from structperc.estimator.sklearn_base import SklearnBase, builds_on_sklearn


class SequenceTags:
    """scikit-learn's tags of an estimator on sequences; put before ``BaseEstimator``, as scikit-learn
    puts its mixins."""

    def __sklearn_tags__(self):
        """scikit-learn's tags: X is a list of sentences (token lists or feature dicts) and y a list
        of label lists, neither a 2-D array, so scikit-learn's array checks do not apply."""
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.input_tags.dict = True
        tags.requires_fit = True
        tags.non_deterministic = False
        return tags


@builds_on_sklearn
class Tagger(SequenceTags, SklearnBase, TaggerCore):
    __doc__ = TaggerCore.__doc__

    def explain(self, sentence, labels=None, versus=None):
        """Why the model labels one sentence as it does: every term of the path's score, per token
        against the runner-up (or the ``versus`` labels). ``explaining.explain`` gives the details."""
        return explaining.explain(self, sentence, labels, versus)
