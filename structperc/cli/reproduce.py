"""The ``reproduce`` and ``compare`` commands, as plain functions with typer annotations.

``cli/main.py`` registers them as ``reproduce`` and ``compare``, with the epilogs
``examples(REPRODUCE_EPILOG)`` and ``examples(COMPARE_EPILOG)``.

``compare`` wraps ``structperc.evaluate.metrics.compare_tagged``. ``reproduce`` runs an experiment package
of experiments/ (``experiments/collins2002``), which is not installed with the library: it is found
beside the package directory, in a source checkout or an editable install.
"""
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from structperc.cli.options import Json, Quiet, hidden, renamed, split_list
from structperc.errors import ConfigError
from structperc.evaluate.metrics import compare_tagged, format_comparison

REPRODUCE_EPILOG = """Examples:

  structperc reproduce collins2002 --quick

  structperc reproduce collins2002 --only np,ewt --output my-results

  structperc reproduce collins2002 --ptb-root /data/treebank_3/tagged/pos/wsj --only ptb
"""

COMPARE_EPILOG = """Examples:

  structperc tag corpora/conll2000/test.txt --model a.npz > a.txt

  structperc tag corpora/conll2000/test.txt --model b.npz > b.txt

  structperc compare a.txt b.txt

  structperc compare a.txt b.txt --json --samples 1000 | jq .mcnemar.p_value

  structperc compare a.conllu b.conllu --gold xpos
"""

EXPERIMENTS = ("collins2002",)
EXPERIMENTS_DIR = Path(__file__).resolve().parents[2] / "experiments"


def load_experiment(name, root=None):
    """The experiment package ``root/name`` (default root: ``EXPERIMENTS_DIR``), imported once as
    ``structperc_experiment_<name>``. ConfigError when the directory is absent (an installed copy
    of the package without its checkout)."""
    init = Path(EXPERIMENTS_DIR if root is None else root) / name / "__init__.py"
    if not init.is_file():
        raise ConfigError(f"experiment {name!r} needs {init.parent}, which is not installed with the package: "
                          "run it from a structperc source checkout (pip install -e .)")
    module_name = f"structperc_experiment_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def new_folder(name, parent=Path(".")):
    """A folder ``parent/NAME-YYYYMMDD-HHMMSS`` (with -2, -3 ... when taken) made now, so that a run
    the user did not point anywhere writes over nothing, the committed results least of all."""
    base = Path(parent) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = base, 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            n += 1
            path = base.with_name(f"{base.name}-{n}")


def reproduce_command(
    experiment: str = typer.Argument(..., help="Which experiment: collins2002."),
    quick: bool = typer.Option(False, "--quick", help="Reduced run for CI: NP only, 3 epochs, 2,000 sentences."),
    corpora: Path = typer.Option(Path("corpora"), "--corpora", help="Folder holding the fetched corpora."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o",
        help="Where to write the .md, .json and plots (default: a new folder EXPERIMENT-DATE-TIME here; the "
             "committed tables of experiments/results are rewritten only when named)."),
    out: Optional[Path] = hidden("--out"),
    ptb_root: Optional[Path] = typer.Option(
        None, "--ptb-root", help="Penn Treebank tagged .pos files (wsj_SSNN.pos, flat or in SS/ folders)."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated datasets: np, ewt, wsj, ptb."),
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Re-run a published experiment and write its results table beside the paper's numbers.

    collins2002: Collins (EMNLP 2002), averaged vs plain perceptron vs maximum entropy, feature
    cut-off 0 and 5, on NP chunking (CoNLL-2000) and POS tagging (UD EWT, the WSJ sample, and the
    full WSJ with --ptb-root). Writes OUTPUT/collins2002.md, OUTPUT/collins2002.json and one PNG of dev
    curves per dataset; prints one line per finished row on stderr.
    """
    if experiment not in EXPERIMENTS:
        raise ConfigError(f"unknown experiment {experiment!r}: choose one of {', '.join(EXPERIMENTS)}")
    out = renamed(output, out, "--out", "--output")
    run = load_experiment(experiment).run_collins2002
    datasets = split_list(only)
    made = out is None
    out = new_folder(experiment) if made else out
    try:
        results = run(corpora, out, quick=quick, ptb_root=ptb_root, datasets=datasets,
                      progress=None if quiet else (lambda line: typer.echo(line, err=True)))
    except BaseException:
        if made and not any(out.iterdir()):
            out.rmdir()  # the folder made for this run, left empty: nothing of it remains
        raise
    if json_output:
        typer.echo(json.dumps({"markdown": str(out / "collins2002.md"), "json": str(out / "collins2002.json"),
                               "seconds": results["total_seconds"]}))
    elif not quiet:
        typer.echo(f"wrote {out / 'collins2002.md'} and {out / 'collins2002.json'} "
                   f"({results['total_seconds'] / 60:.1f} min)", err=True)


def compare_command(
    a: Path = typer.Argument(..., help="Tagged output A (`structperc tag` on a labelled input)."),
    b: Path = typer.Argument(..., help="Tagged output B, of the same input."),
    json_output: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    samples: int = typer.Option(10000, "--samples", min=1, help="Bootstrap samples (chunk F1 test)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap resampling."),
    gold: Optional[str] = typer.Option(
        None, "--gold", help="Gold column: a 1-based column number (default: the second-to-last), or "
        "upos / xpos for tagged CoNLL-U, which needs it."),
):
    """Compare two taggers' outputs on the same labelled input: accuracy, McNemar's test on token
    decisions, and for chunk (BIO) labels chunk P/R/F1 with a paired bootstrap test on F1.

    Each file is what `structperc tag` writes for a labelled input: whitespace-separated columns,
    blank lines between sentences, the prediction in the last column and the gold label in the one
    before it, or in the column --gold names (tagged CoNLL-U: --gold upos or --gold xpos).
    """
    result = compare_tagged(a, b, samples=samples, seed=seed, gold=gold)
    if json_output:
        typer.echo(json.dumps(result))
    else:
        typer.echo(format_comparison(result))
