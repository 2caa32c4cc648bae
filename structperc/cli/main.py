"""Command line: each command parses its arguments, calls one library function and prints.

Errors a user can cause (a malformed input line, a bad option, a corrupt model file) are printed as
one line on stderr and the command exits with status 2, without a traceback. Ctrl-C prints one line
and exits with status 130; files being written are removed, never left half-written.
"""
import atexit
import functools
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Optional

import typer

from structperc.cli.progress import Progress, announce_compiling, checkpoint_path, examples
from structperc.errors import ConfigError, StructpercError, StructpercWarning
from structperc.features.presets import describe_structure
from structperc.features.templates import PRESETS
from structperc.train import TRAINERS

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="structperc: structured perceptron, CRF and friends for sequence tagging and chunking.",
    epilog=examples(
        "Example:\n\n  structperc train corpora/conll2000/train.txt --model np.npz --columns word,pos,chunk"),
)
data_app = typer.Typer(no_args_is_help=True, help="Fetch and list the known corpora.", rich_markup_mode=None,
                       epilog=examples("Example:\n\n  structperc data list"))
app.add_typer(data_app, name="data")


def _fail(message):
    typer.echo(f"structperc: error: {message}", err=True)
    raise typer.Exit(2)


def handles_errors(fn=None, *, interrupted="interrupted"):
    """Turn StructpercError into one line on stderr and exit status 2, Ctrl-C into the line
    ``interrupted`` and exit status 130, and a broken output pipe into a quiet exit."""
    if fn is None:
        return functools.partial(handles_errors, interrupted=interrupted)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StructpercError as exc:
            _fail(str(exc))
        except KeyboardInterrupt:
            typer.echo(interrupted, err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # the reader of our stdout went away (e.g. `| head`): not an error worth a traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None

    return wrapper


def _split_list(value):
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _takers(option):
    """Help suffix naming the learning rules that declare ``option``."""
    return f" ({', '.join(name for name, rule in TRAINERS.items() if option in rule.params)})"


# ---------------------------------------------------------------------------------------- train
@app.command(epilog=examples("""Examples:

  structperc train corpora/conll2000/train.txt --model np.npz --columns word,pos,chunk --only-types NP --constrain bio

  structperc train en_ewt-ud-train.conllu --label xpos --templates pos --order 2 --tag-dict 5 \\
      --model pos.npz --dev en_ewt-ud-dev.conllu

  structperc train corpora/conll2000/train.txt --model bag.npz --columns word,pos,chunk --bagging 5 --workers 2

  structperc train corpora/conll2000/train.txt --model stacked.npz --columns word,pos,chunk --stack np.npz
"""))
@handles_errors(interrupted="interrupted; no model written")
def train(
    train_file: Path = typer.Argument(..., help="Training corpus (CoNLL columns, CoNLL-U or PTB .pos)."),
    model: Path = typer.Option(..., "--model", "-m", help="Where to write the model (.npz)."),
    dev: Optional[Path] = typer.Option(None, help="Development corpus: score each epoch, keep the best."),
    format: Optional[str] = typer.Option(
        None, "--format", help="conll, conllu, ptb or tagged (default: from the extension)."),
    tag_sep: Optional[str] = typer.Option(None, "--tag-sep", help="Word/tag separator of --format tagged (default /)."),
    columns: Optional[str] = typer.Option(None, help="Column names, e.g. word,pos,chunk (default: last is the label)."),
    label: Optional[str] = typer.Option(
        None, help="Label column (CoNLL-U: upos or xpos, or columns joined with |: upos+feats)."),
    only_types: Optional[str] = typer.Option(None, help="Keep these chunk types, map the others to O (e.g. NP)."),
    encoding: str = typer.Option("utf-8", help="Input encoding."),
    templates: Optional[str] = typer.Option(
        None, help=f"Preset ({', '.join(PRESETS)}) or a template file (default: from the labels: ner for "
        "entity BIO labels, chunk for phrase BIO labels with a pos column, pos-rich otherwise; or the --init "
        "model's)."),
    all_pairs: Optional[bool] = typer.Option(
        None, "--all-pairs/--gold-pairs",
        help="A weight for every feature and label, or only for the pairs seen in training (default: --all-pairs)."),
    dense_count: Optional[int] = typer.Option(
        None, "--dense-count", help="With --gold-pairs: features seen at least K times keep every label."),
    trainer: str = typer.Option("perceptron", help=f"Learning rule: {', '.join(TRAINERS)}."),
    epochs: int = typer.Option(10, min=1, help="Passes over the training data."),
    average: Optional[bool] = typer.Option(
        None, "--average/--no-average", help="Average the weights (default: on)" + _takers("average") + "."),
    min_count: Optional[int] = typer.Option(
        None, help="Drop features seen fewer times than this (Collins' cc; default 0, or the --init model's)."),
    rare_threshold: Optional[int] = typer.Option(
        None, help="Words seen fewer times are rare (for @rare templates; default 5, or the --init model's)."),
    constrain: Optional[str] = typer.Option(
        None, help="Transition constraint: bio or none (default: bio for BIO labels that keep it, else none)."),
    order: Optional[int] = typer.Option(
        None, min=1, max=2, help="Label order: 1 (bigram, the default) or 2 (trigram)."),
    tag_dict: Optional[int] = typer.Option(None, help="Words seen >= K times may only take their seen tags."),
    l2: Optional[float] = typer.Option(None, help="L2 regularization" + _takers("l2") + "."),
    eta0: Optional[float] = typer.Option(
        None, help="Initial learning rate (default: calibrated)" + _takers("eta0") + "."),
    batch_size: Optional[int] = typer.Option(None, help="Mini-batch size" + _takers("batch_size") + "."),
    cost: Optional[float] = typer.Option(None, help="Hamming cost per wrong token" + _takers("cost") + "."),
    average_start: Optional[int] = typer.Option(
        None, help="Epoch after which SGD averaging starts (default 1)" + _takers("average_start") + "."),
    l1: Optional[float] = typer.Option(
        None, help="L1 strength per example, cumulative penalty (elastic net with --l2)" + _takers("l1") + "."),
    promotion: Optional[float] = typer.Option(None, help="Winnow promotion factor α > 1" + _takers("promotion") + "."),
    demotion: Optional[float] = typer.Option(None, help="Winnow demotion factor 0 < β < 1" + _takers("demotion") + "."),
    initial_weight: Optional[float] = typer.Option(
        None, help="Starting value of w⁺ and w⁻" + _takers("initial_weight") + "."),
    seed: int = typer.Option(0, help="Seed of the per-epoch shuffles (and of the --bagging samples, --stack folds)."),
    checkpoint_every: Optional[int] = typer.Option(
        None, "--checkpoint-every", min=1,
        help="After every K epochs, write MODEL's name with .checkpoint.npz: a model of the weights "
        "reached, plus what --resume needs to continue."),
    resume: Optional[Path] = typer.Option(
        None, "--resume", help="Continue from this checkpoint up to --epochs (the same command, options and "
        "data as the run that wrote it); the model is the one the uninterrupted run gives."),
    missing_label: Optional[str] = typer.Option(
        None, "--missing-label", help="Label symbol of an unlabelled token (e.g. '?'): train on partial labels."),
    workers: Optional[int] = typer.Option(
        None, min=1, help="Train by parameter mixing on N local dask workers (default 1: serially); with "
        "--bagging, the bags train on N local workers (default 2)."),
    scheduler: Optional[str] = typer.Option(
        None, help="Train by parameter mixing (or the --bagging bags) on the dask cluster at ADDRESS."),
    bagging: Optional[int] = typer.Option(
        None, "--bagging", help="Train N taggers on bootstrap samples of the sentences, on dask workers, and "
        "save their token-level vote as one model (N >= 1)."),
    stack: Optional[Path] = typer.Option(
        None, "--stack", help="Stack on model B: B's labels (jackknifed on TRAIN) are the input column 'stack' "
        "(templates stack[0] ...; default: B's templates plus stack[-1], stack[0], stack[1], stack[0]|w[0])."),
    stack_folds: Optional[int] = typer.Option(None, "--stack-folds", help="Jackknife folds of --stack (default 5)."),
    mix: Optional[str] = typer.Option(None, help="Parameter mixing: uniform (default) or errors."),
    hash_bits: Optional[int] = typer.Option(None, help="Feature ids from a hash modulo 2^B (no feature dictionary)."),
    cache_dir: Optional[Path] = typer.Option(None, help="Keep the encoded training corpus here; later runs map it."),
    lexicon: Optional[list[str]] = typer.Option(
        None, "--lexicon", help="NAME=FILE: word<TAB>value (or cluster paths) for the fields NAME[k], NAME.pK[k]."),
    lexicon_lower: bool = typer.Option(False, "--lexicon-lower", help="Look words up in lexicons lower-cased."),
    unlabeled: Optional[list[Path]] = typer.Option(
        None, "--unlabeled", help="Unlabelled sentences for --semi: files in the training format without the "
                                  "label column, or raw text, one sentence per line (split as `clusters` splits it)."),
    semi: Optional[str] = typer.Option(None, "--semi", help="Learn from --unlabeled: self, tri or tri-disagree."),
    rounds: int = typer.Option(2, min=1, help="Rounds of --semi training at most."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
    init: Optional[Path] = typer.Option(
        None, "--init", help="Continue training this model: its weights, features and labels; the features and "
                             "labels of TRAIN it lacks are added at 0 (a feature seen the model's --min-count times)."),
    resumable: bool = typer.Option(
        False, "--resumable", help="Also save the perceptron's averaging state, for an exact --init later."),
):
    """Train a tagger or chunker and save it.

    An option of a learning rule (--l2, --cost ...) that the chosen --trainer does not take is an error.
    """
    from structperc.ensembles.vote import check_train_options
    from structperc._kernels.cache import training_kernels
    from structperc.train import TRAINERS, epoch_kernels
    from structperc.estimator.tagger import Tagger

    start = time.perf_counter()
    check_train_options({
        "--init": init, "--resume": resume, "--checkpoint-every": checkpoint_every, "--resumable": resumable,
        "--semi": semi, "--unlabeled": unlabeled, "--dev": dev, "--mix": mix, "--cache-dir": cache_dir,
        "--bagging": bagging, "--stack": stack, "--stack-folds": stack_folds, "--workers": workers,
        "--scheduler": scheduler})
    structure = dict(min_count=min_count, rare_threshold=rare_threshold, constrain=constrain, order=order,
                     tag_dict=tag_dict, all_pairs=all_pairs, hash_bits=hash_bits, dense_count=dense_count)
    continued = Tagger.load(init) if init is not None else None
    if continued is not None:
        from structperc.estimator.training import continued_structure

        structure = continued_structure(continued, structure, lexicon)  # the model's; another value is an error
        templates = templates or continued.model_.encoder.template_strings_
    structure = {k: v for k, v in structure.items() if v is not None}
    if stack is not None and templates is None:
        from structperc.ensembles.stacking import default_templates

        templates = default_templates(stack)
    tagger = Tagger(
        templates=templates, trainer=trainer, epochs=epochs, average=average, **structure, seed=seed,
        missing_label=missing_label, l2=l2, eta0=eta0, batch_size=batch_size, cost=cost, average_start=average_start,
        workers=workers or 1, scheduler=scheduler, mix=mix or "uniform", cache_dir=cache_dir,
        l1=l1, promotion=promotion, demotion=demotion, initial_weight=initial_weight,
        lexicons=lexicon or None, lexicon_lower=lexicon_lower, resumable=resumable,
    )
    tagger.trainer_options()  # a bad option is reported before the corpus is read
    tagger.check_engine()
    if continued is not None:
        tagger.model_ = continued.model_
    announce_compiling(training_kernels(epoch_kernels(trainer, l1=bool(l1)) if trainer in TRAINERS else (), dev,
                                        mixing=(workers or 1) > 1 or scheduler is not None))
    checkpoint = checkpoint_path(model) if checkpoint_every else None
    progress = Progress(epochs, quiet, checkpoint, checkpoint_every,
                        header=lambda: _structure_line(tagger))
    reader_options = dict(format=format, columns=_split_list(columns), label=label, encoding=encoding,
                          only_types=_split_list(only_types), **({} if tag_sep is None else {"tag_sep": tag_sep}))
    if bagging is not None:
        from structperc.cli.ensemble import train_bagging

        return train_bagging(tagger, train_file, model, bagging, seed, dev, workers, scheduler, reader_options,
                             quiet, json_output, start)
    if semi is not None or unlabeled:
        from structperc.ensembles.semisupervised import semi_fit_file

        tagger = semi_fit_file(tagger, train_file, unlabeled, semi, rounds, seed=seed, **reader_options)
    elif stack is not None:
        from structperc.ensembles.stacking import stack_fit_file

        tagger = stack_fit_file(tagger, train_file, stack, stack_folds, seed=seed, dev=dev, progress=progress,
                                callback=progress.epoch_done, fold_progress=progress.fold_done, **reader_options)
    else:
        tagger.fit_file(train_file, dev=dev, progress=progress, callback=progress.epoch_done,
                        checkpoint=checkpoint, checkpoint_every=checkpoint_every or 1, resume=resume,
                        partial=init is not None, **reader_options)
    tagger.save(model)
    training = tagger.model_.metadata["training"]
    summary = {
        "model": str(model), "sentences": training["n_sentences"], "tokens": training["n_tokens"],
        "labels": len(tagger.labels_), "features": tagger.model_.encoder.n_features_,
        "best_epoch": tagger.n_iter_, "seconds": time.perf_counter() - start,
    }
    if dev is not None:
        summary["dev"] = next(r.dev for r in tagger.history_ if r.epoch == tagger.n_iter_)
    if stack is not None:
        summary["ensemble"] = tagger.info
    if json_output:
        typer.echo(json.dumps(summary))
    elif not quiet:
        typer.echo(
            f"saved {model}: {summary['labels']} labels, {summary['features']:,} features, "
            f"best epoch {tagger.n_iter_}, {summary['seconds']:.2f}s",
            err=True,
        )


def _structure_line(tagger):
    """What a training run used (and chose from the data), once the Tagger has chosen."""
    if not hasattr(tagger, "templates_"):
        return None
    return describe_structure(tagger.templates_, tagger.constrain_, tagger.structure_reason_)


# ---------------------------------------------------------------------------------------- tag
@app.command(epilog=examples("""Examples:

  structperc tag corpora/conll2000/test.txt --model np.npz > tagged.txt

  cat sentences.txt | structperc tag - --model pos.npz --format raw --output tagged.txt --json
"""))
@handles_errors(interrupted="interrupted; no output written")
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
    force_column: Optional[int] = typer.Option(
        None, "--force-column", help="1-based input column of labels to keep fixed; the missing symbol "
        "(the model's --missing-label, else '?') leaves a token free."),
    output_format: Optional[str] = typer.Option(
        None, "--output-format", help="tagged: one sentence a line of word/TAG tokens (default: as the input)."),
    keep_gold: bool = typer.Option(
        False, "--keep-gold", help="CoNLL-U: keep the gold label and add the prediction as an 11th column."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout (needs --output)."),
):
    """Tag a corpus: the input columns plus the predicted label as the last column (CoNLL-U: in the
    label's own column). --format raw reads raw text, one sentence a line.

    The columns, format and label mapping are the model's. The input is read lazily, batch by
    batch, so files larger than memory stream through.
    """
    from structperc._kernels.cache import tagging_kernels
    from structperc.ensembles.files import load_model

    if marginals not in (None, "best", "all"):
        raise ConfigError(f"--marginals takes 'best' or 'all', got {marginals!r}")
    if json_output and output is None:
        raise ConfigError("--json prints on stdout; give --output for the tagged text")
    tagger = load_model(model)
    announce_compiling(tagging_kernels(tagger.model_.normalization if marginals or probability else None, input,
                                       tagger.model_.decoder))
    stats = tagger.prepare().tag_file(input, output, format, marginals=marginals, probability=probability,
                                      tag_sep=tag_sep, force_column=force_column, output_format=output_format,
                                      keep_gold=keep_gold)
    if json_output:
        typer.echo(json.dumps({"output": str(output), **stats}))
    elif not quiet:
        typer.echo(
            f"tagged {stats['sentences']:,} sentences, {stats['tokens']:,} tokens in {stats['seconds']:.3f}s "
            f"({stats['tokens_per_second']:,.0f} tokens/s)",
            err=True,
        )


# ---------------------------------------------------------------------------------------- eval
@app.command(name="eval", epilog=examples("""Examples:

  structperc eval corpora/conll2000/test.txt --model np.npz

  structperc eval test.conllu --model pos.npz --json | jq .accuracy
"""))
@handles_errors
def eval_(
    test_file: Path = typer.Argument(..., help="Labelled test corpus."),
    model: Path = typer.Option(..., "--model", "-m", help="Model file."),
    format: Optional[str] = typer.Option(None, "--format", help="Override the model's input format."),
    tag_sep: Optional[str] = typer.Option(None, "--tag-sep", help="Word/tag separator of --format tagged (default /)."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
):
    """Score a model: token accuracy, chunk P/R/F1 (conlleval-compatible, via seqeval), tokens/s."""
    from structperc._kernels.cache import tagging_kernels
    from structperc.ensembles.files import load_model

    tagger = load_model(model)
    announce_compiling(tagging_kernels(path=test_file, decoder=tagger.model_.decoder))
    result = tagger.prepare().evaluate_file(test_file, format, tag_sep=tag_sep)
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
@app.command(epilog=examples("Example:\n\n  structperc info np.npz --top 5"))
@handles_errors
def info(
    model: Path = typer.Argument(..., help="Model file."),
    top: int = typer.Option(10, help="Top weighted features to show per label."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object on stdout."),
):
    """Labels, feature count, training configuration and the top weighted features per label."""
    from structperc.ensembles.files import load_model

    summary = load_model(model).describe(top)
    if json_output:
        typer.echo(json.dumps(summary))
        return
    typer.echo(f"labels ({len(summary['labels'])}): {' '.join(summary['labels'])}")
    typer.echo(f"features: {summary['features']:,} emission, {summary['pair_features']:,} pair; "
               f"{summary['weights']:,} weights; order {summary['order']}; "
               f"constraint {summary['constrain'] or 'none'}")
    typer.echo(f"templates: {', '.join(summary['templates'])}")
    chosen = summary.get("training", {}).get("chosen")
    if chosen:
        typer.echo(describe_structure(chosen.get("templates"), chosen.get("constrain"), chosen["reason"]))
    if "hashing" in summary:
        hashing = summary["hashing"]
        rate = hashing.get("collision_rate")
        typer.echo(f"hashing: 2^{hashing['hash_bits']} ids" + ("" if rate is None else
                   f"; collision rate {100 * rate:.2f}% ({hashing['keys']:,} keys on {hashing['ids']:,} ids)"))
    for key in ("input", "training", "ensemble"):
        if key in summary:
            typer.echo(f"{key}: {json.dumps(summary[key])}")
    for label, feats in summary["top_features"].items():
        typer.echo(f"top features for {label}:")
        for name, weight in feats:
            typer.echo(f"  {weight:+10.3f}  {name}")


# ---------------------------------------------------------------------------------------- data
@data_app.command("fetch", epilog=examples("Example:\n\n  structperc data fetch conll2000 --mirror ../shared/corpora"))
@handles_errors
def data_fetch(
    name: str = typer.Argument(..., help="Corpus name (see `structperc data list`)."),
    mirror: Optional[Path] = typer.Option(None, help="Copy from this mirror folder instead of downloading."),
    dest: Optional[Path] = typer.Option(None, help="Destination root (default: the project's corpora/)."),
    force: bool = typer.Option(False, help="Fetch again even if present and verified."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines on stderr."),
    json_output: bool = typer.Option(False, "--json", help="Print {\"name\", \"path\"} as JSON on stdout."),
):
    """Copy (from --mirror or $STRUCTPERC_MIRROR) or download a corpus, verify sha256, write corpora/NAME/."""
    from structperc.data.fetch import fetch

    path = fetch(name, mirror=mirror, dest=dest, force=force,
                 progress=None if quiet else (lambda msg: typer.echo(msg, err=True)))
    typer.echo(json.dumps({"name": name, "path": str(path)}) if json_output else str(path))


@data_app.command("list", epilog=examples("Example:\n\n  structperc data list --json"))
@handles_errors
def data_list(json_output: bool = typer.Option(False, "--json", help="One JSON array on stdout.")):
    """The known corpora, their formats and licences."""
    from structperc.data.fetch import list_corpora

    entries = list_corpora()
    if json_output:
        typer.echo(json.dumps(entries))
        return
    for e in entries:
        typer.echo(f"{e['name']:16} {e.get('format', ''):7} {e.get('licence', '')}")


def _register_extensions():
    from structperc.cli import clusters as cli_clusters
    from structperc.cli import ensemble as cli_ensemble
    from structperc.cli import reproduce as cli_reproduce
    from structperc.cli import rerank as cli_rerank

    cli_rerank.register(app, handles_errors)
    cli_ensemble.register(app, handles_errors)
    for name, epilog, command in (("clusters", cli_clusters.CLUSTERS_EPILOG, cli_clusters.clusters),
                                  ("reproduce", cli_reproduce.REPRODUCE_EPILOG, cli_reproduce.reproduce_command),
                                  ("compare", cli_reproduce.COMPARE_EPILOG, cli_reproduce.compare_command)):
        app.command(name, epilog=examples(epilog))(handles_errors(command))


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


def _show_usage_error(self, file=None):
    """click's usage error (an unknown option, a bad or missing value) as one line, like every other
    error of the command line, naming the command's --help."""
    where = self.ctx.command_path if self.ctx is not None else "structperc"
    print(f"structperc: error: {self.format_message().rstrip('.')}; see {where} --help",
          file=sys.stderr if file is None else file)


def main():
    from structperc._kernels.cache import load_kernels_lazily

    warnings.showwarning = _show_warning
    # click's UsageError, found through typer's public BadParameter (typer 0.9-0.28 use click's own
    # classes or a copy of them)
    next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError").show = _show_usage_error
    load_kernels_lazily()
    try:
        app(args=_bare_marginals(sys.argv[1:]), prog_name="structperc")
        code = 0
    except SystemExit as exc:
        code = exc.code
    _end_process(code)


def _end_process(code):
    """Exit with ``code`` (as SystemExit would) without tearing the interpreter down.

    Every command has closed its files, clusters and reader processes by now. What would remain is
    freeing each of the 600 modules and numba's compiled code one object at a time: 0.1-0.2 s, a
    tenth of a CoNLL-2000 training run. The output streams are flushed first (a reader gone from
    the pipe is not an error: the command already handled that), after the atexit functions."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("message"): the message on stderr, status 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()  # logging's shutdown among them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
    os._exit(status)
