"""Command line for ensembles: ``structperc vote MODEL... INPUT`` and the ``--bagging`` branch of ``train``."""
import json
import time
from typing import List, Optional

import typer

from structperc.cli.options import (Encoding, InputFormat, Json, Output, Quiet, TagSep, check_json, choices, plural,
                                    split_list, value_of)
from structperc.cli.progress import announce_compiling
from structperc.ensembles.vote import METHODS

VOTE_EPILOG = """Examples:

  structperc vote perc.npz crf.npz hinge.npz memm.npz corpora/conll2000/test.txt --output voted.txt

  structperc vote crf.npz memm.npz test.txt --method soft --weights 2,1
"""


Method = choices("Method", METHODS)


def _weights(value):
    """--weights: comma-separated numbers."""
    try:
        return [float(x) for x in split_list(value)] if value else None
    except ValueError:
        raise typer.BadParameter(f"takes comma-separated numbers, got {value!r}") from None


def vote_command(
    paths: List[str] = typer.Argument(..., help="Two or more model files, then the input file (- for stdin)."),
    output: Output = None,
    method: Method = typer.Option("token", help="token (plurality per token), chunk (per chunk, BIO labels) or "
                                                "soft (mean marginals; crf and memm models)."),
    weights: Optional[str] = typer.Option(None, callback=_weights,
                                          help="Comma-separated weight per model (default: all 1)."),
    format: InputFormat = None,
    tag_sep: TagSep = None,
    encoding: Encoding = None,
    quiet: Quiet = False,
    json_output: Json = False,
):
    """Tag INPUT with every model and write the vote, in the layout of `tag`."""
    from structperc.ensembles.vote import vote_file
    from structperc._kernels.cache import tagging_kernels

    if len(paths) < 3:
        raise typer.BadParameter("takes two or more models and then the input file", param_hint="PATHS")
    check_json(json_output, output, "the voted text")
    method = value_of(method)
    # soft voting reads every model's marginals (one kernel for both normalizations), no chunk's probability
    announce_compiling(tagging_kernels("global" if method == "soft" else None, spans=False))
    stats = vote_file(paths[:-1], paths[-1], output, method, weights, value_of(format), tag_sep, encoding)
    if json_output:
        typer.echo(json.dumps({"output": str(output), **stats}))
    elif not quiet:
        typer.echo(f"voted {len(paths) - 1} models on {plural(stats['sentences'], 'sentence')}, "
                   f"{plural(stats['tokens'], 'token')} in {stats['seconds']:.3f}s", err=True)


def train_bagging(tagger, train_file, model, n_bags, seed, dev, workers, scheduler, reader_options, quiet,
                  json_output, start):
    """``train --bagging N``: train the bags (``ensemble.bagging_fit_file``), save the vote, print the summary."""
    from structperc.ensembles.vote import bagging_fit_file

    def progress(done, total):
        if not quiet:
            typer.echo(f"bag {done}/{total} trained", err=True)

    voting = bagging_fit_file(tagger, train_file, n_bags, seed=seed, dev=dev, workers=workers, scheduler=scheduler,
                              progress=progress, **reader_options)
    voting.save(model)
    info = voting.info
    summary = {
        "model": str(model), "bags": n_bags, "sentences": info["sentences"], "tokens": info["tokens"],
        "labels": len(voting.labels_), "features": [m.model_.encoder.n_features_ for m in voting.members],
        "best_epoch": [m.n_iter_ for m in voting.members], "seconds": time.perf_counter() - start,
    }
    if "dev" in info:
        summary["dev"] = info["dev"]
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        dev_score = f", dev {info['dev']['accuracy']:.2f}% accuracy" if "dev" in info else ""
        typer.echo(f"saved {model}: {n_bags} bags, {summary['labels']} labels, {min(summary['features']):,} to "
                   f"{max(summary['features']):,} features per bag{dev_score}, {summary['seconds']:.2f}s", err=True)
