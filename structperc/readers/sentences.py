"""Sentence splitting of English raw text, over the words of ``tokenize.word_spans``.

A sentence ends after a word that ends one (``.``, ``!``, ``?``, a run of them, ``...``, an
emoticon), with any closing quotes and brackets that follow it, when space follows and the next word
does not go on with the sentence (punctuation that continues one: ``,`` ``;`` ``)``; after an
ellipsis, a lower-case word). A lower-case word after a full stop starts a sentence: web text often
starts them so, and on UD English EWT's development set this rule scored better than the rule that it
goes on. A line break always ends a sentence: a line is a paragraph. The tokeniser keeps the dot of a
title or abbreviation inside its word (``Mr.``, ``U.S.``), so such a dot ends nothing.
"""
from __future__ import annotations

import re
from typing import Sequence

from structperc.readers.tokenize import WordSpan

_ENDS = re.compile(r"[.!?]+|…|[.!?]*[:;=][-o^']?[)(DPp]|\^_*\^")
_CLOSES = re.compile(r"[)\]}\"'’”»]+|''")
_GOES_ON = re.compile(r"[,;)\]}%]")
# an ellipsis before a lower-case word goes on with the sentence
_ELLIPSIS = re.compile(r"\.{2,}|…")
_LOWER = re.compile(r"[a-z]")


def sentence_ends(text: str, words: Sequence[WordSpan]) -> list[int]:
    """The index after the last word of each sentence of ``words`` (spans of ``text``), increasing,
    the last one ``len(words)``."""
    ends = []
    n = len(words)
    i = 0
    while i < n:
        word = words[i]
        if _ENDS.fullmatch(text, word.start, word.end):
            j = i + 1
            while (j < n and words[j].start == words[j - 1].end
                   and _CLOSES.fullmatch(text, words[j].start, words[j].end)):
                j += 1
            goes_on = _GOES_ON.match(text, words[j].start) if j < n else None
            if not goes_on and j < n and _ELLIPSIS.fullmatch(text, word.start, word.end):
                goes_on = _LOWER.match(text, words[j].start)
            if j < n and words[j].start > words[j - 1].end and not goes_on:
                ends.append(j)
            i = j
            continue
        i += 1
    if n:
        ends.append(n)
    return ends
