"""Command line: each command is a thin wrapper over a library function.

Errors a user can cause (a malformed input line, a bad option, a corrupt model file) are printed as
one line on stderr and the command exits with status 2, without a traceback.
"""
import functools
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from .errors import ConfigError, StructpercError, StructpercWarning

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="structperc: structured perceptron, CRF and friends for sequence tagging and chunking.",
)
data_app = typer.Typer(no_args_is_help=True, help="Fetch and list the known corpora.", rich_markup_mode=None)
app.add_typer(data_app, name="data")


def _fail(message):
    typer.echo(f"structperc: error: {message}", err=True)
    raise typer.Exit(2)


def handles_errors(fn):
    """Turn StructpercError (and a broken output pipe) into one line on stderr and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StructpercError as exc:
            _fail(str(exc))
        except BrokenPipeError:
            # the reader of our stdout went away (e.g. `| head`): not an error worth a traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0)

    return wrapper


def _split_list(value):
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


class Progress:
    """A one-line progress bar on stderr (sentences/s); plain per-epoch lines when not a terminal."""

    def __init__(self, epochs, quiet):
        self.epochs = epochs
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()

    def __call__(self, epoch, done, total, stats):
        if self.quiet or not self.tty:
            return
        if getattr(self, "epoch", None) != epoch:
            self.epoch, self.epoch_started = epoch, time.perf_counter()
        elapsed = max(time.perf_counter() - self.epoch_started, 1e-9)
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(
            f"\repoch {epoch}/{self.epochs} [{bar}] {done}/{total} sentences  {done / elapsed:,.0f} sent/s "
        )
        sys.stderr.flush()

    def epoch_done(self, record):
        if self.quiet:
            return
        if self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
        parts = [f"epoch {record.epoch:3d}", f"{record.seconds:6.2f}s"]
        for key, value in record.stats.items():
            parts.append(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}")
        if record.dev:
            parts.append(f"dev={record.dev['score']:.2f}")
        typer.echo("  ".join(parts), err=True)


def _input_options(model):
    return model.metadata.get("input", {})


def _tag_sep(opts, format, tag_sep):
    """--tag-sep, else the model's own when the input is read in the model's format."""
    return tag_sep if tag_sep is not None or format not in (None, opts.get("format")) else opts.get("tag_sep")


# ---------------------------------------------------------------------------------------- train
@app.command(epilog="""Examples:

  structperc train corpora/conll2000/train.txt --model np.npz --columns word,pos,chunk --only-types NP --constrain bio

  structperc train en_ewt-ud-train.conllu --label xpos --templates pos --order 2 --tag-dict 5 --model pos.npz --dev en_ewt-ud-dev.conllu
""")
@handles_errors
def train(
    train_file: Path = typer.Argument(..., help="Training corpus (CoNLL columns, CoNLL-U or PTB .pos)."),
    model: Path = typer.Option(..., "--model", "-m", help="Where to write the model (.npz)."),
    dev: Optional[Path] = typer.Option(None, help="Development corpus: score each epoch, keep the best."),
    format: Optional[str] = typer.Option(None, "--format", help="conll, conllu, ptb or tagged (default: from the extension)."),
    tag_sep: Optional[str] = typer.Option(None, "--tag-sep", help="Word/tag separator of --format tagged (default /)."),
    columns: Optional[str] = typer.Option(None, help="Column names, e.g. word,pos,chunk (default: last is the label)."),
    label: Optional[str] = typer.Option(None, help="Label column (CoNLL-U: upos or xpos)."),
    only_types: Optional[str] = typer.Option(None, help="Keep these chunk types, map the others to O (e.g. NP)."),
    encoding: str = typer.Option("utf-8", help="Input encoding."),
    templates: str = typer.Option("chunk", help="Preset (chunk, chunk-pair, pos) or a template file."),
    trainer: str = typer.Option("perceptron", help="Learning rule: perceptron, crf, memm, hinge."),
    epochs: int = typer.Option(10, min=1, help="Passes over the training data."),
    average: bool = typer.Option(True, "--average/--no-average", help="Average the weights."),
    min_count: int = typer.Option(0, help="Drop features seen fewer times than this (Collins' cc)."),
    rare_threshold: int = typer.Option(5, help="Words seen fewer times are rare (for @rare templates)."),
    constrain: Optional[str] = typer.Option(None, help="Transition constraint: bio."),
    order: int = typer.Option(1, min=1, max=2, help="Label order: 1 (bigram) or 2 (trigram)."),
    tag_dict: Optional[int] = typer.Option(None, help="Words seen >= K times may only take their seen tags."),
    l2: Optional[float] = typer.Option(None, help="L2 regularization (crf, memm, hinge)."),
    eta0: Optional[float] = typer.Option(None, help="Initial learning rate (crf, memm; default: calibrated)."),
    batch_size: Optional[int] = typer.Option(None, help="Mini-batch size (crf)."),
    cost: Optional[float] = typer.Option(None, help="Hamming cost per wrong token (hinge)."),
    average_start: Optional[int] = typer.Option(
        None, help="Epoch after which SGD averaging starts (crf, memm, hinge; default 1)."),
    seed: int = typer.Option(0, help="Seed of the per-epoch shuffles."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
):
    """Train a tagger or chunker and save it."""
    from .readers import read_corpus
    from .tagger import Tagger
    from .train import TRAINERS

    if trainer not in TRAINERS:
        raise ConfigError(f"unknown trainer {trainer!r}: choose one of {', '.join(TRAINERS)}")
    start = time.perf_counter()
    types = _split_list(only_types)
    read_args = dict(format=format, columns=_split_list(columns), label=label, encoding=encoding, only_types=types,
                     tag_sep=tag_sep)
    corpus = read_corpus(train_file, **read_args)
    dev_corpus = read_corpus(dev, **read_args) if dev else None
    options = {"l2": l2, "eta0": eta0, "batch_size": batch_size, "cost": cost, "average_start": average_start}
    options = {k: v for k, v in options.items() if v is not None}
    tagger = Tagger(
        templates=templates, trainer=trainer, epochs=epochs, average=average, min_count=min_count,
        rare_threshold=rare_threshold, constrain=constrain, order=order, tag_dict=tag_dict, seed=seed,
        trainer_options=options,
    )
    progress = Progress(epochs, quiet)
    tagger.fit(corpus, dev=dev_corpus, progress=progress)
    for record in tagger.history_:
        progress.epoch_done(record)
    tagger.model_.metadata["input"] = {
        "format": corpus.format, "columns": list(corpus.columns), "label": corpus.label,
        "only_types": types, "encoding": encoding,
    }
    if corpus.format == "tagged":
        tagger.model_.metadata["input"]["tag_sep"] = tag_sep or "/"
    tagger.save(model)
    seconds = time.perf_counter() - start
    summary = {
        "model": str(model), "sentences": corpus.n_sentences, "tokens": corpus.n_tokens,
        "labels": len(tagger.labels_), "features": tagger.model_.encoder.n_features_,
        "best_epoch": tagger.n_iter_, "seconds": seconds,
    }
    if dev_corpus is not None:
        summary["dev"] = tagger.history_[tagger.n_iter_ - 1].dev
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        typer.echo(
            f"saved {model}: {summary['labels']} labels, {summary['features']:,} features, "
            f"best epoch {tagger.n_iter_}, {seconds:.2f}s",
            err=True,
        )


# ---------------------------------------------------------------------------------------- tag
@app.command(epilog="""Examples:

  structperc tag corpora/conll2000/test.txt --model np.npz > tagged.txt

  cat sentences.txt | structperc tag - --model np.npz --output tagged.txt
""")
@handles_errors
def tag(
    input: str = typer.Argument(..., help="Input file, or - for stdin."),
    model: Path = typer.Option(..., "--model", "-m", help="Model file."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
    format: Optional[str] = typer.Option(None, "--format", help="Override the model's input format."),
    tag_sep: Optional[str] = typer.Option(None, "--tag-sep", help="Word/tag separator of --format tagged (default /)."),
    marginals: Optional[str] = typer.Option(
        None, help="Append P(label | x) per token: 'best' (the predicted label's; a bare --marginals "
        "means this) or 'all' (one column per label). crf and memm models only."),
    probability: bool = typer.Option(False, help="Write '# probability P(y|x)' before each sentence (crf, memm)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
):
    """Tag a corpus: the input columns plus the predicted label as the last column.

    The columns, format and label mapping are the model's. The input is read lazily, batch by
    batch, so files larger than memory stream through.
    """
    from .tagger import Tagger

    if marginals not in (None, "best", "all"):
        raise ConfigError(f"--marginals takes 'best' or 'all', got {marginals!r}")
    tagger = Tagger.load(model).prepare()
    if marginals or probability:
        from .probability import check_probabilistic

        check_probabilistic(tagger.model_)
    stats = tag_stream(tagger, input, output, format, marginals=marginals, probability=probability, tag_sep=tag_sep)
    if not quiet:
        typer.echo(
            f"tagged {stats['sentences']:,} sentences, {stats['tokens']:,} tokens in {stats['seconds']:.3f}s "
            f"({stats['tokens_per_second']:,.0f} tokens/s)",
            err=True,
        )


def tag_stream(tagger, input, output, format=None, marginals=None, probability=False, tag_sep=None):
    """Read, tag and write batch by batch; returns counts and the time from open to last write."""
    from .readers import iter_corpus, write_tagged

    model = tagger.model_
    opts = _input_options(model)
    start = time.perf_counter()
    sentences = tokens = 0
    out_path = Path(output) if output else None
    tmp_path = out_path.with_name(f".{out_path.name}.tmp") if out_path else None
    out = open(tmp_path, "w", encoding="utf-8") if out_path else sys.stdout
    labels = np.asarray(model.labels, dtype=object)
    try:
        batches = iter_corpus(
            input, format=format or opts.get("format"), columns=opts.get("columns"), label=opts.get("label"),
            encoding=opts.get("encoding", "utf-8"), only_types=opts.get("only_types"), require_label=False,
            tag_sep=_tag_sep(opts, format, tag_sep),
        )
        for batch in batches:
            encoded = model.encoder.transform(batch, with_labels=False)
            ids, _ = model.decode(encoded)
            extra, headers = None, None
            if marginals or probability:
                from .probability import marginals as compute_marginals

                node, log_probability = compute_marginals(model, encoded)
                if marginals == "best":
                    extra = [[f"{p:.4f}" for p in node[np.arange(len(ids)), ids]]]
                elif marginals == "all":
                    extra = [[f"{label}:{p:.4f}" for p in node[:, c]] for c, label in enumerate(model.labels)]
                if probability:
                    headers = [f"# probability {np.exp(lp):.6f}" for lp in log_probability]
            write_tagged(out, batch, labels[ids].tolist(), extra_columns=extra, sentence_headers=headers)
            sentences += batch.n_sentences
            tokens += batch.n_tokens
        out.flush()
        seconds = time.perf_counter() - start
        if out_path:
            out.close()
            os.replace(tmp_path, out_path)
    except BaseException:
        if out_path:
            out.close()
            tmp_path.unlink(missing_ok=True)
        raise
    return {"sentences": sentences, "tokens": tokens, "seconds": seconds,
            "tokens_per_second": tokens / seconds if seconds > 0 else float("inf")}


# ---------------------------------------------------------------------------------------- eval
@app.command(name="eval", epilog="""Examples:

  structperc eval corpora/conll2000/test.txt --model np.npz

  structperc eval test.conllu --model pos.npz --json | jq .accuracy
""")
@handles_errors
def eval_(
    test_file: Path = typer.Argument(..., help="Labelled test corpus."),
    model: Path = typer.Option(..., "--model", "-m", help="Model file."),
    format: Optional[str] = typer.Option(None, "--format", help="Override the model's input format."),
    tag_sep: Optional[str] = typer.Option(None, "--tag-sep", help="Word/tag separator of --format tagged (default /)."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
):
    """Score a model: token accuracy, chunk P/R/F1 (conlleval-compatible, via seqeval), tokens/s."""
    from .readers import read_corpus
    from .tagger import Tagger

    tagger = Tagger.load(model).prepare()
    opts = _input_options(tagger.model_)
    corpus = read_corpus(
        test_file, format=format or opts.get("format"), columns=opts.get("columns"), label=opts.get("label"),
        encoding=opts.get("encoding", "utf-8"), only_types=opts.get("only_types"),
        tag_sep=_tag_sep(opts, format, tag_sep),
    )
    result = tagger.evaluate(corpus)
    result.pop("tokens_per_second", None)
    if json_output:
        result.setdefault("precision", None)
        result.setdefault("recall", None)
        result.setdefault("f1", None)
        result.setdefault("per_type", {})
        typer.echo(json.dumps(result))
        return
    typer.echo(format_report(result))


def format_report(result):
    """conlleval-style text report."""
    lines = [
        f"processed {result['tokens']} tokens in {result['sentences']} sentences "
        f"({result['tokens'] / max(result['seconds'], 1e-9):,.0f} tokens/s)",
        f"accuracy: {result['accuracy']:6.2f}%",
    ]
    if "f1" in result:
        lines[-1] += (f"; precision: {result['precision']:6.2f}%; recall: {result['recall']:6.2f}%; "
                      f"FB1: {result['f1']:6.2f}")
        for kind, s in result["per_type"].items():
            lines.append(f"{kind:>17}: precision: {s['precision']:6.2f}%; recall: {s['recall']:6.2f}%; "
                         f"FB1: {s['f1']:6.2f}  {s['support']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- info
@app.command(epilog="Example:\n\n  structperc info np.npz --top 5")
@handles_errors
def info(
    model: Path = typer.Argument(..., help="Model file."),
    top: int = typer.Option(10, help="Top weighted features to show per label."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
):
    """Labels, feature count, training configuration and the top weighted features per label."""
    from .model import LinearChainModel

    m = LinearChainModel.load(model)
    emission = m.emission_weights()
    top_features = {}
    for c, label in enumerate(m.labels):
        column = emission[:, c]
        best = np.argsort(-column, kind="stable")[:top] if len(column) else []
        top_features[label] = [(m.encoder.describe_feature(int(f)), float(column[f])) for f in best]
    summary = {
        "labels": m.labels, "features": m.encoder.n_features_, "pair_features": m.encoder.n_pair_features_,
        "weights": int(len(m.weights)), "order": m.order, "constrain": m.constrain,
        "templates": m.encoder.template_strings_, **m.metadata, "top_features": top_features,
    }
    if json_output:
        typer.echo(json.dumps(summary))
        return
    typer.echo(f"labels ({len(m.labels)}): {' '.join(m.labels)}")
    typer.echo(f"features: {summary['features']:,} emission, {summary['pair_features']:,} pair; "
               f"{summary['weights']:,} weights; order {m.order}; constraint {m.constrain or 'none'}")
    typer.echo(f"templates: {', '.join(summary['templates'])}")
    for key in ("input", "training"):
        if key in m.metadata:
            typer.echo(f"{key}: {json.dumps(m.metadata[key])}")
    for label, feats in top_features.items():
        typer.echo(f"top features for {label}:")
        for name, weight in feats:
            typer.echo(f"  {weight:+10.3f}  {name}")


# ---------------------------------------------------------------------------------------- data
@data_app.command("fetch", epilog="Example:\n\n  structperc data fetch conll2000 --mirror ../shared/corpora")
@handles_errors
def data_fetch(
    name: str = typer.Argument(..., help="Corpus name (see `structperc data list`)."),
    mirror: Optional[Path] = typer.Option(None, help="Copy from this mirror folder instead of downloading."),
    dest: Optional[Path] = typer.Option(None, help="Destination root (default: the project's corpora/)."),
    force: bool = typer.Option(False, help="Fetch again even if present and verified."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
):
    """Copy (from --mirror or $STRUCTPERC_MIRROR) or download a corpus, verify sha256, write corpora/NAME/."""
    from .data import fetch

    path = fetch(name, mirror=mirror, dest=dest, force=force,
                 progress=None if quiet else (lambda msg: typer.echo(msg, err=True)))
    typer.echo(str(path))


@data_app.command("list")
@handles_errors
def data_list(json_output: bool = typer.Option(False, "--json")):
    """The known corpora, their formats and licences."""
    from .data import list_corpora

    entries = list_corpora()
    if json_output:
        typer.echo(json.dumps(entries))
        return
    for e in entries:
        typer.echo(f"{e['name']:16} {e.get('format', ''):7} {e.get('licence', '')}")


def _register_extensions():
    from . import cli_reproduce, cli_rerank

    cli_rerank.register(app, handles_errors)
    app.command("reproduce", epilog=cli_reproduce.REPRODUCE_EPILOG)(handles_errors(cli_reproduce.reproduce_command))
    app.command("compare", epilog=cli_reproduce.COMPARE_EPILOG)(handles_errors(cli_reproduce.compare_command))


_register_extensions()


def _bare_marginals(argv):
    """Let `--marginals` stand alone (meaning 'best'), as in `structperc tag f --marginals -m M`."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--marginals" and (i + 1 == len(out) or out[i + 1] not in ("best", "all")):
            out.insert(i + 1, "best")
    return out


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print a warning as one line on stderr: `file:line: warning: ...` for input warnings."""
    if isinstance(message, StructpercWarning) and message.path is not None:
        where = message.path if message.line is None else f"{message.path}:{message.line}"
        text = f"{where}: warning: {message.message}"
    else:
        text = f"structperc: warning: {message}"
    print(text, file=sys.stderr if file is None else file)


def main():
    warnings.showwarning = _show_warning
    app(args=_bare_marginals(sys.argv[1:]), prog_name="structperc")
