"""Lexicon fields: template fields whose value comes from a word list given at training time.

A lexicon file holds ``word<TAB>value`` lines, or the word-cluster format
``bitstring<TAB>word<TAB>count`` (recognised by its three columns; the value is the bit string).
Blank lines and lines starting with ``#`` are skipped; the first entry of a word wins. A lexicon
named NAME gives the template fields

- ``NAME[k]``: the value of the word at offset k, ``NONE`` (``<none>``) for a word not listed;
- ``NAME.pK[k]``: the first K characters of that value (cluster-path prefixes, Koo et al. 2008;
  Turian et al. 2010), ``<none>`` for a word not listed.

With ``lower=True`` words are looked up lower-cased (and the entries lower-cased when read; the
first entry of a lower-cased form wins).

Gazetteers: an entry whose word has spaces is a multi-word entry. Over each sentence the longest
listed word sequence starting at a token is matched, left to right, matches not overlapping; the
tokens of a match of value v read ``B-v`` (first token) and ``I-v`` (the others), and tokens outside
any match read their single-word value (or ``<none>``). Prefix fields ``NAME.pK`` take the prefix of
the bare value (``B-``/``I-`` kept in front).

The fields are word attributes: single-word lexicons are computed once per distinct word and
gathered by word id, as the other attributes; only lexicons with multi-word entries scan the
sentences, and only at tokens whose word starts some multi-word entry. The model file stores the
whole lexicon of every name the templates use (UTF-8 ``word<TAB>value`` lines), so tagging does not
read the file again; the cost is about the size of the file.
"""
import re
from pathlib import Path

import numpy as np

from structperc.errors import ConfigError, InputFormatError

NONE = "<none>"
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.p(\d+))?$")


class Lexicon:
    """word -> value map read from a file (or given as a dict).

    entries : dict str -> str, single-word entries; phrases : dict tuple(str) -> str, multi-word ones
    """

    def __init__(self, entries, phrases=None, lower=False, source="<memory>"):
        self.lower = lower
        self.source = source
        self.entries = {}
        self.phrases = {}
        for word, value in entries.items():
            self.add(word, value)
        for words, value in (phrases or {}).items():
            self.add(" ".join(words), value)

    def add(self, word, value):
        """Add ``word`` (a phrase when it has spaces) with ``value``; the first value of a word stays."""
        key = word.lower() if self.lower else word
        if " " in key.strip():
            self.phrases.setdefault(tuple(key.split()), value)
        else:
            self.entries.setdefault(key.strip(), value)

    @classmethod
    def read(cls, path, lower=False, check=None):
        """Read a lexicon file; InputError with file:line for a malformed line. check : optional
        callable(value) -> None, or what is wrong with the value (then an error at its line)."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path}: no such lexicon file")
        lex = cls({}, lower=lower, source=str(path))
        try:
            path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            line = error.object.count(b"\n", 0, error.start) + 1
            raise InputFormatError(path, line, f"cannot decode byte {error.object[error.start:error.start + 1]!r} "
                                   f"as utf-8: a lexicon file is UTF-8 text") from None
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                line = line.rstrip("\n").rstrip("\r")
                if not line.strip() or line.startswith("#"):
                    continue
                cells = line.split("\t")
                if len(cells) == 2:
                    word, value = cells
                elif len(cells) == 3:
                    value, word = cells[0], cells[1]
                else:
                    raise InputFormatError(path, number, "expected word<TAB>value or bitstring<TAB>word<TAB>count, "
                                           f"found {len(cells)} column(s)")
                if not word.strip():
                    raise InputFormatError(path, number, "empty word")
                problem = None if check is None else check(value)
                if problem is not None:
                    raise InputFormatError(path, number, problem)
                lex.add(word, value)
        return lex

    def value(self, word):
        return self.entries.get(word.lower() if self.lower else word, NONE)

    # ------------------------------------------------------------------ storage
    def to_array(self):
        """uint8 array of UTF-8 ``word<TAB>value`` lines (multi-word entries with spaces)."""
        lines = [f"{w}\t{v}\n" for w, v in self.entries.items()]
        lines += [f"{' '.join(w)}\t{v}\n" for w, v in self.phrases.items()]
        return np.frombuffer("".join(lines).encode("utf-8"), dtype=np.uint8)

    @classmethod
    def from_array(cls, array, lower):
        lex = cls({}, lower=False, source="<model>")
        lex.lower = lower  # stored entries are already lower-cased
        for line in bytes(np.asarray(array, dtype=np.uint8)).decode("utf-8").splitlines():
            word, value = line.split("\t")
            lex.add(word, value)
        return lex


def split_field(field):
    """(lexicon name, prefix length or None) of a field name such as ``clusters.p4``; None when the
    name has no lexicon form."""
    m = _FIELD.match(field)
    if not m:
        return None
    return m.group(1), (int(m.group(2)) if m.group(2) else None)


def lexicon_fields(fields, lexicons):
    """The fields among `fields` that read a lexicon of `lexicons` (dict name -> Lexicon).

    ConfigError for a ``NAME.pK`` field whose lexicon was not given."""
    out = []
    for field in fields:
        parts = split_field(field)
        if parts is None:
            continue
        name, prefix = parts
        if name in lexicons:
            if prefix is not None and prefix < 1:
                raise ConfigError(f"lexicon field {field!r}: prefix length must be at least 1")
            out.append(field)
        elif prefix is not None:
            raise ConfigError(f"templates use the lexicon field {field!r} but no lexicon {name!r} was given "
                              f"(lexicons={name}=FILE)")
    return out


def attribute_function(field, lexicons):
    """word -> value of a single-word lexicon field."""
    name, prefix = split_field(field)
    lex = lexicons[name]
    entries, lower = lex.entries, lex.lower
    if prefix is None:
        if lower:
            return lambda w: entries.get(w.lower(), NONE)
        return lambda w: entries.get(w, NONE)
    if lower:
        return lambda w: entries.get(w.lower(), NONE)[:prefix] if w.lower() in entries else NONE
    return lambda w: entries[w][:prefix] if w in entries else NONE


def has_phrases(field, lexicons):
    return bool(lexicons[split_field(field)[0]].phrases)


def phrase_values(field, lexicons, words, sentence_offsets):
    """Per-token values (list of str) of a field over a lexicon with multi-word entries.

    words : list of str (n_tokens,); sentence_offsets : int (n_sentences + 1,)."""
    name, prefix = split_field(field)
    lex = lexicons[name]
    single = attribute_function(field, lexicons)
    keys = [w.lower() for w in words] if lex.lower else list(words)
    values = [single(w) for w in words]
    # candidate starts: tokens whose word begins some multi-word entry
    longest = {}
    for phrase in lex.phrases:
        longest[phrase[0]] = max(longest.get(phrase[0], 0), len(phrase))
    sentence_end = np.repeat(np.asarray(sentence_offsets[1:]), np.diff(sentence_offsets))
    next_free = 0
    for i in [t for t in range(len(words)) if keys[t] in longest]:
        if i < next_free:
            continue
        end = int(sentence_end[i])
        for length in range(min(longest[keys[i]], end - i), 1, -1):
            value = lex.phrases.get(tuple(keys[i:i + length]))
            if value is not None:
                value = value if prefix is None else value[:prefix]
                values[i] = "B-" + value
                for t in range(i + 1, i + length):
                    values[t] = "I-" + value
                next_free = i + length
                break
    return values


def state(lexicons, fields):
    """(arrays, metadata) storing the lexicons that `fields` use."""
    names = sorted({split_field(f)[0] for f in fields})
    arrays = {f"lexicon__{name}": lexicons[name].to_array() for name in names}
    meta = {name: {"lower": lexicons[name].lower, "source": lexicons[name].source} for name in names}
    return arrays, meta


def from_state(arrays, meta):
    return {name: Lexicon.from_array(arrays[f"lexicon__{name}"], info["lower"]) for name, info in meta.items()}


def read_lexicons(specs, lower=False):
    """dict name -> Lexicon from ``NAME=FILE`` strings (or a dict name -> path / Lexicon)."""
    if not specs:
        return {}
    items = specs.items() if isinstance(specs, dict) else [_split_spec(s) for s in specs]
    out = {}
    for name, source in items:
        if split_field(name) is None or split_field(name)[1] is not None:
            raise ConfigError(f"bad lexicon name {name!r}: use letters, digits and '_'")
        if name in out:
            raise ConfigError(f"lexicon {name!r} given twice")
        out[name] = source if isinstance(source, Lexicon) else Lexicon.read(source, lower=lower)
    return out


def _split_spec(spec):
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise ConfigError(f"bad lexicon {spec!r}: expected NAME=FILE")
    return name, path
