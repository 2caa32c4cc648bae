"""Opening the model of a command's ``--model``: a file, or a named model, built first when it is not
built here (with the models that give its input columns). The build says on stderr what it does: a
line per step and per epoch, which says how long the epochs left would take (and rich's bar over each
epoch on a terminal). ``--mirror`` names where its corpus is copied from."""
from structperc.cli.progress import Progress


def open_model(model, mirror=None, quiet=False):
    """The tagger of ``model`` (``ensembles.files.read_model``), a named model built first when needed."""
    from structperc.ensembles.files import read_model
    from structperc.models.store import is_model_name

    if is_model_name(model):
        build_named(str(model), mirror, quiet)
    return read_model(model)


def build_named(name, mirror=None, quiet=False):
    """Build the named model ``name`` and those it reads its input columns from, where not built."""
    from structperc.models import model_path, recipe_of
    from structperc.models.store import names_to_build

    for needed in names_to_build(name):
        progress = Progress(recipe_of(needed).epochs or 0, quiet, estimate=True)
        with progress:
            model_path(needed, mirror=mirror, report=progress.line, progress=progress, callback=progress.epoch_done)
