"""Command line for n-best lists and reranking: ``structperc nbest`` and ``structperc rerank train|apply``.

The commands carry no error decorator (importing ``structperc.cli`` here would be an import cycle);
``register(app, handles_errors)`` wraps each with the caller's ``handles_errors`` and adds them.
"""
import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from .errors import ConfigError

NBEST_EPILOG = """Examples:

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --output test.nbest

  structperc nbest corpora/conll2000/test.txt --model chunker.npz -k 20 --format svmrank --vocab train.vocab.json --output test.svm

  structperc nbest train.txt --model chunker.npz --format svmrank --vocab-out train.vocab.json --output train.svm
"""
TRAIN_EPILOG = """Example:

  structperc rerank train train.svm --model reranker.npz --epochs 10 --seed 0 --vocab train.vocab.json
"""
APPLY_EPILOG = """Example:

  structperc rerank apply test.svm --model reranker.npz --output choices.txt
"""


def _split_list(value):
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


class _AtomicOutput:
    """stdout, or a temp file renamed onto ``path`` when the block exits without an error."""

    def __init__(self, path):
        self.path = Path(path) if path else None

    def __enter__(self):
        if self.path is None:
            return sys.stdout
        self.tmp = self.path.with_name(f".{self.path.name}.tmp")
        self.handle = open(self.tmp, "w", encoding="utf-8")
        return self.handle

    def __exit__(self, kind, value, traceback):
        if self.path is None:
            sys.stdout.flush()
            return False
        self.handle.close()
        if kind is None:
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)
        return False


def nbest_command(
    input: str = typer.Argument(..., help="Input corpus (with or without the gold label column), or - for stdin."),
    model: Path = typer.Option(..., "--model", "-m", help="First-order tagger model (.npz)."),
    k: int = typer.Option(20, "-k", "--k", min=1, help="Candidates per sentence."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the lists here instead of stdout."),
    format: str = typer.Option("block", "--format", help="block (readable) or svmrank (features for a reranker)."),
    features: Optional[str] = typer.Option(None, "--features",
                                           help="svmrank: global features, comma separated (default: all)."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="svmrank: read the feature vocabulary (JSON) "
                                         "learned on training lists; unseen features are dropped."),
    vocab_out: Optional[Path] = typer.Option(None, "--vocab-out", help="svmrank: learn the feature vocabulary "
                                             "on these lists and write it (JSON)."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout (needs --output)."),
):
    """Write the k best labelings of every sentence, and report the oracle vs the 1-best score.

    block: for each sentence and candidate a header line "# sentence I candidate R score S task T",
    then the token lines (input columns + candidate label), then a blank line. svmrank:
    "TARGET qid:N ID:VALUE ... # sentence I candidate R ...", one line per candidate.
    """
    from .readers import read_corpus
    from .nbest import nbest_corpus, write_block
    from .rerank import check_feature_names, featurize, write_svmrank
    from .tagger import Tagger

    if format not in ("block", "svmrank"):
        raise ConfigError(f"unknown n-best format {format!r}: choose one of block, svmrank")
    if format == "block" and (features or vocab or vocab_out):
        raise ConfigError("--features, --vocab and --vocab-out only apply to --format svmrank")
    if vocab and vocab_out:
        raise ConfigError("give either --vocab (fixed vocabulary) or --vocab-out (learn one), not both")
    if json_output and output is None:
        raise ConfigError("--json prints on stdout; give --output for the lists")
    names = check_feature_names(_split_list(features))
    tagger = Tagger.load(model)
    opts = tagger.model_.metadata.get("input", {})
    corpus = read_corpus(input, format=opts.get("format"), columns=opts.get("columns"), label=opts.get("label"),
                         encoding=opts.get("encoding", "utf-8"), only_types=opts.get("only_types"),
                         require_label=False)
    nb = nbest_corpus(tagger, corpus, k)
    with _AtomicOutput(output) as out:
        if format == "block":
            write_block(out, nb)
        else:
            vocabulary = None
            if vocab:
                vocabulary = _read_vocabulary(vocab)
            data, vocabulary = featurize(nb, names, vocabulary, grow=vocab is None)
            write_svmrank(out, data)
    if format == "svmrank" and vocab_out:
        _write_vocabulary(vocab_out, vocabulary, names)
    summary = nb.summary()
    summary["output"] = str(output) if output else None
    if json_output:
        typer.echo(json.dumps(summary))
        return
    line = (f"{summary['sentences']:,} sentences, {summary['candidates']:,} candidates (k = {k}), "
            f"{summary['tokens_per_second']:,.0f} tokens/s in the k-best kernel")
    if "oracle" in summary:
        line += f"; {summary['metric']}: 1-best {summary['one_best']:.2f}, oracle {summary['oracle']:.2f}"
    typer.echo(line, err=True)


def _read_vocabulary(path):
    from .errors import InputFormatError

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        vocabulary = data["vocabulary"]
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such vocabulary file") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputFormatError(path, None, f"not a structperc feature vocabulary ({exc})") from None
    if not isinstance(vocabulary, dict) or not all(isinstance(v, int) and v >= 2 for v in vocabulary.values()):
        raise InputFormatError(path, None, "vocabulary must map feature strings to integer ids >= 2")
    return vocabulary


def _write_vocabulary(path, vocabulary, names):
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"features": names, "vocabulary": vocabulary}, fh)
    os.replace(tmp, path)


def rerank_train_command(
    nbest_file: Path = typer.Argument(..., help="Training lists in SVMrank format (ours or any tool's)."),
    model: Path = typer.Option(..., "--model", "-m", help="Where to write the reranker (.npz)."),
    epochs: int = typer.Option(10, min=1, help="Passes over the groups."),
    seed: int = typer.Option(0, help="Seed of the per-epoch shuffles."),
    average: bool = typer.Option(True, "--average/--no-average", help="Average the weights."),
    score_weight: float = typer.Option(1.0, help="Initial weight of feature 1 (the relative base score); "
                                       "0 for files whose feature 1 is something else."),
    vocab: Optional[Path] = typer.Option(None, "--vocab", help="Feature vocabulary (from nbest --vocab-out) "
                                         "to store in the reranker."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
):
    """Train an averaged ranking perceptron on SVMrank-format n-best lists.

    The gold candidate of each qid is the one with the highest target (ties: the first line);
    a prediction is a mistake when its target is lower.
    """
    from .rerank import Reranker, read_svmrank

    data = read_svmrank(nbest_file)
    features = None
    vocabulary = None
    if vocab:
        vocabulary = _read_vocabulary(vocab)
        with open(vocab, encoding="utf-8") as fh:
            features = json.load(fh).get("features")
    reranker = Reranker(features=features, epochs=epochs, average=average, seed=seed, score_weight=score_weight)
    reranker.fit_ranking(data, vocabulary)
    reranker.save(model)
    summary = {"model": str(model), "groups": data.n_groups, "candidates": data.n_rows,
               "weights": int(len(reranker.weights_)), "history": reranker.history_}
    if json_output:
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"saved {model}: {data.n_groups:,} groups, {data.n_rows:,} candidates, "
                   f"mistakes per epoch {[h['mistakes'] for h in reranker.history_]}", err=True)


def rerank_apply_command(
    nbest_file: Path = typer.Argument(..., help="Lists in SVMrank format."),
    model: Path = typer.Option(..., "--model", "-m", help="Reranker file (.npz)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the choices here instead of stdout."),
    json_output: bool = typer.Option(False, "--json", help="Print the scores as JSON on stdout "
                                     "(needs --output for the choices)."),
):
    """Choose one candidate per qid. Output, one line per qid:
    "QID INDEX SCORE # COMMENT" (INDEX: 0-based position of the chosen line within its qid; SCORE: w . x).
    When the file has targets, reports the reranked score against the first candidate's and the oracle's.
    """
    import numpy as np

    from .rerank import Reranker, chosen_score, read_svmrank

    if json_output and output is None:
        raise ConfigError("--json prints on stdout; give --output for the choices")
    reranker = Reranker.load(model)
    data = read_svmrank(nbest_file)
    rows = reranker.choose(data)
    scores = reranker.decision_function(data)
    with _AtomicOutput(output) as out:
        lines = []
        for g, j in enumerate(rows):
            line = f"{int(data.qids[g])} {int(j - data.group_offsets[g])} {float(scores[j])!r}"
            if data.comments[j]:
                line += f" # {data.comments[j]}"
            lines.append(line + "\n")
        out.write("".join(lines))
    summary = {"groups": data.n_groups}
    if np.any(data.targets != 0):
        summary["reranked"] = chosen_score(data, rows)
        summary["first"] = chosen_score(data, data.group_offsets[:-1])
        summary["oracle"] = chosen_score(data, data.best_rows())
    if json_output:
        typer.echo(json.dumps(summary))
    elif "reranked" in summary:
        key = next((k for k in ("f1", "accuracy") if k in summary["reranked"]), "mean_target")
        typer.echo(f"{data.n_groups:,} groups; {key}: reranked {summary['reranked'][key]:.2f}, "
                   f"first candidate {summary['first'][key]:.2f}, best target {summary['oracle'][key]:.2f}", err=True)


def register(app, handles_errors):
    """Add ``nbest`` and the ``rerank`` sub-app (train, apply) to ``app``, each wrapped by handles_errors."""
    app.command("nbest", epilog=NBEST_EPILOG)(handles_errors(nbest_command))
    rerank_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                             help="Rerank n-best lists with an averaged ranking perceptron.")
    rerank_app.command("train", epilog=TRAIN_EPILOG)(handles_errors(rerank_train_command))
    rerank_app.command("apply", epilog=APPLY_EPILOG)(handles_errors(rerank_apply_command))
    app.add_typer(rerank_app, name="rerank")
    return rerank_app
