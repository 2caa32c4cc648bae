"""Options shared by the commands, each declared once, and the few helpers every command uses.

The shared options are ``Annotated`` aliases: ``model: ModelFile`` in a command's signature gives it
``--model/-m`` with the one help text. Choices are Enums built from the library's registries, so
``--help`` lists the values and a wrong one is a usage error. ``FLAGS`` maps the library's
parameter names to this command line's flags, for the library's error messages.
"""
import enum
import re
from pathlib import Path
from typing import Annotated, Optional

import typer

from structperc.features.templates import PRESETS
from structperc.readers.registry import FORMATS


# click's UsageError, found through typer's public BadParameter (typer vendors its own copy of click)
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def choices(name, values):
    """An Enum (str-valued) of ``values``: typer shows them in ``--help`` and refuses any other."""
    return enum.Enum(name, {value: value for value in values}, type=str)


def value_of(choice):
    """The plain string of an Enum choice (None stays None)."""
    return choice.value if isinstance(choice, enum.Enum) else choice


Format = choices("Format", FORMATS)

# ---------------------------------------------------------------------------------------- shared options
ModelFile = Annotated[Path, typer.Option("--model", "-m", help="Model file (.npz), or a model's name "
                                                               "(structperc models list), built on first use.")]
Output = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here (atomically) instead of stdout.")]
Mirror = Annotated[Optional[Path], typer.Option(
    "--mirror", help="A folder holding the corpora (as structperc data fetch --mirror): a named model not "
                     "built yet is built from the copy there, not downloaded (default $STRUCTPERC_MIRROR).")]
InputFormat = Annotated[Optional[Format], typer.Option(
    "--format", help="Input format (default: the model's, or from the extension).")]
Encoding = Annotated[Optional[str], typer.Option(
    "--encoding", help="Input encoding (default: the model's training encoding, else utf-8).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")]
Json = Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout.")]
TagSep = Annotated[Optional[str], typer.Option("--tag-sep", help="Word/tag separator of --format tagged (default /).")]


def check_json(json_output, output, what):
    """--json prints on stdout, so the data itself must go to --output."""
    if json_output and output is None:
        raise typer.BadParameter(f"prints a summary on stdout: give --output for {what}", param_hint="'--json'")


def split_list(value):
    """'a, b,,c' -> ['a', 'b', 'c']; None or '' -> None."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


# ---------------------------------------------------------------------------------------- renamed options
def deprecated(old, new):
    """One line on stderr: ``old`` still works for now, ``new`` is its name."""
    typer.echo(f"structperc: warning: {old} is deprecated; use {new}", err=True)


def renamed(value, old_value, old, new, default=None):
    """The value of option ``new`` given either as ``new`` (``value``) or by its deprecated name
    ``old`` (``old_value``, with a deprecation line); both at once is a usage error."""
    if old_value is None or old_value is False:
        return default if value is None else value
    if value is not None:
        raise typer.BadParameter(f"is the deprecated name of {new}: give only {new}", param_hint=f"'{old}'")
    deprecated(old, new)
    return old_value


def hidden(name, *more):
    """A deprecated spelling kept working: not shown in --help."""
    return typer.Option(None, name, *more, hidden=True)


# ---------------------------------------------------------------------------------------- templates
def template_spec(value):
    """``--templates``: a preset name or a template file."""
    if value is None or value in PRESETS or Path(value).is_file():
        return value
    raise typer.BadParameter(f"{value!r} is neither a preset ({', '.join(PRESETS)}) nor a template file")


TEMPLATES_METAVAR = "[" + "|".join(PRESETS) + "|FILE]"

# ---------------------------------------------------------------------------------------- library parameters
# the library's errors name its parameters (``tag_dict``, ``mix='errors'``); on the command line they
# read as the flags. A name with an underscore (or in BARE) is mapped wherever it stands; a plain word
# only as name=value, so that prose ("the scheduler's workers") is left alone.
FLAGS = {
    "tag_dict": "--tag-dict", "dense_count": "--dense-count", "min_count": "--min-count",
    "n_clusters": "--n-clusters", "force_column": "--force-column", "ptb_root": "--ptb-root",
    "lexicon_lower": "--lexicon-lower", "stack_folds": "--stack-folds", "rare_threshold": "--rare-threshold",
    "hash_bits": "--hash-bits", "missing_label": "--missing-label", "unlabeled_paths": "--unlabeled",
    "workers": "--workers", "scheduler": "--scheduler", "mix": "--mix", "gold": "--gold", "weights": "--weights",
    "encoding": "--encoding", "lexicons": "--lexicon", "columns": "--columns", "format": "--format",
    "order": "--order", "constrain": "--constrain", "templates": "--templates", "method": "--semi",
    "mirror": "--mirror", "dataset": "--only",
}
BARE = {"lexicons"}
# boolean parameters whose flag depends on the value
BOOLEAN_FLAGS = {"all_pairs": ("--gold-pairs", "--all-pairs"), "average": ("--no-average", "--average")}

_PARAMETER = re.compile(r"(?<![\w./-])([a-z][a-z0-9_]*)(?:=('?)([^\s',;)]*)\2)?(?![\w/-])")


def flags_in(message):
    """``message`` of a library error with its parameter names written as this command line's flags:
    'tag_dict needs ...' -> '--tag-dict needs ...', "mix='errors'" -> '--mix errors'."""
    def flag(match):
        name, value = match.group(1), match.group(3)
        if name in BOOLEAN_FLAGS and value in ("True", "False"):
            return BOOLEAN_FLAGS[name][value == "True"]
        if name not in FLAGS or (value is None and "_" not in name and name not in BARE):
            return match.group(0)
        return FLAGS[name] if not value else f"{FLAGS[name]} {value}"

    return _PARAMETER.sub(flag, message)


# ---------------------------------------------------------------------------------------- option tables
def given(value):
    """Whether an option was given: None, False and [] mean not."""
    return value is not None and value is not False and value != []


def flag_name(parameter):
    """--flag-name of a command's parameter name."""
    return "--" + parameter.replace("_", "-")


def check_applies(mode, mode_names, applies, options, default=None):
    """Usage error for the first option of ``options`` (parameter name -> value) given although
    ``applies`` (parameter -> the modes it applies to) does not list ``mode``.

    mode_names : mode -> how the message names it (e.g. "--semi"); default : the mode of a command
    that names none (its message says only where the option applies)."""
    for name, modes in applies.items():
        if given(options.get(name)) and mode not in modes:
            where = " or ".join(mode_names[m] for m in modes)
            if mode == default:
                raise UsageError(f"{flag_name(name)} applies only with {where}")
            raise UsageError(f"{mode_names[mode]} does not take {flag_name(name)} (it applies only with {where})")


def check_requires(requires, options):
    """Usage error for an option given without the one it needs (``requires``: parameter -> needed)."""
    for name, needed in requires.items():
        if given(options.get(name)) and not given(options.get(needed)):
            raise UsageError(f"{flag_name(name)} applies only with {flag_name(needed)}")


def plural(count, word, plural_word=None):
    """'1 sentence', '2 sentences' (with thousands separators)."""
    return f"{count:,} {word if count == 1 else (plural_word or word + 's')}"
