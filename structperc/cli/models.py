"""The ``models`` commands: list the named models and build one from its recipe.

``cli/main.py`` registers the group as ``models`` (``register``). The library functions they wrap
are ``structperc.models.list_models`` and ``structperc.models.model_path`` (which never print).
"""
import json
from typing import Annotated

import typer

from structperc.cli.options import Mirror, Quiet
from structperc.cli.progress import Progress, examples

MODELS_EPILOG = """Examples:

  structperc models list

  structperc models build en-ewt-upos --mirror ../shared/corpora

  echo "Mary left. She was tired." | structperc tag - --model en-ewt-upos --output-format jsonl
"""

models_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, epilog=examples(MODELS_EPILOG),
                         help="Named models built from recipes: list them, build one. Any --model takes a name; "
                              "an unbuilt one is built on first use.")


@models_app.command("list", epilog=examples("Example:\n\n  structperc models list --json"))
def list_command(json_output: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False):
    """The named models: name, task, labels, training data and its licence, the test score measured
    when it was built here, and whether it is built."""
    from structperc.models import list_models

    entries = list_models()
    if json_output:
        typer.echo(json.dumps(entries))
        return
    for e in entries:
        if e["test"]:
            (metric, value), = e["test"].items()
            state = f"built, test {metric} {value:.2f}"
        else:
            state = "not built"
        typer.echo(f"{e['name']:20} {e['task']}")
        typer.echo(f"{'':20} labels {e['labels']}; data {e['corpus']} ({e['licence']}); {state}")


@models_app.command("build", epilog=examples("Example:\n\n  structperc models build en-np --mirror ../shared/corpora"))
def build_command(
    name: Annotated[str, typer.Argument(help="A model's name (see structperc models list).")],
    mirror: Mirror = None,
    force: bool = typer.Option(False, help="Build again even when built and unchanged."),
    quiet: Quiet = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the build record as JSON on stdout.")] = False,
):
    """Build a named model from its recipe into the user's cache (the corpus is fetched first when
    needed). Built twice, a recipe gives the same bytes."""
    from structperc.models import cache, model_path, recipe_of
    from structperc.models.build import build

    recipe = recipe_of(name)
    progress = Progress(recipe.epochs or 0, quiet)
    say = progress.line
    if recipe.research_only:
        say(f"note: {name} is for {recipe.licence}")
    with progress:
        if force:
            with cache.build_lock(name):
                build(recipe, mirror=mirror, progress=progress, callback=progress.epoch_done, report=say)
            path = cache.model_file(name)
        else:
            path = model_path(name, mirror=mirror, report=say, progress=progress, callback=progress.epoch_done)
    record = cache.read_record(name)
    if json_output:
        typer.echo(json.dumps(record))
    else:
        (metric, value), = record["test"].items()
        typer.echo(f"{path}  (test {metric} {value:.2f}; built in {record['seconds']:.0f} s)")


def register(app):
    app.add_typer(models_app, name="models")
