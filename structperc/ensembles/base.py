"""The ensemble model file: several fitted Taggers saved as one ``.npz`` file."""
import numpy as np

from structperc.errors import ConfigError
from structperc.estimator.core import TaggerCore
from structperc.utils.npz import ENSEMBLE_MARKER


class EnsembleTagger(TaggerCore):
    """Several fitted Taggers saved as one model file. Its Tagger parameters, ``model_`` (the
    reader options of its input, its labels) and ``n_iter_`` are those of the member ``lead``.

    members : list of fitted Taggers; info : JSON-able dict, how the ensemble was built.
    """

    kind = None

    def __init__(self, members, info=None, lead=0):
        if not members:
            raise ConfigError("an ensemble needs at least one model")
        first = members[lead]
        TaggerCore.__init__(self, **first.get_params())
        self.members = list(members)
        self.lead = lead
        self.info = dict(info or {})
        self.model_ = first.model_
        self.labels_ = first.labels_
        self.n_iter_ = first.n_iter_
        if hasattr(first, "history_"):
            self.history_ = first.history_

    def fit(self, X, y=None, **options):
        """An ensemble is built from fitted models (``structperc ensemble``, ``vote``, ``stacking``):
        a ConfigError; a ``VotingTagger`` refits its members instead."""
        raise ConfigError(f"a {self.kind or 'combined'} model is built from fitted models, not fitted itself: "
                          "fit each member, then combine them")

    def partial_fit(self, X, y=None, **options):
        """As ``fit``: a ConfigError."""
        raise ConfigError(f"a {self.kind or 'combined'} model is built from fitted models and cannot continue "
                          "training: continue each member, then combine them")

    def prepare(self):
        for member in self.members:
            member.prepare()
        return self

    def describe(self, top=10):
        """The lead member's ``Tagger.describe``, with the ensemble: its kind, members and info."""
        summary = self.members[self.lead].describe(top)
        summary["labels"] = self.labels_
        summary["members"] = len(self.members)
        summary["ensemble"] = {"kind": self.kind, "members": len(self.members), **self.info}
        return summary

    def save(self, path):
        from structperc.model.linear_chain import FORMAT_VERSION
        from structperc.utils.npz import write_npz

        arrays, metas = {}, []
        for i, member in enumerate(self.members):
            member_arrays, meta = member.model_.state()
            arrays.update({f"member{i}__{k}": v for k, v in member_arrays.items()})
            metas.append(meta)
        arrays[ENSEMBLE_MARKER] = np.array(len(self.members))
        meta = {"format_version": FORMAT_VERSION, "ensemble": self.kind, "members": metas}
        if self.info:
            meta["info"] = self.info
        return write_npz(path, arrays, meta)
