"""Command line for n-best lists and reranking: ``structperc nbest`` and ``structperc rerank train|apply``.

The commands carry no error decorator (importing ``structperc.cli.main`` here would be an import cycle);
``register(app, handles_errors)`` wraps each with the caller's ``handles_errors`` and adds them.
"""
import json
from pathlib import Path
from typing import Optional

import typer

from structperc.cli.progress import announce_compiling, examples
from structperc.errors import ConfigError

NBEST_EPILOG = """Examples:

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --output test.nbest

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --format svmrank \\
      --vocab train.vocab.json --output test.svm

  structperc nbest train.txt --model chunker.npz --format svmrank --vocab-out train.vocab.json --output train.svm
"""
TRAIN_EPILOG = """Examples:

  structperc rerank train train.svm --model reranker.npz --epochs 10 --seed 0 --vocab train.vocab.json

  structperc rerank train train.svm --model voted.npz --voted --epochs 2

  structperc rerank train train.svm --model kernel.npz --kernel poly:2 --epochs 1

  structperc rerank train train.svm --model boost.npz --boost --rounds 2000 --epsilon 0.001
"""
GROUP_EPILOG = """Examples:

  structperc nbest train.txt --model chunker.npz --format svmrank --vocab-out train.vocab.json --output train.svm

  structperc rerank train train.svm --model reranker.npz

  structperc rerank apply test.svm --model reranker.npz --output choices.txt
"""
APPLY_EPILOG = """Example:

  structperc rerank apply test.svm --model reranker.npz --output choices.txt
"""


def _split_list(value):
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def nbest_command(
    input: str = typer.Argument(..., help="Input corpus (with or without the gold label column), or - for stdin."),
    model: Path = typer.Option(..., "--model", "-m", help="First-order tagger model (.npz)."),
    k: int = typer.Option(20, "-k", "--k", min=1, help="Candidates per sentence."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the lists here instead of stdout."),
    format: str = typer.Option("block", "--format", help="block (readable) or svmrank (features for a reranker)."),
    features: Optional[str] = typer.Option(None, "--features",
                                           help="svmrank: global features, comma separated "
                                                "(default: the chunk features, GLOBAL_FEATURES)."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="svmrank: read the feature vocabulary (JSON) "
                                         "learned on training lists; unseen features are dropped."),
    vocab_out: Optional[Path] = typer.Option(None, "--vocab-out", help="svmrank: learn the feature vocabulary "
                                             "on these lists and write it (JSON)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout (needs --output)."),
):
    """Write the k best labelings of every sentence, and report the oracle vs the 1-best score.

    block: for each sentence and candidate a header line "# sentence I candidate R score S task T",
    then the token lines (input columns + candidate label), then a blank line. svmrank:
    "TARGET qid:N ID:VALUE ... # sentence I candidate R ...", one line per candidate.
    """
    from structperc._kernels.cache import NBEST, TAGGING
    from structperc.rerank.pipeline import write_nbest_file
    from structperc.ensembles.files import load_model

    if format == "block" and (features or vocab or vocab_out):
        raise ConfigError("--features, --vocab and --vocab-out only apply to --format svmrank")
    if vocab and vocab_out:
        raise ConfigError("give either --vocab (fixed vocabulary) or --vocab-out (learn one), not both")
    check_json(json_output, output, "the lists")
    tagger = load_model(model)
    announce_compiling(TAGGING + NBEST)
    summary = write_nbest_file(tagger, input, k, output=output, format=format,
                               features=_split_list(features), vocab=vocab, vocab_out=vocab_out)
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        line = (f"{summary['sentences']:,} sentences, {summary['candidates']:,} candidates (k = {k}), "
                f"{summary['tokens_per_second']:,.0f} tokens/s in the k-best kernel")
        if "oracle" in summary:
            line += f"; {summary['metric']}: 1-best {summary['one_best']:.2f}, oracle {summary['oracle']:.2f}"
        typer.echo(line, err=True)


def check_json(json_output, output, what):
    """--json prints on stdout, so the data itself must go to --output."""
    if json_output and output is None:
        raise ConfigError(f"--json prints on stdout; give --output for {what}")


def rerank_train_command(
    nbest_file: Path = typer.Argument(..., help="Training lists in SVMrank format (ours or any tool's)."),
    model: Path = typer.Option(..., "--model", "-m", help="Where to write the reranker (.npz)."),
    epochs: int = typer.Option(10, min=1, help="Passes over the groups."),
    seed: int = typer.Option(0, help="Seed of the per-epoch shuffles."),
    average: bool = typer.Option(True, "--average/--no-average", help="Average the weights."),
    score_weight: Optional[float] = typer.Option(None, help="Initial weight of feature 1 (the relative base score; "
                                                 "default 1, with --boost fitted by the exponential loss); "
                                                 "0 for files whose feature 1 is something else."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="Feature vocabulary (from nbest --vocab-out) "
                                         "to store in the reranker."),
    voted: bool = typer.Option(False, "--voted", help="Voted perceptron (Freund & Schapire), in dual form."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Dual perceptron with this kernel: linear or "
                                         "poly:D, (1 + x.z)^D; averaged unless --voted."),
    boost: bool = typer.Option(False, "--boost", help="Ranking boosting (Collins 2000) instead of a perceptron."),
    rounds: int = typer.Option(1000, min=0, help="--boost: feature updates."),
    epsilon: float = typer.Option(0.001, help="--boost: smoothing of the step, 1/2 log((W+ + eZ)/(W- + eZ))."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
):
    """Train a reranker on SVMrank-format n-best lists: the averaged ranking perceptron (default),
    the voted or kernel perceptron in dual form (--voted, --kernel), or ranking boosting (--boost).

    The gold candidate of each qid is the one with the highest target (ties: the first line);
    a prediction is a mistake when its target is lower.
    """
    from structperc._kernels.cache import RERANKERS
    from structperc.rerank.pipeline import train_reranker_file

    if boost and (voted or kernel):
        raise ConfigError("--boost does not combine with --voted or --kernel")
    if boost:
        params = {"learner": "boost", "rounds": rounds, "epsilon": epsilon,
                  "score_weight": score_weight}
    elif voted or kernel:
        params = {"learner": "dual", "epochs": epochs, "kernel": kernel or "linear",
                  "vote": "voted" if voted else "averaged",
                  "score_weight": 1.0 if score_weight is None else score_weight}
    else:
        params = {"epochs": epochs, "average": average, "score_weight": 1.0 if score_weight is None else score_weight}
    announce_compiling(RERANKERS[params.get("learner", "perceptron")])
    reranker, summary = train_reranker_file(nbest_file, vocab=vocab, seed=seed, **params)
    reranker.save(model)
    summary = {"model": str(model), **summary}
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        if boost:
            progress = f"exponential loss {summary['history'][0]['loss']:.4g} -> {summary['history'][-1]['loss']:.4g}"
        else:
            progress = f"mistakes per epoch {[h['mistakes'] for h in summary['history']]}"
        typer.echo(f"saved {model}: {summary['groups']:,} groups, {summary['candidates']:,} candidates, "
                   f"{progress}", err=True)


def rerank_apply_command(
    nbest_file: Path = typer.Argument(..., help="Lists in SVMrank format."),
    model: Path = typer.Option(..., "--model", "-m", help="Reranker file (.npz)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the choices here instead of stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
    json_output: bool = typer.Option(False, "--json", help="Print the scores as JSON on stdout "
                                     "(needs --output for the choices)."),
):
    """Choose one candidate per qid. Output, one line per qid:
    "QID INDEX SCORE # COMMENT" (INDEX: 0-based position of the chosen line within its qid; SCORE: w . x).
    When the file has targets, reports the reranked score against the first candidate's and the oracle's.
    """
    from structperc._kernels.cache import RERANK_APPLYING
    from structperc.rerank.pipeline import Reranker, apply_reranker_file

    check_json(json_output, output, "the choices")
    reranker = Reranker.load(model)
    announce_compiling(RERANK_APPLYING[reranker.learner])
    summary = apply_reranker_file(reranker, nbest_file, output)
    if json_output:
        typer.echo(json.dumps(summary))
    elif "reranked" in summary and not quiet:
        key = next((k for k in ("f1", "accuracy") if k in summary["reranked"]), "mean_target")
        typer.echo(f"{summary['groups']:,} groups; {key}: reranked {summary['reranked'][key]:.2f}, "
                   f"first candidate {summary['first'][key]:.2f}, best target {summary['oracle'][key]:.2f}", err=True)


def register(app, handles_errors):
    """Add ``nbest`` and the ``rerank`` sub-app (train, apply) to ``app``, each wrapped by handles_errors."""
    app.command("nbest", epilog=examples(NBEST_EPILOG))(handles_errors(nbest_command))
    rerank_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                             help="Rerank n-best lists: ranking perceptron (averaged, voted, kernel) or boosting.",
                             epilog=examples(GROUP_EPILOG))
    rerank_app.command("train", epilog=examples(TRAIN_EPILOG))(handles_errors(rerank_train_command))
    rerank_app.command("apply", epilog=examples(APPLY_EPILOG))(handles_errors(rerank_apply_command))
    app.add_typer(rerank_app, name="rerank")
    return rerank_app
