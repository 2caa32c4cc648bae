"""Command line: each command parses its arguments, calls one library function and prints.

Errors a user can cause (a malformed input line, a bad option, a corrupt model file, a missing
file) are printed as one line on stderr and the command exits with status 2, without a traceback:
``Commands.main`` catches them, once for every command. They are the package's own errors
(``errors.StructpercError``), the command line's usage errors and OSError. Any other exception is a
bug: one line that asks for a report and names the file holding the traceback, status 1. Ctrl-C
prints one line and exits with status 130; files being written are removed, never left half-written
(``utils.atomic``). A reader of standard output that goes away (``| head``) ends the command
quietly, with status 141 (128 + SIGPIPE), what a shell reports for a coreutils program in its place.
"""
import contextlib
import errno
import json
import os
import re
import signal
import sys
import warnings
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from typer.core import TyperGroup

from structperc.cli.loading import open_model
from structperc.cli.options import (Encoding, InputFormat, Mirror, ModelFile, Output, Quiet, TagSep, UsageError,
                                    check_json, choices, flags_in, hidden, plural, renamed, value_of)
from structperc.cli.progress import announce_compiling, examples
from structperc.cli.train import TRAIN_EPILOG, train_command
from structperc.errors import StructpercError, StructpercWarning

PROG = "structperc"
# what Ctrl-C leaves behind, by command (every output is written to a temp file and renamed)
# commands that exit without the interpreter's teardown (``main``)
QUICK_EXIT = {"tag", "eval", "explain", "info"}
INTERRUPTED = {"train": "interrupted; no model written", "tag": "interrupted; no output written",
               "models": "interrupted; no model written"}
# the status of a process that SIGPIPE ended; Python ignores SIGPIPE (and so must we: training with a
# dask scheduler writes to sockets), so a closed stdout is an EPIPE OSError turned into this status
STDOUT_CLOSED = 128 + signal.SIGPIPE


class _StdoutClosed(Exception):
    """Standard output's reader went away. Not an OSError, so that click's own handling of EPIPE
    (status 1, in ``typer.core._main``) lets it through to ``Commands.main``."""


@contextlib.contextmanager
def _stdout_closed_raised():
    try:
        yield
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        raise _StdoutClosed() from error


def _silence_stdout():
    """Point standard output at os.devnull, as Python's documentation of SIGPIPE advises: what is
    still buffered in sys.stdout then goes nowhere, and the interpreter's final flush does not raise
    BrokenPipeError again ("Exception ignored ..." on stderr). Returns STDOUT_CLOSED."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a file descriptor (a test's capture): nothing to flush into
        pass
    return STDOUT_CLOSED


def _flush_stdout(code):
    """Flush standard output; a reader that went away turns ``code`` into STDOUT_CLOSED, another
    failure (a full disk under `> file`) into one line and status 2."""
    try:
        sys.stdout.flush()
    except OSError as error:
        if error.errno == errno.EPIPE:
            return _silence_stdout()
        print(f"{PROG}: error: standard output: {error.strerror or error}", file=sys.stderr)
        _silence_stdout()  # the unwritten rest would fail again at the interpreter's final flush
        return 2
    return code


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("structperc")
    except PackageNotFoundError:  # a source checkout on PYTHONPATH, not installed
        import structperc

        return structperc.__version__


def _usage_line(error):
    """click's usage error as one line naming the option and the command's --help."""
    param = getattr(error, "param", None)
    hint = getattr(error, "param_hint", None)
    if param is not None and getattr(param, "opts", None):
        hint = max(param.opts, key=len)  # the long spelling
    elif isinstance(hint, str):
        hint = hint.strip("'\"")
    message = error.message if hint and hasattr(error, "message") else error.format_message()
    message = message.rstrip(".")
    message = re.sub(r"is not a valid (int|integer)( range)?\b", "is not an integer", message)
    message = re.sub(r"is not a valid float( range)?\b", "is not a number", message)
    where = error.ctx.command_path if getattr(error, "ctx", None) is not None else PROG
    return f"{hint}: {message}; see {where} --help" if hint else f"{message}; see {where} --help"


def _command_name(args):
    return next((a for a in args if not a.startswith("-")), None)


def _write_traceback():
    """Write the exception being handled, with its traceback, to a new file in the temporary folder;
    its path (or "stderr" when no file can be written, and it is printed there instead)."""
    import tempfile
    import traceback

    text = traceback.format_exc()
    try:
        fd, path = tempfile.mkstemp(prefix="structperc-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path
    except OSError:
        sys.stderr.write(text)
        return "stderr"


class Commands(TyperGroup):
    """The top-level group: every error a user can cause is turned into one line here, once for all
    commands (click's documented way: ``main(standalone_mode=False)`` raises them instead of exiting)."""

    def make_context(self, *args, **kwargs):
        # the group's own --help is printed here, while parsing
        with _stdout_closed_raised():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        # every command (and its --help) runs inside the group's invoke
        with _stdout_closed_raised():
            return super().invoke(ctx)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(_bare_marginals(args), prog_name, complete_var, standalone_mode=False, **extra)
            code = code if isinstance(code, int) else 0  # a command returns None, an Exit its status
            if code == 130:  # typer turns Ctrl-C into Exit(130)
                typer.echo(INTERRUPTED.get(_command_name(args), "interrupted"), err=True)
        except UsageError as error:
            if type(error).__name__ == "NoArgsIsHelpError":  # a bare group: its help, status 2
                error.show()
            else:
                typer.echo(f"{PROG}: error: {_usage_line(error)}", err=True)
            code = 2
        except StructpercError as error:
            typer.echo(f"{PROG}: error: {flags_in(str(error))}", err=True)
            code = 2
        except OSError as error:  # a file missing or unreadable: the message names it
            where = f"{error.filename}: " if error.filename is not None else ""
            typer.echo(f"{PROG}: error: {where}{error.strerror or error}", err=True)
            code = 2
        except typer.Abort:
            typer.echo("aborted", err=True)
            code = 1
        except _StdoutClosed:  # `| head`: the rest of the output is not wanted; nothing to say
            code = _silence_stdout()
        except Exception as error:  # noqa: BLE001  anything else is a bug of ours, not the user's input
            typer.echo(f"{PROG}: internal error: {type(error).__name__}: {error}. This is a bug in structperc; "
                       f"please report it with the traceback written to {_write_traceback()}", err=True)
            code = 1
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=Commands,
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


def _show_version(value):
    if value:
        typer.echo(f"{PROG} {_version()}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                       help="Print the version and exit.")):
    """structperc: structured perceptron, CRF and friends for sequence tagging and chunking."""


app.command("train", epilog=examples(TRAIN_EPILOG))(train_command)


# ---------------------------------------------------------------------------------------- tag
Marginals = choices("Marginals", ("best", "all"))
OutputFormat = choices("OutputFormat", ("tagged", "jsonl", "conllu"))


@app.command(epilog=examples("""Examples:

  structperc tag corpora/conll2000/test.txt --model np.npz > tagged.txt

  cat sentences.txt | structperc tag - --model pos.npz --format raw --output tagged.txt --json

  echo "Mary left. She was tired." | structperc tag - --model en-ewt-upos --output-format jsonl

  structperc tag part1.txt part2.txt --model np.npz --output-dir tagged/
"""))
def tag(
    inputs: Annotated[List[str], typer.Argument(
        help="Input files, or - for stdin; several go to --output-dir, one output file each.")],
    model: ModelFile,
    mirror: Mirror = None,
    output: Output = None,
    output_dir: Annotated[Optional[Path], typer.Option(
        "--output-dir", help="Write the output of each input into this folder (created if needed), under the "
        "input's file name, each atomically.")] = None,
    format: InputFormat = None,
    tag_sep: TagSep = None,
    encoding: Encoding = None,
    marginals: Optional[Marginals] = typer.Option(
        None, help="Append P(label | x) per token: 'best' (the predicted label's; a bare --marginals "
        "means this) or 'all' (one column per label). crf and memm models only."),
    probability: bool = typer.Option(False, help="Write '# probability P(y|x)' before each sentence (crf, memm)."),
    force_column: Optional[int] = typer.Option(
        None, "--force-column", min=1, help="1-based input column of labels to keep fixed; the missing symbol "
        "(the model's --missing-label, else '?') leaves a token free."),
    output_format: Optional[OutputFormat] = typer.Option(
        None, "--output-format", help="tagged: one sentence a line of word/TAG tokens (default: as the input); "
        "jsonl: raw text in (one paragraph a line), one JSON object per sentence out, with character offsets "
        "in the line, tags and, for chunk labels, spans (with a score, their probability, for crf and memm "
        "models only: a perceptron defines none); conllu: raw text in, CoNLL-U with # text, SpaceAfter=No and "
        "multiword tokens (didn't: did n't)."),
    keep_gold: bool = typer.Option(
        False, "--keep-gold", help="CoNLL-U: keep the gold label and add the prediction as an 11th column."),
    quiet: Quiet = False,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the summary as JSON on stdout (needs --output or --output-dir).")] = False,
):
    """Tag a corpus: the input columns plus the predicted label as the last column (CoNLL-U: in the
    label's own column).

    Raw text is read as raw text whatever the output format: with --format raw, with --output-format
    jsonl or conllu, or when the input is raw text where the model's format was expected. Each line
    of raw text is a paragraph, split into sentences and words as UD English splits them (do n't);
    a sentence is one line of word/TAG with --output-format tagged, else a word and its tag a line.

    The columns, format and label mapping are the model's. The input is read lazily, batch by
    batch, so files larger than memory stream through. An empty input gives an empty output.
    """
    from structperc._kernels.cache import tagging_kernels

    marginals = value_of(marginals)
    outputs = output_paths(inputs, output, output_dir)
    check_json(json_output, output or output_dir, "the tagged text")
    tagger = open_model(model, mirror, quiet)
    announce_compiling(tagging_kernels(tagger.model_.normalization if marginals or probability else None))
    # each input is read once: the tagging warns when the model knows little of its first sentences
    # (ensembles are not checked)
    prepared = tagger.prepare()
    summaries = []
    for input, out in zip(inputs, outputs):
        stats = prepared.tag_file(input, out, value_of(format), marginals=marginals, probability=probability,
                                  tag_sep=tag_sep, force_column=force_column, encoding=encoding,
                                  output_format=value_of(output_format), keep_gold=keep_gold,
                                  familiarity=getattr(tagger, "members", None) is None)
        summaries.append({"input": input, "output": None if out is None else str(out), **stats})
        if not quiet and not json_output:
            where = f"{input} -> {out}: " if len(inputs) > 1 else ""
            typer.echo(f"{where}tagged {plural(stats['sentences'], 'sentence')}, {plural(stats['tokens'], 'token')} "
                       f"in {stats['seconds']:.3f}s ({stats['tokens_per_second']:,.0f} tokens/s)", err=True)
    if json_output:
        summary = {key: value for key, value in summaries[0].items() if key != "input"}
        if output_dir is not None:
            summary = {"outputs": summaries, **{key: sum(s[key] for s in summaries) for key in
                                                ("sentences", "tokens", "seconds")}}
        typer.echo(json.dumps(summary))


def output_paths(inputs, output, output_dir):
    """Where ``tag`` writes each input: ``--output`` (or standard output, None) for one input; with
    ``--output-dir``, the folder and the input's file name. Usage errors before anything is read: several
    inputs without --output-dir, both options, standard input or one name twice in the folder, an input
    that is missing or that its output would overwrite."""
    if output_dir is None:
        if len(inputs) > 1:
            raise typer.BadParameter(f"{len(inputs)} inputs: give --output-dir DIR, where each input's output "
                                     f"is written under its file name", param_hint="INPUT...")
        return [output]
    if output is not None:
        raise typer.BadParameter("names one output file: give --output-dir alone", param_hint="'--output'")
    if "-" in inputs:
        raise typer.BadParameter("standard input (-) has no file name to write under in --output-dir: tag it "
                                 "alone, with --output", param_hint="INPUT...")
    outputs = [output_dir / Path(input).name for input in inputs]
    for input, out in zip(inputs, outputs):
        if not Path(input).is_file():
            raise OSError(errno.ENOENT, "no such file", input)
        if out.exists() and out.resolve() == Path(input).resolve():
            raise typer.BadParameter(f"the output of {input} would write over it: give another folder",
                                     param_hint="'--output-dir'")
    named = {}
    for input, out in zip(inputs, outputs):
        if out.name in named:
            raise typer.BadParameter(f"{named[out.name]} and {input} would both be written to {out}: tag them "
                                     f"into separate folders", param_hint="'--output-dir'")
        named[out.name] = input
    output_dir.mkdir(parents=True, exist_ok=True)
    return outputs


# ---------------------------------------------------------------------------------------- info
@app.command(epilog=examples("Example:\n\n  structperc info np.npz --top 5"))
def info(
    model: Annotated[Path, typer.Argument(help="Model file, or a model's name (structperc models list).")],
    mirror: Mirror = None,
    top: int = typer.Option(10, min=0, help="Top weighted features to show per label."),
    json_output: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
):
    """Labels, feature count, training configuration and the top weighted features per label."""
    from structperc.features.presets import describe_structure

    summary = open_model(model, mirror).describe(top)
    if json_output:
        typer.echo(json.dumps(summary))
        return
    training = summary.get("training", {})
    chosen = training.get("chosen")
    if chosen:
        # templates given by the user are not in "chosen": the training options have them; a model
        # trained on feature dicts has none
        dicts = summary.get("input", {}).get("format") == "dicts"
        templates = None if dicts else chosen.get("templates", training.get("templates"))
        typer.echo(describe_structure(templates, chosen.get("constrain"), chosen["reason"]))
    labels = summary["labels"]
    typer.echo(f"labels ({len(labels)}): {shown(labels, INFO_LABELS, ' ')}")
    typer.echo(f"features: {summary['features']:,} emission, {summary['pair_features']:,} pair; "
               f"{summary['weights']:,} weights; order {summary['order']}; "
               f"constraint {summary['constrain'] or 'none'}")
    typer.echo(f"templates: {shown(summary['templates'], INFO_LABELS, ', ')}")
    if "hashing" in summary:
        hashing = summary["hashing"]
        rate = hashing.get("collision_rate")
        typer.echo(f"hashing: 2^{hashing['hash_bits']} ids" + ("" if rate is None else
                   f"; collision rate {100 * rate:.2f}% ({hashing['keys']:,} keys on {hashing['ids']:,} ids)"))
    if "layout" in summary:
        typer.echo(f"layout: {summary['layout']['text']}")
    for key in ("input", "training", "ensemble", "raw_text", "named_model"):
        if key in summary:
            typer.echo(f"{key}: {json.dumps(summary[key])}")
    top_features = list(summary["top_features"].items())
    if top_features and top > 0:
        typer.echo(f"top {'feature' if top == 1 else f'{top} features'} per label (label, weight, feature):")
    width = max((len(label) for label, _ in top_features[:INFO_LABELS]), default=0)
    for label, feats in top_features[:INFO_LABELS]:
        for k, (name, weight) in enumerate(feats):
            typer.echo(f"  {label if k == 0 else '':<{width}}  {weight:+10.3f}  {name}")
    if len(top_features) > INFO_LABELS and top > 0:
        typer.echo(f"  ... and {len(top_features) - INFO_LABELS} more labels (--json lists every label)")


# labels (and templates) that `info` lists before it says how many more there are
INFO_LABELS = 40


def shown(items, limit, separator):
    """The first ``limit`` items joined, and how many more there are."""
    text = separator.join(items[:limit])
    return text if len(items) <= limit else f"{text} ... and {len(items) - limit} more (--json lists them all)"


# ---------------------------------------------------------------------------------------- data
@data_app.command("fetch", epilog=examples("Example:\n\n  structperc data fetch conll2000 --mirror ../shared/corpora"))
def data_fetch(
    name: Annotated[str, typer.Argument(help="Corpus name (see `structperc data list`).")],
    mirror: Optional[Path] = typer.Option(None, help="Copy from this mirror folder instead of downloading."),
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o",
        help="Destination root (default: $STRUCTPERC_CORPORA, else corpora/ in the current folder).")] = None,
    dest: Optional[Path] = hidden("--dest"),
    force: bool = typer.Option(False, help="Fetch again even if present and verified."),
    quiet: Quiet = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print {\"name\", \"path\"} as JSON on stdout.")] = False,
):
    """Copy (from --mirror or $STRUCTPERC_MIRROR) or download a corpus, verify sha256, write corpora/NAME/."""
    from structperc.data.fetch import fetch

    output = renamed(output, dest, "--dest", "--output")
    path = fetch(name, mirror=mirror, dest=output, force=force,
                 progress=None if quiet else (lambda msg: typer.echo(msg, err=True)))
    typer.echo(json.dumps({"name": name, "path": str(path)}) if json_output else str(path))


@data_app.command("list", epilog=examples("Example:\n\n  structperc data list --json"))
def data_list(json_output: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False):
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
    from structperc.cli import evaluation as cli_evaluation
    from structperc.cli import models as cli_models
    from structperc.cli import reproduce as cli_reproduce
    from structperc.cli import rerank as cli_rerank
    from structperc.cli import serve as cli_serve

    app.command("eval", epilog=examples(cli_evaluation.EVAL_EPILOG))(cli_evaluation.eval_command)
    app.command("explain", epilog=examples(cli_evaluation.EXPLAIN_EPILOG))(cli_evaluation.explain_command)
    cli_rerank.register(app)
    cli_models.register(app)
    app.command("vote", epilog=examples(cli_ensemble.VOTE_EPILOG))(cli_ensemble.vote_command)
    for name, epilog, command in (("clusters", cli_clusters.CLUSTERS_EPILOG, cli_clusters.clusters),
                                  ("reproduce", cli_reproduce.REPRODUCE_EPILOG, cli_reproduce.reproduce_command),
                                  ("compare", cli_reproduce.COMPARE_EPILOG, cli_reproduce.compare_command),
                                  ("serve", cli_serve.SERVE_EPILOG, cli_serve.serve_command)):
        app.command(name, epilog=examples(epilog))(command)


_register_extensions()


def _bare_marginals(argv):
    """Let `--marginals` stand alone (meaning 'best'), as in `structperc tag f --marginals -m M`: when
    no value follows, or an option, or an existing file (the input); any other word is its value,
    which the option checks."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--marginals" and (i + 1 == len(out) or out[i + 1].startswith("-")
                                     or Path(out[i + 1]).is_file()):
            out.insert(i + 1, "best")
    return out


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Print a warning as one line on stderr: `file:line: warning: ...` for input warnings."""
    if isinstance(message, StructpercWarning) and message.path is not None:
        where = message.path if message.line is None else f"{message.path}:{message.line}"
        text = f"{where}: warning: {flags_in(message.message)}"
    else:
        text = f"structperc: warning: {flags_in(str(message))}"
    print(text, file=sys.stderr if file is None else file)


def main():
    """The ``structperc`` program: the app with warnings as one line; exits with the command's status."""
    from structperc._kernels.cache import load_kernels_lazily, load_numba_without_blas

    warnings.showwarning = _show_warning
    if not load_kernels_lazily():  # a numba where that was not checked: its registries now, without BLAS
        load_numba_without_blas()
    code = _flush_stdout(app(prog_name=PROG, standalone_mode=False))
    if _command_name(sys.argv[1:]) in QUICK_EXIT:
        # these commands start no process, thread or cluster that needs its exit handlers: skip the
        # interpreter's teardown of numba and numpy, which costs a tiny `tag` a third of its time
        try:
            sys.stderr.flush()
        except OSError:  # a reader of stderr that went away: nothing more to say
            pass
        os._exit(code)
    sys.exit(code)
