"""Building a named model from its recipe: fetch and check the corpus, train, score on the test
file, and write the model and its build record into the cache (``cache.py``).

The same recipe gives the same bytes: training is deterministic for a seed, the metadata holds no
time, and the archive is written with fixed dates (``write_npz(reproducible=True)``).
"""
from __future__ import annotations

import time
from pathlib import Path

from structperc.errors import DataError, DataFetchError
from structperc.models import cache
from structperc.models.recipes import Recipe
from structperc.utils.digest import file_sha256

# how ``data.fetch`` begins its advice to use a mirror, which ``corpus_folder`` gives instead
FETCH_HINT = "; no network?"


def corpus_folder(recipe: Recipe, mirror=None, progress=None) -> Path:
    """The folder of the recipe's corpus, every file the recipe reads checked against its sha256:
    a fetched copy (``data fetch``, in the corpora folder or the cache), else fetched into the cache
    from ``mirror`` ($STRUCTPERC_MIRROR), else downloaded. DataFetchError naming ``data fetch`` and
    ``--mirror`` when none of them can be had."""
    from structperc.data.fetch import default_corpora_dir, fetch

    for root in (default_corpora_dir(), cache.cache_root() / "corpora"):
        folder = root / recipe.corpus
        if all((folder / name).is_file() and file_sha256(folder / name) == sha for name, sha in recipe.files.items()):
            return folder
    try:
        folder = fetch(recipe.corpus, mirror=mirror, dest=cache.cache_root() / "corpora", manifest=recipe.manifest,
                       progress=progress)
    except DataFetchError as error:
        # the advice is given once, here: the fetch's own hint about a mirror is left out
        reason = str(error).partition(FETCH_HINT)[0]
        raise DataFetchError(
            f"model {recipe.name} is built from corpus {recipe.corpus}, which is not here: {reason}. Fetch it "
            f"first (structperc data fetch {recipe.corpus} --mirror DIR), or give the build a mirror "
            f"(--mirror DIR, or $STRUCTPERC_MIRROR)") from None
    for name, sha in recipe.files.items():
        if file_sha256(folder / name) != sha:
            raise DataError(f"{folder / name}: not the file of recipe {recipe.name} (sha256 differs from {sha})")
    return folder


def train(recipe: Recipe, folder: Path, progress=None, callback=None):
    """The TaggerCore the recipe trains on the corpus in ``folder``."""
    from structperc.estimator.core import TaggerCore

    lexicons = {k: str(folder / v) for k, v in recipe.lexicons.items()} if recipe.lexicons else None
    tagger = TaggerCore(templates=recipe.templates, trainer=recipe.trainer, epochs=recipe.epochs, seed=recipe.seed,
                        constrain=recipe.constrain, lexicons=lexicons, **recipe.options)
    reader = {k: v for k, v in (("format", recipe.format), ("columns", recipe.columns), ("label", recipe.label),
                                ("only_types", recipe.only_types)) if v is not None}
    return tagger.fit_file(folder / recipe.train, dev=folder / recipe.dev if recipe.dev else None,
                           progress=progress, callback=callback, **reader)


def test_score(tagger, recipe: Recipe, folder: Path) -> float:
    """The recipe's metric (accuracy or chunk F1, in percent) on its test file."""
    result = tagger.evaluate_file(folder / recipe.test)
    return round(float(result[recipe.metric]), 4)


def build(recipe: Recipe, mirror=None, progress=None, callback=None, report=None) -> dict:
    """Build the model of ``recipe`` into the cache and return its build record.

    progress, callback : as in ``Tagger.fit`` (the bar over each epoch, each finished epoch)
    report : callable(str) for the steps (fetching, scoring), or None
    """
    from structperc.readers.raw import SEGMENTER

    say = report or (lambda text: None)
    start = time.perf_counter()
    folder = corpus_folder(recipe, mirror, say)
    epochs = "" if recipe.epochs is None else f", {recipe.epochs} epochs"
    say(f"{recipe.name}: training on {recipe.corpus}/{recipe.train}{epochs}")
    tagger = train(recipe, folder, progress, callback)
    say(f"{recipe.name}: scoring on {recipe.corpus}/{recipe.test}")
    score = test_score(tagger, recipe, folder)
    say(f"{recipe.name}: test {recipe.metric} {score:.2f}")
    model = tagger.model_
    model.metadata["raw_text"] = {"segmenter": SEGMENTER}
    model.metadata["named_model"] = {"name": recipe.name, "recipe": recipe.record(), "licence": recipe.licence,
                                     "research_only": recipe.research_only, "test": {recipe.metric: score}}
    arrays, meta = model.state()
    from structperc.utils.npz import write_npz

    path = cache.model_file(recipe.name)
    write_npz(path, arrays, meta, reproducible=True)
    record = {"name": recipe.name, "sha256": file_sha256(path), "size": path.stat().st_size,
              "seconds": round(time.perf_counter() - start, 1),
              "test": {recipe.metric: score}, "licence": recipe.licence, "research_only": recipe.research_only,
              "recipe": recipe.record()}
    cache.write_record(recipe.name, record)
    return record
