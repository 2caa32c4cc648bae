"""Raw text: one sentence per line, split into tokens by `tokenize`; blank lines are skipped.

The format has one column, ``word``, and no label: it is input to tag, never training data.
"""

from __future__ import annotations

import re

from structperc.errors import ConfigError
from structperc.readers.base import Parser

# Penn Treebank / UD style, for raw English text. Applied by `re.findall` to a line, in order:
#   URLs, e-mail addresses                        http://x.org/a?b  a.b@c.com
#   abbreviations with inner dots, titles         U.S.  e.g.  Mr.  Dr.  etc.
#   numbers with inner separators                 1,000  3.5  12/25/2005  3:30
#   a word before n't, then n't                   do n't  ca n't  wo n't  is n't
#   can|not, gon|na, wan|na, got|ta               as PTB and UD split them
#   clitics                                       's 're 'll 've 'd 'm (any case, ' or ’)
#   words, with inner hyphens and apostrophes     well-known  o'clock  (not it's: it 's)
#   runs of dots, dashes, paired quotes           ...  --  ``  ''
#   any other non-space character alone           , . ; : ! ? ( ) " ' $ % ...
_CLITIC = r"['’](?i:s|re|ll|ve|d|m)(?!\w)"
_TOKEN = re.compile(
    r"(?:https?://|www\.)\S+[^\s.,;:!?)\]}'\"]"
    r"|[\w.+-]+@\w+(?:\.\w+)+"
    r"|(?:[A-Za-z]\.){2,}"
    r"|(?<!\w)(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|Inc|Corp|Co|Ltd|Mt|Jan|Feb|Aug|Sept|Oct|Nov|Dec)\."
    r"|\d+(?:[.,:/]\d+)+"
    r"|\w+(?=(?i:n['’]t)(?!\w))"
    r"|(?i:n['’]t)(?!\w)"
    r"|(?i:can)(?=(?i:not)(?!\w))"
    r"|(?i:gon|wan)(?=(?i:na)(?!\w))"
    r"|(?i:got)(?=(?i:ta)(?!\w))"
    r"|" + _CLITIC +
    r"|\w+(?:-\w+|['’](?!(?i:s|re|ll|ve|d|m)(?!\w))\w+)*"
    r"|\.{2,}|-{2,}|``|''"
    r"|\S"
)


def tokenize(text: str) -> list[str]:
    """Split a line of raw English text into Penn Treebank / UD style tokens.

    >>> tokenize("I don't think it's U.S.-made, Mr. Smith...")
    ['I', 'do', "n't", 'think', 'it', "'s", 'U.S.', '-', 'made', ',', 'Mr.', 'Smith', '...']
    """
    return _TOKEN.findall(text)


class RawParser(Parser):
    """Every non-blank line is a sentence, its tokens those of `tokenize`."""

    format = "raw"
    extensions = (".raw",)
    title = "raw text"
    fixed_columns = ["word"]
    default_label = None
    keeps_lines = False

    def __init__(self, path, builder, columns, label, require_label, options):
        if require_label:
            raise ConfigError(f"{path}: raw text has no labels, so it cannot be training or test data; "
                              f"it can only be tagged (a labelled corpus has one token per line, its label last)")
        if label is not None:
            raise ConfigError(f"raw text has no label column, got label {label!r}")
        super().__init__(path, builder, columns, label, require_label, options)

    def feed(self, first_line: int, lines: list[str]) -> None:
        builder = self.builder
        (words,) = builder.cols
        line_numbers = builder.line_numbers
        findall = _TOKEN.findall
        for offset, line in enumerate(lines):
            tokens = findall(line)
            if tokens:
                words.extend(tokens)
                line_numbers.extend([first_line + offset] * len(tokens))
                builder.close_sentence()
