"""The ``train`` command: its options, which of them apply to which way of training (a table), and
one small function per way: plain, continued (--init), bagging, stacking and semi-supervised."""
import inspect
import json
import time
from pathlib import Path
from typing import Optional

import typer

from structperc.cli.options import (Encoding, Format, Json, Quiet, TagSep, TEMPLATES_METAVAR, UsageError, check_applies,
                                    check_requires, choices, given, split_list, template_spec, value_of)
from structperc.cli.progress import Progress, announce_compiling, checkpoint_path
from structperc.ensembles.semisupervised import METHODS
from structperc.model.linear_chain import CONSTRAINTS
from structperc.train import RULE_OPTIONS, TRAINERS, epoch_kernels
from structperc.train.mixing import MIXES

TRAIN_EPILOG = """Examples:

  structperc train corpora/conll2000/train.txt --model np.npz --columns word,pos,chunk --only-types NP --constrain bio

  structperc train en_ewt-ud-train.conllu --label xpos --templates pos --order 2 --tag-dict 5 \\
      --model pos.npz --dev en_ewt-ud-dev.conllu

  structperc train corpora/conll2000/train.txt --model bag.npz --columns word,pos,chunk --bagging 5 --workers 2

  structperc train corpora/conll2000/train.txt --model stacked.npz --columns word,pos,chunk --stack np.npz
"""

Trainer = choices("Trainer", TRAINERS)
Constraint = choices("Constraint", CONSTRAINTS)
Mix = choices("Mix", MIXES)
Semi = choices("Semi", METHODS)

# ---------------------------------------------------------------------------------------- the option table
# The ways of training, in the order that decides which one a command asks for when it names
# several (the first is reported as not taking the others), and how messages name them.
MODES = {"bagging": "--bagging", "stack": "--stack", "semi": "--semi", "continued": "--init", "plain": "plain training"}
ALL = tuple(MODES)
# option (parameter name) -> the ways of training it applies to; an option not listed applies to all
APPLIES = {
    "bagging": ("bagging",), "stack": ("stack",), "semi": ("semi",), "init": ("continued",),
    "unlabeled": ("semi",), "rounds": ("semi",), "stack_folds": ("stack",),
    "dev": ("plain", "continued", "bagging", "stack"),
    "resume": ("plain", "continued"), "checkpoint_every": ("plain", "continued"),
    "resumable": ("plain", "continued"), "cache_dir": ("plain", "continued"), "mix": ("plain", "continued"),
}
# option -> the option it needs
REQUIRES = {"lexicon_lower": "lexicon"}
ROUNDS = 2  # --rounds when not given


def training_mode(options):
    """The way of training that ``options`` (parameter name -> value) ask for; a usage error for an
    option that does not apply to it, or that lacks the option it needs."""
    mode = next((m for m in ALL if m == "plain" or given(options[_selector(m)])), "plain")
    check_applies(mode, MODES, APPLIES, options, default="plain")
    check_requires(REQUIRES, options)
    if given(options["mix"]) and (options["workers"] or 1) == 1 and not given(options["scheduler"]):
        raise UsageError("--mix applies only to parameter mixing (--workers N > 1 or --scheduler)")
    return mode


def _selector(mode):
    return {"continued": "init"}.get(mode, mode)


def _takers(option):
    """Help suffix naming the learning rules that declare ``option``."""
    return f" ({', '.join(name for name, rule in TRAINERS.items() if option in rule.params)})"


def rule_option_flags(command):
    """``command`` with one option per option of the learning rules (``structperc.train.RULE_OPTIONS``),
    named, typed and explained by the rule's ``Param``: a rule's new option is a new flag, with no
    edit here. Their values reach ``command`` as keyword arguments."""
    import click

    signature = inspect.signature(command)
    parameters = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    for name, param in RULE_OPTIONS.items():
        flag = "--" + name.replace("_", "-")
        declarations = (f"{flag}/--no-{name.replace('_', '-')}",) if param.type is bool else (flag,)
        extra = {}
        if param.choices:
            extra = {"click_type": click.Choice(param.choices), "metavar": f"[{'|'.join(param.choices)}]"}
        default = "" if param.default is None else f"; default {param.default}"
        option = typer.Option(None, *declarations, help=f"{param.help}{default}{_takers(name)}.", **extra)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                            annotation=Optional[param.type]))
    command.__signature__ = signature.replace(parameters=parameters)
    return command


# ---------------------------------------------------------------------------------------- the command
@rule_option_flags
def train_command(
    train_file: Path = typer.Argument(..., help="Training corpus (CoNLL columns, CoNLL-U or PTB .pos)."),
    model: Path = typer.Option(..., "--model", "-m", help="Where to write the model (.npz)."),
    dev: Optional[Path] = typer.Option(None, help="Development corpus: score each epoch, keep the best."),
    format: Optional[Format] = typer.Option(None, "--format", help="Input format (default: from the extension)."),
    tag_sep: TagSep = None,
    columns: Optional[str] = typer.Option(None, help="Column names, e.g. word,pos,chunk (default: last is the label)."),
    label: Optional[str] = typer.Option(
        None, help="Label column (CoNLL-U: upos or xpos, or columns joined with +: upos+feats, whose label "
                   "values join the columns' values with |)."),
    only_types: Optional[str] = typer.Option(None, help="Keep these chunk types, map the others to O (e.g. NP)."),
    encoding: Encoding = None,
    templates: Optional[str] = typer.Option(
        None, metavar=TEMPLATES_METAVAR, callback=template_spec,
        help="Preset or a template file (default: from the labels: ner for entity BIO labels, chunk for phrase "
        "BIO labels with a pos column, pos-rich otherwise; or the --init model's)."),
    all_pairs: Optional[bool] = typer.Option(
        None, "--all-pairs/--gold-pairs",
        help="A weight for every feature and label, or only for the pairs seen in training (default: --all-pairs)."),
    dense_count: Optional[int] = typer.Option(
        None, "--dense-count", min=1, help="With --gold-pairs: features seen at least K times keep every label."),
    trainer: Trainer = typer.Option("perceptron", help="Learning rule."),
    epochs: Optional[int] = typer.Option(
        None, min=1, help="Passes over the training data (default: the rule's; 'up to' N: it stops once its "
        "training figures stop improving: " + ", ".join(
            f"{name} {'up to ' if rule.stopping else ''}{rule.epochs}" for name, rule in TRAINERS.items()) + ")."),
    min_count: Optional[int] = typer.Option(
        None, min=0, help="Drop features seen fewer times than this (Collins' cc; default 0, or the --init model's)."),
    rare_threshold: Optional[int] = typer.Option(
        None, min=0, help="Words seen fewer times are rare (for @rare templates; default 5, or the --init model's)."),
    constrain: Optional[Constraint] = typer.Option(
        None, help="Transition constraint (default: the chunk scheme the gold labels keep: bioes, bio or "
             "iob1; else none)."),
    order: Optional[int] = typer.Option(None, min=1, max=2,
                                        help="Label order: 1 (bigram, the default) or 2 (trigram)."),
    tag_dict: Optional[int] = typer.Option(None, min=0, help="Words seen >= K times may only take their seen tags."),
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
    stack_folds: Optional[int] = typer.Option(None, "--stack-folds", min=2,
                                              help="Jackknife folds of --stack (default 5)."),
    mix: Optional[Mix] = typer.Option(None, help="Parameter mixing: uniform (default) or weighted by errors."),
    hash_bits: Optional[int] = typer.Option(
        None, min=1, max=62, help="Feature ids from a hash modulo 2^B (no feature dictionary)."),
    cache_dir: Optional[Path] = typer.Option(None, help="Keep the encoded training corpus here; later runs map it."),
    lexicon: Optional[list[str]] = typer.Option(
        None, "--lexicon", help="NAME=FILE: word<TAB>value (or cluster paths) for the fields NAME[k], NAME.pK[k]."),
    lexicon_lower: bool = typer.Option(False, "--lexicon-lower", help="Look words up in --lexicon lower-cased."),
    unlabeled: Optional[list[Path]] = typer.Option(
        None, "--unlabeled", help="Unlabelled sentences for --semi: files in the training format without the "
                                  "label column, or raw text, one sentence per line (split as `clusters` splits it)."),
    semi: Optional[Semi] = typer.Option(None, "--semi", help="Learn from --unlabeled."),
    rounds: Optional[int] = typer.Option(None, min=1, help=f"Rounds of --semi training at most (default {ROUNDS})."),
    quiet: Quiet = False,
    json_output: Json = False,
    init: Optional[Path] = typer.Option(
        None, "--init", help="Continue training this model: its weights, features and labels; the features and "
                             "labels of TRAIN it lacks are added at 0 (a feature seen the model's --min-count times)."),
    resumable: bool = typer.Option(
        False, "--resumable", help="Also save the perceptron's averaging state, for an exact --init later."),
    **rule_options,
):
    """Train a tagger or chunker and save it.

    An option of a learning rule (--l2, --cost ...) that the chosen --trainer does not take is an error,
    and so is an option of another way of training (--rounds without --semi ...).
    """
    options = {name: value_of(value) for name, value in locals().items() if name != "rule_options"}
    options.update({name: value_of(value) for name, value in rule_options.items()})
    run = TrainingRun(options, training_mode(options))
    run.fit()


class TrainingRun:
    """One ``train`` command: the options (parameter name -> value), the way of training, the Tagger
    they configure; ``fit`` trains by the way's function, saves and reports."""

    def __init__(self, options, mode):
        self.options, self.mode = options, mode
        self.start = time.perf_counter()

    def fit(self):
        from structperc._kernels.cache import training_kernels

        o = self.options
        tagger = self.tagger()
        tagger.trainer_options()  # a bad option is reported before the corpus is read
        tagger.check_engine(checkpoint=bool(o["checkpoint_every"]) or bool(o.get("resume")))
        announce_compiling(training_kernels(epoch_kernels(o["trainer"], tagger.trainer_options()), o["dev"],
                                            mixing=(o["workers"] or 1) > 1 or o["scheduler"] is not None))
        self.reader_options = dict(format=o["format"], columns=split_list(o["columns"]), label=o["label"],
                                   encoding=o["encoding"] or "utf-8", only_types=split_list(o["only_types"]),
                                   **({} if o["tag_sep"] is None else {"tag_sep": o["tag_sep"]}))
        checkpoint = checkpoint_path(o["model"]) if o["checkpoint_every"] else None
        with Progress(tagger.n_epochs(), o["quiet"], checkpoint, o["checkpoint_every"],
                      header=lambda: structure_line(tagger)) as progress:
            fitted = FIT[self.mode](self, tagger, progress, checkpoint)
        if fitted is not None:
            fitted.save(o["model"])
            self.report(fitted)

    def tagger(self):
        """The Tagger of the options (with the --init model's structure and weights when continuing)."""
        from structperc.estimator.core import TaggerCore

        o = self.options
        structure = {name: o[name] for name in ("min_count", "rare_threshold", "constrain", "order", "tag_dict",
                                                "all_pairs", "hash_bits", "dense_count")}
        templates, continued = o["templates"], None
        if self.mode == "continued":
            from structperc.estimator.fitting import continued_structure

            continued = TaggerCore.load(o["init"])
            structure = continued_structure(continued, structure, o["lexicon"])  # another value is an error
            templates = templates or continued.model_.encoder.template_strings_
        if self.mode == "stack" and templates is None:
            from structperc.ensembles.stacking import default_templates

            templates = default_templates(o["stack"])
        tagger = TaggerCore(
            templates=templates, trainer=o["trainer"], epochs=o["epochs"],
            **{k: v for k, v in structure.items() if v is not None}, seed=o["seed"], missing_label=o["missing_label"],
            **{name: o[name] for name in RULE_OPTIONS},
            **{name: o[name] for name in ("scheduler", "cache_dir", "resumable", "lexicon_lower")},
            workers=o["workers"] or 1, mix=o["mix"] or "uniform", lexicons=o["lexicon"] or None,
        )
        if continued is not None:
            tagger.model_ = continued.model_
        return tagger

    def report(self, tagger):
        o = self.options
        training = tagger.model_.metadata["training"]
        summary = {
            "model": str(o["model"]), "sentences": training["n_sentences"], "tokens": training["n_tokens"],
            "labels": len(tagger.labels_), "features": tagger.model_.encoder.n_features_,
            "best_epoch": tagger.n_iter_, "seconds": time.perf_counter() - self.start,
        }
        if o["dev"] is not None:
            summary["dev"] = next(r.dev for r in tagger.history_ if r.epoch == tagger.n_iter_)
        if self.mode == "stack":
            summary["ensemble"] = tagger.info
        if o["json_output"]:
            typer.echo(json.dumps(summary))
        elif not o["quiet"]:
            typer.echo(f"saved {o['model']}: {summary['labels']} labels, {summary['features']:,} features, "
                       f"best epoch {tagger.n_iter_}, {summary['seconds']:.2f}s", err=True)


def structure_line(tagger):
    """What a training run used (and chose from the data), once the Tagger has chosen."""
    from structperc.features.presets import describe_structure

    if not hasattr(tagger, "templates_"):
        return None
    line = describe_structure(tagger.templates_, tagger.constrain_, tagger.structure_reason_)
    layout = getattr(tagger, "model_", None) and tagger.model_.metadata.get("layout", {}).get("text")
    return f"{line}\nlayout: {layout}" if layout else line


# ---------------------------------------------------------------------------------------- the ways of training
def fit_plain(run, tagger, progress, checkpoint, partial=False):
    o = run.options
    tagger.fit_file(o["train_file"], dev=o["dev"], progress=progress, callback=progress.epoch_done,
                    checkpoint=checkpoint, checkpoint_every=o["checkpoint_every"] or 1, resume=o["resume"],
                    partial=partial, **run.reader_options)
    return tagger


def fit_continued(run, tagger, progress, checkpoint):
    """--init: the model's weights, features and labels, extended by those of the training file."""
    return fit_plain(run, tagger, progress, checkpoint, partial=True)


def fit_bagging(run, tagger, progress, checkpoint):
    """--bagging: saves the vote and reports it itself (returns None)."""
    from structperc.cli.ensemble import train_bagging

    o = run.options
    train_bagging(tagger, o["train_file"], o["model"], o["bagging"], o["seed"], o["dev"], o["workers"],
                  o["scheduler"], run.reader_options, o["quiet"], o["json_output"], run.start)


def fit_stack(run, tagger, progress, checkpoint):
    from structperc.ensembles.stacking import stack_fit_file

    o = run.options
    return stack_fit_file(tagger, o["train_file"], o["stack"], o["stack_folds"], seed=o["seed"], dev=o["dev"],
                          progress=progress, callback=progress.epoch_done, fold_progress=progress.fold_done,
                          **run.reader_options)


def fit_semi(run, tagger, progress, checkpoint):
    from structperc.ensembles.semisupervised import semi_fit_file

    o = run.options
    return semi_fit_file(tagger, o["train_file"], o["unlabeled"], o["semi"], o["rounds"] or ROUNDS, seed=o["seed"],
                         **run.reader_options)


FIT = {"plain": fit_plain, "continued": fit_continued, "bagging": fit_bagging, "stack": fit_stack, "semi": fit_semi}
