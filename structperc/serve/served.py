"""The models a server holds, each loaded and warmed once, in gunicorn's master before the workers fork,
so that every worker shares the pages of the weights and of the compiled kernels.

A model is given as a named model (``structperc models list``; its column taggers come along, e.g.
``en-np``'s POS tagger) or a model file. ``Models.reload`` reads again every model whose files changed
(their sha256): a file that fails its checksum, or does not load, is refused and the old model stays.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from structperc.chunks import is_bio
from structperc.errors import ConfigError
from structperc.utils.digest import file_sha256

# the sentence that each model tags (and explains, and scores) before the workers fork
WARM_UP_TEXT = "Mary met John in Amsterdam on Monday. They left early."


@dataclass
class ServedModel:
    """One model as served: its name, what it was given as (``source``), the tagger, the files it was read
    from (path -> sha256: the model and its column taggers), and what ``/v1/models`` says of it."""
    name: str
    source: str
    tagger: object
    files: dict
    description: dict = field(default_factory=dict)


def model_files(source) -> list[Path]:
    """The files a served model is read from: a model file, or a named model's file and those of the
    named models that give its input columns."""
    from structperc.models import cache
    from structperc.models.recipes import recipe_of
    from structperc.models.store import is_model_name

    if not is_model_name(source):
        return [Path(source)]
    paths = [cache.model_file(source)]
    for column_source in recipe_of(source).input_columns.values():
        paths.extend(model_files(column_source))
    return paths


def is_probabilistic(tagger) -> bool:
    from structperc.estimator.marginals import NotProbabilisticError, check_probabilistic

    try:
        check_probabilistic(tagger.model_)
    except NotProbabilisticError:
        return False
    return True


def describe(name, tagger, sha256) -> dict:
    """``/v1/models``' entry: name, task, labels, licence, test score, sha256, and what a request may ask
    of it (span scores and marginals need a probabilistic model, k-best a first-order one, an explanation
    a sum of weights; a reranked model, ``rerank fit``'s, chooses among its base's k-best labelings, and
    offers none of them: its base's would not be its own)."""
    from structperc.rerank.tagger import is_reranked

    model = tagger.model_
    named = model.metadata.get("named_model", {})
    reranked = is_reranked(tagger)
    return {"name": name, "task": named.get("recipe", {}).get("task"), "labels": list(model.labels),
            "licence": named.get("licence"), "test": named.get("test"), "sha256": sha256,
            "chunks": is_bio(model.labels), "reranked": reranked,
            "probabilistic": not reranked and is_probabilistic(tagger),
            "kbest": not reranked and model.order == 1,
            "explain": not reranked and model.normalization == "global",
            "conllu_field": model.metadata.get("input", {}).get("label")}


def refusal(served: ServedModel, part) -> str:
    """Why the model does not offer ``part`` ("kbest", "marginals", "explain"), for a 400's message."""
    description = served.description
    if description.get("reranked"):
        return (f"model {served.name} is reranked: its choices are neither a k-best list, probabilities nor "
                "sums of weights; ask its base model")
    return {"kbest": f"model {served.name} has order 2: no k-best lists",
            "marginals": f"model {served.name} defines no probabilities: no marginals",
            "explain": f"model {served.name} is a MEMM: its scores are not a sum of weights"}[part]


# The warm-up in groups of parts, each a list of what a request may ask: the parts of a plain request
# (tags, and the spans' scores where the model has them) together, then one part a group, so that
# ``precompile`` can share the groups between processes side by side and keep them about as busy
# (the first group a process runs also compiles the encoding's kernels, which its later groups share).
WARM_GROUPS = (("tag", "spans"), ("kbest",), ("marginals",), ("explain",))
WARM_PARTS = sum(WARM_GROUPS, ())


def offered(description, part) -> bool:
    """Whether a model of ``/v1/models``' ``description`` offers the warm-up's ``part``."""
    return {"spans": description["probabilistic"], "marginals": description["probabilistic"],
            "kbest": description["kbest"],
            "explain": description["explain"]}.get(part, True)


def warm(served: ServedModel, parts=WARM_PARTS) -> None:
    """Load the model's tables and every kernel a request can call (tag, span scores, marginals, k-best,
    explanation), so that no worker compiles or loads one after the fork; ``parts``: those of
    ``WARM_PARTS`` only (a part the model does not offer is skipped)."""
    from structperc.estimator.text import add_input_columns
    from structperc.serve import tagging

    parts = {part for part in parts if offered(served.description, part)}
    if "tag" in parts:
        served.tagger.prepare()
        for feeder in (getattr(served.tagger, "column_taggers_", None) or {}).values():
            feeder.prepare()
        tagging.tag_text(served, WARM_UP_TEXT, tagging.TagOptions(span_scores=False))
    if "spans" in parts:
        tagging.tag_text(served, WARM_UP_TEXT, tagging.TagOptions())
    if "marginals" in parts:
        tagging.tag_text(served, WARM_UP_TEXT, tagging.TagOptions(span_scores=False, marginals=True))
    if "kbest" in parts:
        corpus = add_input_columns(served.tagger, tagging.text_corpus(WARM_UP_TEXT))
        tagging.kbest_lists(served, corpus, 2)
    if "explain" in parts:
        tagging.explain_token(served, ["Mary", "met", "John"], 0)


def read_served(source, name=None, report=None, mirror=None) -> ServedModel:
    """The ServedModel of a model file or a named model (built first when it is not: ``report`` says so),
    read but not warmed (``warm``); ``mirror``: where a named model's corpus is copied from. A single
    model only: an ensemble file is a ConfigError."""
    from structperc.ensembles.files import read_model
    from structperc.models.store import is_model_name

    source = os.fspath(source)
    if is_model_name(source):
        from structperc.models.store import load_named

        tagger = load_named(source, read_model, mirror=mirror, report=report)
    else:
        tagger = read_model(source)
    if getattr(tagger, "model_", None) is None:
        raise ConfigError(f"{source}: an ensemble model file; serve takes single models")
    files = {str(path): file_sha256(path) for path in model_files(source)}
    if name is None:
        named = tagger.model_.metadata.get("named_model", {}).get("name")
        name = named or (source if is_model_name(source) else Path(source).stem)
    served = ServedModel(name, source, tagger, files)
    served.description = describe(name, tagger, next(iter(files.values())))
    return served


def load_served(source, name=None, report=None, mirror=None) -> ServedModel:
    """``read_served``, then ``warm``: the model ready to serve."""
    served = read_served(source, name, report, mirror)
    warm(served)
    return served


def unbuilt(source):
    """Why a named model's cache no longer holds a built model (None when it does, or for a file): a
    reload never builds, which would hold the master for minutes."""
    from structperc.models import cache
    from structperc.models.store import is_model_name

    if not is_model_name(source):
        return None
    return cache.check_built(source)[1]


class Models:
    """The served models by name, the first the default (``model`` may be left out of a request)."""

    def __init__(self, models: list[ServedModel]):
        self.by_name = {}
        for served in models:
            if served.name in self.by_name:
                raise ConfigError(f"two models are called {served.name!r}: serve each name once")
            self.by_name[served.name] = served
        self.default = models[0].name

    def get(self, name):
        """The ServedModel called ``name`` (None: the default when one model is served); None if unknown."""
        if name is None:
            return self.by_name[self.default] if len(self.by_name) == 1 else None
        return self.by_name.get(name)

    def names(self):
        return list(self.by_name)

    def changed(self) -> list[str]:
        """Names of the models whose files differ from those they were loaded from (by sha256)."""
        out = []
        for name, served in self.by_name.items():
            for path, digest in served.files.items():
                try:
                    now = file_sha256(path)
                except OSError:
                    now = None  # gone: nothing to swap in (a rename in progress, say); kept
                if now is not None and now != digest:
                    out.append(name)
                    break
        return out

    def reload(self) -> list[str]:
        """Load again every changed model and swap it in; a model that does not load (a checksum that
        fails, a file cut short) is refused and the old one stays. One line per change, for the log."""
        lines = []
        for name in self.changed():
            served = self.by_name[name]
            why = unbuilt(served.source)
            if why:
                lines.append(f"model {name}: refused its changed file, the old model stays: {why}")
                continue
            try:
                fresh = load_served(served.source, name)
            except Exception as error:  # noqa: BLE001  whatever a bad file raises, the master serves on
                lines.append(f"model {name}: refused its changed file, the old model stays: {error}")
                continue
            self.by_name[name] = fresh
            lines.append(f"model {name}: swapped in {fresh.description['sha256'][:12]} "
                         f"(was {served.description['sha256'][:12]})")
        return lines
