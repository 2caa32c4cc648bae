"""Word clusters for the reranker's ``cluster`` family: the Brown paths of every entity's words and of
the words just around it, cut at the prefix lengths of Ratinov and Roth (2009), 4, 6, 10 and 20.

The paths are those ``structperc clusters`` writes (``bitstring<TAB>word<TAB>count`` lines, read by
``features.lexicon.Lexicon``, the reader of the tagger's ``--lexicon``), or a dict word -> bit string.
For an entity of type T over words[first..last] of its sentence, with p_L(w) the first L bits of the
path of w (all of it when it is shorter; ``NO_PATH`` for a word without one), and L in
``PREFIX_LENGTHS``:

- ``ecL=T:p_L(w)`` for every word w of the entity (a prefix that two of its words share counts 2);
- ``ecbL=T:p_L(w)`` of the word just before the entity (``<s>`` at the sentence's start) and
  ``ecaL=T:p_L(w)`` of the word just after it (``</s>`` at its end).

A fitted model keeps the whole map in its file (``arrays``), so that tagging reads no clusters file.
"""
from dataclasses import dataclass, field
from pathlib import Path

from structperc.errors import ConfigError
from structperc.features.lexicon import NONE, Lexicon

PREFIX_LENGTHS = (4, 6, 10, 20)
NO_PATH = NONE  # the prefix of a word without a path, at every length
ARRAY = "clusters"  # the model file's array: UTF-8 ``word<TAB>path`` lines (``Lexicon.to_array``)


def _not_a_path(value):
    """What is wrong with a cluster path (a string of 0 and 1), or None."""
    if value.strip("01"):
        return f"expected bitstring<TAB>word<TAB>count lines: the path {value!r} is not a string of 0 and 1"
    return None


@dataclass
class ClusterPaths:
    """word -> Brown path (a bit string) and the cluster strings of entities."""

    paths: dict
    _prefixes: dict = field(default_factory=dict, repr=False, compare=False)  # word -> its prefixes, made once

    @classmethod
    def of(cls, source):
        """ClusterPaths of a paths file (str or Path), a dict word -> bit string, or a ClusterPaths."""
        if isinstance(source, ClusterPaths):
            return source
        if isinstance(source, (str, Path)):
            return cls.read(source)
        if not isinstance(source, dict):
            raise ConfigError(f"clusters must be a paths file or a dict word -> bit string, got {source!r}")
        for word, path in source.items():
            if not isinstance(word, str) or not word or any(c.isspace() for c in word):
                raise ConfigError(f"clusters: {word!r} is not a word (a non-empty string without whitespace)")
            if not isinstance(path, str) or _not_a_path(path):
                raise ConfigError(f"clusters: word {word!r} has the path {path!r}; a path is a string of 0 and 1")
        return cls(dict(source))

    @classmethod
    def read(cls, path):
        """The paths of a ``structperc clusters`` file; InputFormatError naming file:line."""
        if not Path(path).is_file():
            raise ConfigError(f"{path}: no such clusters file")
        return cls(Lexicon.read(path, check=_not_a_path).entries)

    def arrays(self):
        """The map as arrays of a model file."""
        return {ARRAY: Lexicon(self.paths).to_array()}

    @classmethod
    def from_arrays(cls, arrays):
        """The ClusterPaths of a model file's arrays, or None where it holds none."""
        if ARRAY not in arrays:
            return None
        return cls(Lexicon.from_array(arrays[ARRAY], lower=False).entries)

    def prefixes(self, word):
        """The prefixes of ``word``'s path at ``PREFIX_LENGTHS`` (``NO_PATH`` each without one)."""
        found = self._prefixes.get(word)
        if found is None:
            path = self.paths.get(word)
            found = self._prefixes[word] = tuple(NO_PATH if path is None else path[:n] for n in PREFIX_LENGTHS)
        return found

    def strings(self, words, kind, first, last):
        """The feature strings of the entity words[first..last] of type ``kind``."""
        out = []
        for word in words[first: last + 1]:
            out += [f"ec{n}={kind}:{p}" for n, p in zip(PREFIX_LENGTHS, self.prefixes(word))]
        before = ("<s>",) * len(PREFIX_LENGTHS) if first == 0 else self.prefixes(words[first - 1])
        after = ("</s>",) * len(PREFIX_LENGTHS) if last + 1 >= len(words) else self.prefixes(words[last + 1])
        out += [f"ecb{n}={kind}:{p}" for n, p in zip(PREFIX_LENGTHS, before)]
        out += [f"eca{n}={kind}:{p}" for n, p in zip(PREFIX_LENGTHS, after)]
        return out
