"""Reading any model file: a single model, or an ensemble of several (voting or stacked)."""
from pathlib import Path

from structperc.ensembles.stacking import StackedTagger
from structperc.ensembles.vote import VotingTagger
from structperc.errors import ModelFileError
from structperc.estimator.core import TaggerCore
from structperc.model.linear_chain import FORMAT_VERSION, LinearChainModel
from structperc.utils.npz import is_ensemble_file, read_npz


def load_model(path):
    """The tagger of any model file: a ``Tagger`` (scikit-learn's estimator), a ``CRF`` for a model
    that a ``CRF`` saved, or a ``VotingTagger`` or ``StackedTagger`` for an ensemble file. ``path`` may
    be a model's name instead (``structperc models list``): a named model is built on first use
    (``structperc.models``)."""
    from structperc.estimator.crf import CRF
    from structperc.estimator.tagger import Tagger

    tagger = read_model(path, Tagger)
    if isinstance(tagger, Tagger) and "crf" in tagger.model_.metadata:
        return CRF.from_tagger(tagger)
    return tagger


def read_model(path, single=TaggerCore):
    """``load_model`` with a single model as ``single``: ``TaggerCore`` for the commands, which do
    not import scikit-learn."""
    from structperc.models.store import is_model_name, load_named

    if is_model_name(path):
        return load_named(str(path), lambda named: read_model(named, single))
    if not Path(path).exists() and "/" not in str(path) and not str(path).endswith(".npz"):
        from structperc.models.recipes import all_recipes

        raise ModelFileError(f"{path}: no such model file, nor a model's name (names: {', '.join(all_recipes())}; "
                             f"structperc models list)")
    if is_ensemble_file(path):
        return load_ensemble(path)
    return single.load(path)


def load_ensemble(path):
    """The VotingTagger, StackedTagger or RerankedTagger of an ensemble model file."""

    arrays, meta = read_npz(path, "model")
    if meta.get("ensemble") == "rerank":  # a base and the reranker of its k-best lists (structperc.rerank.tagger)
        from structperc.rerank.tagger import RerankedTagger

        return RerankedTagger.from_state(arrays, meta, path)
    kinds = {cls.kind: cls for cls in (VotingTagger, StackedTagger)}
    if meta.get("ensemble") not in kinds or meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{path}: not an ensemble model ({', '.join(kinds)}) of format version {FORMAT_VERSION}")
    members = []
    for i, member_meta in enumerate(meta["members"]):
        prefix = f"member{i}__"
        model = LinearChainModel.from_state(
            {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}, member_meta, path)
        members.append(TaggerCore.from_model(model))
    return kinds[meta["ensemble"]](members, meta.get("info"))
