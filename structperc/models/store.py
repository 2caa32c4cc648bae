"""Loading a named model: from the cache when it is built and unchanged, else built first (one line
says so and how long the last build took; then a line per step). Research-only models say so whenever
they are loaded (once: a warning).

Two processes that want the same unbuilt model take turns on its build lock: the first builds, the
second then finds it built and loads the same file. A build stopped by Ctrl-C leaves no model file
and no record (both are written atomically, the record last), so a later load builds again.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from structperc.errors import StructpercWarning
from structperc.models import cache
from structperc.models.recipes import all_recipes, recipe_of


def is_model_name(value) -> bool:
    """Whether ``value`` names a model (a recipe) rather than a file: it is no existing path and has
    no folder or ``.npz`` in it."""
    text = os.fspath(value)
    return not Path(text).exists() and "/" not in text and not text.endswith(".npz") and text in all_recipes()


def model_path(name, mirror=None, report=None, progress=None, callback=None) -> Path:
    """The path of the built, unchanged model ``name``, building it first when needed.

    report : callable(str) for the line announcing a build and for its steps (default: stderr)
    progress, callback : as in ``build.build`` (the bar over each epoch, each finished epoch)"""
    say = report or (lambda text: print(text, file=sys.stderr))
    recipe = recipe_of(name)
    making = recipe.making()
    record, why = cache.check_built(name, recipe=making)
    if record is None:
        with cache.build_lock(name):
            record, why = cache.check_built(name, recipe=making)  # another process may have built it meanwhile
            if record is None:
                from structperc.models.build import build

                if why != "not built":
                    say(f"structperc: warning: {why}; building it again")
                say(f"building model {name} from its recipe (once){build_estimate(recipe)}")
                record = build(recipe, mirror=mirror, progress=progress, callback=callback, report=say)
    return cache.model_file(name)


def build_estimate(recipe) -> str:
    """"; the last build took N s": this cache's last build of the recipe, else the build time
    measured where the recipe was written ("" when neither is known)."""
    last = (cache.read_record(recipe.name) or {}).get("seconds")
    if last is not None:
        return f"; the last build took {last:.1f} s"
    if recipe.build_seconds is not None:
        return f"; a build took {recipe.build_seconds:.0f} s where the recipe was measured"
    return ""


def names_to_build(name) -> list[str]:
    """The named models that loading ``name`` reads and that are not built here, those that give its
    input columns first (a listing's quick check: loading checks each file's sha256)."""
    recipe = recipe_of(name)
    names = [needed for source in recipe.input_columns.values() for needed in names_to_build(source)]
    if cache.check_built(name, quick=True, recipe=recipe.making())[0] is None:
        names.append(name)
    return list(dict.fromkeys(names))


def load_named(name, read=None, mirror=None, report=None):
    """The tagger of the named model (built on first use), read by ``read(path)`` (``ensembles.files.
    read_model``; None: ``TaggerCore.load``), with the taggers of its input columns
    (``column_taggers_``) for raw text."""
    if read is None:
        from structperc.estimator.core import TaggerCore

        read = TaggerCore.load
    recipe = recipe_of(name)
    path = model_path(name, mirror=mirror, report=report)
    if recipe.research_only:
        warnings.warn(StructpercWarning(f"model {name}: {recipe.licence}"))
    tagger = read(path)
    tagger.column_taggers_ = {column: load_named(source, read, mirror, report)
                              for column, source in recipe.input_columns.items()}
    return tagger


def list_models() -> list[dict]:
    """One entry per recipe: name, task, labels, corpus, licence, built here (and the test score
    measured at build, when built). Built means a model file and its record, of the recorded size: a
    listing does not hash every model (loading does)."""
    entries = []
    for name, recipe in all_recipes().items():
        record, _ = cache.check_built(name, quick=True, recipe=recipe.making())
        entries.append({"name": name, "task": recipe.task, "labels": recipe.labels_description,
                        "corpus": recipe.corpus, "licence": recipe.licence, "research_only": recipe.research_only,
                        "built": record is not None, "path": str(cache.model_file(name)),
                        "test": record["test"] if record else None,
                        "build_seconds": record["seconds"] if record else recipe.build_seconds})
    return entries
