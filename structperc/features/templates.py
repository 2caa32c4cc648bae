"""Feature templates: the little language, the presets and the token attributes.

A template is ``field[offset]`` parts joined by ``|``, for example ``w[-1]|w[0]`` or
``pos[-2]|pos[-1]|pos[0]``. It fires at every token i and its value is the tuple of the named fields
at positions i + offset; positions outside the sentence read explicit boundary symbols. Three
modifiers:

- ``pair:`` before a template makes it fire on the label pair (y[i-1], y[i]) instead of y[i] alone
  (an observation-conditioned transition feature, as in Sha & Pereira's chunker);
- ``@rare`` after it makes it fire only on rare words (training count below a threshold), as
  Ratnaparkhi's prefix and suffix features do;
- ``?`` at the very end marks it optional: when the training input lacks one of the columns it
  reads, it is dropped instead of being an error (``pos[0]?`` uses a POS column where there is
  one). A model keeps the templates it was trained with; later inputs must have their columns.

``bias`` is the template with no parts: one feature that fires everywhere.

Fields are input columns by name (``w`` is short for ``word``), the word attributes in
``ATTRIBUTES``, computed once per distinct word, and the lexicon fields ``NAME[k]`` and
``NAME.pK[k]`` of the lexicons given to the encoder (``structperc.features.lexicon``).
"""
import re
from dataclasses import dataclass
from pathlib import Path

from structperc.errors import ConfigError


def word_shape(word):
    """Condensed shape: upper -> X, lower -> x, digit -> d, any other character kept; equal
    symbols in a row collapse to one ("Hello" -> "Xx", "1,000" -> "d,d", "U.S...." -> "X.X.")."""
    out = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def _flag(value):
    return "1" if value else "0"


def capitalisation(word):
    """The case pattern of a word's letters: "title" (Amsterdam, A), "upper" (NATO), "lower",
    "mixed" (iPhone, McDonald) or "none" (no letter: 1999, --)."""
    letters = [ch for ch in word if ch.isalpha()]
    if not letters:
        return "none"
    if all(ch.isupper() for ch in letters):
        return "upper" if len(letters) > 1 else "title"
    if all(ch.islower() for ch in letters):
        return "lower"
    if letters[0].isupper() and all(ch.islower() for ch in letters[1:]):
        return "title"
    return "mixed"


ATTRIBUTES = {
    "lower": str.lower,
    "shape": word_shape,
    "cap": capitalisation,
    "has_digit": lambda w: _flag(any(ch.isdigit() for ch in w)),
    "has_upper": lambda w: _flag(any(ch.isupper() for ch in w)),
    "has_hyphen": lambda w: _flag("-" in w),
}
for _k in range(1, 5):
    ATTRIBUTES[f"prefix{_k}"] = (lambda k: lambda w: w[:k])(_k)
    ATTRIBUTES[f"suffix{_k}"] = (lambda k: lambda w: w[-k:])(_k)

FIELD_ALIASES = {"w": "word"}

# a field is a column or attribute name, or a lexicon prefix field NAME.pK
_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.p\d+)?)\[\s*([+-]?\d+)\s*\]$")


@dataclass(frozen=True)
class Template:
    """One parsed template. ``parts`` holds (field, offset) pairs; an empty tuple is the bias."""

    parts: tuple
    pair: bool = False
    rare_only: bool = False
    optional: bool = False

    @property
    def fields(self):
        return {field for field, _ in self.parts}

    def __str__(self):
        body = "|".join(f"{f}[{o}]" for f, o in self.parts) or "bias"
        suffix = ("@rare" if self.rare_only else "") + ("?" if self.optional else "")
        return ("pair:" if self.pair else "") + body + suffix


def parse_template(text):
    """Parse one template line, e.g. ``pair:pos[0]``, ``suffix3[0]@rare`` or ``pos[-1]|pos[0]?``."""
    src = text.strip()
    optional = src.endswith("?")
    body = src[:-1].rstrip() if optional else src
    pair = body.startswith("pair:")
    if pair:
        body = body[len("pair:"):].strip()
    rare_only = body.endswith("@rare")
    if rare_only:
        body = body[: -len("@rare")].strip()
    if body == "bias":
        if optional:
            raise ConfigError(f"bad template {src!r}: bias reads no column and cannot be optional")
        return Template((), pair, rare_only)
    parts = []
    for piece in body.split("|"):
        m = _PART.match(piece.strip())
        if not m:
            raise ConfigError(f"bad template {src!r}: expected field[offset] parts joined by '|', got {piece!r}")
        field = FIELD_ALIASES.get(m.group(1), m.group(1))
        parts.append((field, int(m.group(2))))
    return Template(tuple(parts), pair, rare_only, optional)


def _window(field, lo, hi):
    return [f"{field}[{o}]" for o in range(lo, hi + 1)]


# CRFsuite's chunking example: words and POS in a +-2 window, word bigrams around the current
# token, POS bigrams and trigrams, and a bias.
_CHUNK = (
    _window("w", -2, 2)
    + ["w[-1]|w[0]", "w[0]|w[1]"]
    + _window("pos", -2, 2)
    + ["pos[-2]|pos[-1]", "pos[-1]|pos[0]", "pos[0]|pos[1]", "pos[1]|pos[2]"]
    + ["pos[-2]|pos[-1]|pos[0]", "pos[-1]|pos[0]|pos[1]", "pos[0]|pos[1]|pos[2]"]
    + ["bias"]
)

# Ratnaparkhi (1996) as used by Collins (2002): the word and its +-2 neighbours; for rare words,
# prefixes and suffixes up to length 4 and three spelling flags. The tag bigram and trigram contexts
# are the model's transition weights (first and second order).
_POS = (
    _window("w", -2, 2)
    + [f"prefix{k}[0]@rare" for k in range(1, 5)]
    + [f"suffix{k}[0]@rare" for k in range(1, 5)]
    + ["has_digit[0]@rare", "has_upper[0]@rare", "has_hyphen[0]@rare"]
    + ["bias"]
)

PRESETS = {
    "chunk": _CHUNK,
    # Sha & Pereira's (2003) NP chunker: every `chunk` template both on y[i] and on the label pair
    # (y[i-1], y[i]); the pair bias is the transition block itself.
    "chunk-pair": _CHUNK + [f"pair:{t}" for t in _CHUNK if t != "bias"],
    "pos": _POS,
    # `pos` plus lower-cased neighbours, affixes and shapes of every word, word bigrams and the
    # neighbours' suffixes.
    "pos-rich": (
        _POS
        + _window("lower", -1, 1)
        + [f"suffix{k}[0]" for k in range(1, 5)] + [f"prefix{k}[0]" for k in range(1, 4)]
        + ["shape[0]", "shape[-1]|shape[0]|shape[1]", "w[-1]|w[0]", "w[0]|w[1]", "suffix3[-1]", "suffix3[1]"]
    ),
}
# Named entities (chosen on CoNLL-2002 Dutch testa by the mean F1 over three seeds, since one seed moves
# it by about half a point: experiments/ner_preset.py, results/ner_preset.md, where no one-change variant
# tried, templates added or removed, raises the mean by more than 0.2): the words of a +-2 window as they
# are and of a +-3 window lower-cased, word and lower-case bigrams, affixes up to 4, the shapes of the +-1
# window and their conjunctions, capitalisation patterns conditioning the label transition (a capitalised
# word after a lower-case one, a sentence start), and, where the input has one, the POS column (its
# templates are optional: a file without POS drops them).
NER = (
    _window("w", -2, 2) + _window("lower", -3, 3)
    + ["w[-1]|w[0]", "w[0]|w[1]", "lower[-2]|lower[-1]", "lower[1]|lower[2]"]
    + [f"prefix{k}[0]" for k in range(1, 5)] + [f"suffix{k}[0]" for k in range(1, 5)]
    + _window("shape", -1, 1) + ["shape[-1]|shape[0]", "shape[0]|shape[1]", "shape[-1]|shape[0]|shape[1]"]
    + ["has_digit[0]", "has_hyphen[0]", "pair:cap[0]", "pair:cap[-1]|cap[0]"]
    + [f"{t}?" for t in _window("pos", -2, 2) + ["pos[-1]|pos[0]", "pos[0]|pos[1]", "pos[-1]|pos[0]|pos[1]",
                                                 "w[0]|pos[0]"]]
    + ["bias"]
)
PRESETS["ner"] = NER

# `pos-rich` plus how the raw text glues each token to its neighbours (CoNLL-U input only: its
# space_after column). Spacing tells a hyphen inside a word (HYPH) from a dash, and an opening
# quote from a closing one.
PRESETS["pos-ud"] = PRESETS["pos-rich"] + [
    "space_after[-1]|space_after[0]",
    "space_after[-1]|space_after[0]|w[0]",
    "space_after[-2]|space_after[-1]|space_after[0]|space_after[1]",
]

# Brown-cluster path prefixes of lengths 4, 6, 10 and 20 of the words at offsets -1, 0 and +1
# (Turian et al. 2010), from the lexicon ``clusters`` (``--lexicon clusters=paths.txt``); the
# tagger adds prefixes 4 and 6 at offsets -2 and +2 (the +-2 window of Ratinov & Roth 2009) and
# works best with the words looked up lower-cased (``--lexicon-lower``). Chosen on EWT dev and a
# held-out tenth of CoNLL-2000 train (experiments/results/semisupervised.md): cluster bigrams,
# prefix-suffix and prefix-shape conjunctions, POS-prefix conjunctions and the whole window with
# every prefix did not help.
_CLUSTERS = [f"clusters.p{k}[{o}]" for o in (-1, 0, 1) for k in (4, 6, 10, 20)]
PRESETS["pos-clusters"] = PRESETS["pos-rich"] + _CLUSTERS + [f"clusters.p{k}[{o}]" for o in (-2, 2) for k in (4, 6)]
# on `chunk-pair`, whose pair templates gained 0.15 F1 with the clusters on a held-out tenth of
# CoNLL-2000 train (experiments/results/semisupervised.md)
PRESETS["chunk-clusters"] = PRESETS["chunk-pair"] + _CLUSTERS

# Stacking (``structperc.ensembles.stacking``): the column ``stack`` holds a base model's predicted label.
# Its neighbours and the current word conjoined with it; ``chunk-stack`` and ``pos-stack`` add them
# to ``chunk`` and ``pos``.
STACK_COLUMN = "stack"
STACK_TEMPLATES = [f"{STACK_COLUMN}[-1]", f"{STACK_COLUMN}[0]", f"{STACK_COLUMN}[1]", f"{STACK_COLUMN}[0]|w[0]"]
PRESETS["chunk-stack"] = PRESETS["chunk"] + STACK_TEMPLATES
PRESETS["pos-stack"] = PRESETS["pos"] + STACK_TEMPLATES


def columns_read(templates):
    """The input columns that parsed templates read: their fields that are neither word attributes nor
    lexicon prefix fields (``NAME.pK``), plus ``word`` when an attribute or an ``@rare`` template reads it.
    A lexicon field ``NAME[k]`` counts as the column NAME (it is one when no lexicon NAME is given)."""
    columns = set()
    for template in templates:
        for field, _ in template.parts:
            if field in ATTRIBUTES or "." in field:
                columns.add("word")
            else:
                columns.add(field)
        if template.rare_only:
            columns.add("word")
    return columns


def presets_over(columns):
    """The presets (names, in order) whose templates read only the given columns and no lexicon."""
    fitting = []
    for name, lines in PRESETS.items():
        parsed = [parse_template(line) for line in lines]
        if any("." in field for t in parsed for field in t.fields):
            continue
        if columns_read(parsed) <= set(columns):
            fitting.append(name)
    return fitting


def column_error(path, needed, columns, label, leaking=None, raw=False):
    """The ConfigError of templates that read the label column (``leaking``: the first template that
    does) or a column the input lacks. needed : the columns the templates read; columns : the
    input's, the label column ``label`` among them. It names the columns the templates need, the
    label column, and the presets that read only the other columns. raw : the input is raw text,
    whose columns the user never named: the message says what raw text lacks and how to give it."""
    others = [name for name in columns if name != label]
    fitting = presets_over(others)
    presets = f"; presets over the other columns: {', '.join(fitting)}" if fitting else ""
    if leaking is not None:
        return ConfigError(
            f"{path}: template {leaking!r} reads column {label!r}, the label column: a feature may "
            f"not read the label it predicts (the input's other columns: {', '.join(others) or 'none'}{presets})")
    missing = sorted(set(needed) - set(columns))
    if raw:
        return ConfigError(
            f"{path}: this model reads {', '.join(missing)} beside each word, which raw text does not have "
            f"(it gives the words and their spacing only): tag the text with a model that gives "
            f"{', '.join(missing)} first and pipe its output, a word and its tag a line, into this one "
            f"(structperc tag TEXT --model en-ewt-xpos | structperc tag - --model MODEL), as the named "
            f"chunker en-np does")
    has = ", ".join(others) or "no other column"
    has += f", and the label column {label}" if label is not None else ""
    return ConfigError(
        f"{path}: templates use column(s) {', '.join(missing)}, which the input lacks: it has {has} "
        f"(templates need {', '.join(sorted(needed))}{presets}; or give a lexicon for a field NAME)")


def load_templates(spec, columns=None, derived=()):
    """Templates from a preset name, a template file, or a list of template strings.

    Template files hold one template per line; ``#`` starts a comment.
    columns : None, or the column names of the training input: the optional templates (``?``)
        that read a field which is neither one of them, a word attribute nor in ``derived`` (the
        lexicon fields) are dropped.
    """
    if isinstance(spec, (list, tuple)):
        lines = list(spec)
    elif spec in PRESETS:
        lines = PRESETS[spec]
    elif Path(spec).is_file():
        lines = []
        try:
            text = Path(spec).read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"{spec}: a template file is UTF-8 text; cannot decode byte "
                              f"{error.object[error.start:error.start + 1]!r} at byte {error.start}") from None
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                lines.append(line)
    else:
        raise ConfigError(
            f"unknown templates {spec!r}: give a preset ({', '.join(sorted(PRESETS))}) or a template file"
        )
    templates = [parse_template(line) for line in lines]
    if columns is not None:
        available = set(columns) | set(ATTRIBUTES) | set(derived)
        templates = [t for t in templates if not t.optional or t.fields <= available]
    if not templates:
        raise ConfigError(f"templates {spec!r} define no template")
    return templates
