"""English tokenisation of raw text into Penn Treebank / Universal Dependencies words, with offsets.

``word_spans(text)`` gives each word's ``[start, end)`` character span in ``text`` and whether the
word is a clitic written against the word before it (``do|n't``, ``Google|'s``, ``can|not``,
``gon|na``): UD writes such a pair as one multiword token of two words. The rules follow UD English
EWT's tokenisation; they were chosen on its training and development sets (``TOKENIZER`` names this
version and is recorded in every model that tags raw text, so that a model's raw-text scores say
which rules gave them).
"""
from __future__ import annotations

import re
from typing import NamedTuple

TOKENIZER = "structperc-en-3"

# prefixes written with a hyphen that UD English keeps in one token (e-mail, non-profit, re-read);
# other hyphenated words are split (al - Sadr, well - known), as in EWT
_KEPT_PREFIXES = ("e|non|pre|post|anti|re|mid|co|over|pro|multi|ex|sub|semi|inter|un|cross|mis|bi|tri|counter|neo"
                  "|vice|psycho")
# titles keep their dot before a capital or a digit; the other abbreviations only where no sentence ends
_TITLES = "Mr|Mrs|Ms|Dr|Prof|St|Ft|Jr|Sr|Gen|Gov|Sen|Rep|Capt|Lt|Col|Sgt|Rev|Mt|No|vs|eg|Attn"
_ABBREVIATIONS = ("etc|Inc|Corp|Co|Ltd|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Ave|Blvd|approx|dept|est"
                  "|fig|e\\.g|i\\.e|a\\.m|p\\.m|St|Jr|Sr|vs|eg|ext|esp|hrs|yrs|mins|lbs?|oz|ft"
                  "|Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun")
_FILE_ENDINGS = "com|org|net|edu|gov|pdf|doc|docx|htm|html|txt|xls|xlsx|ppt|jpg|jpeg|gif|png|zip|exe|mp3|de|uk|ca"
_CLITIC = r"['’`](?i:s|re|ll|ve|d|m)(?!\w)"
# a number and what ends it as a word: no letter, digit, dot, comma, colon, slash or hyphen goes on with it
_NUMBER = r"\d+(?:[.:]\d+)?"
_NUMBER_ENDS = r"(?![\w.,:/-]*\w)"
# letters written against a number that are a word of their own (5 pm, 65 k, 35 mm); not an ordinal's
# or a plural's ending (21st, 1990s), nor an upper-case code (83N, 3D) other than AM, PM, K, M, B
_UNIT = r"(?!(?i:st|nd|rd|th|s)\b)(?:[a-z]+|(?i:am|pm)|[KMB])\b"

# words that EWT writes without their apostrophe and splits all the same: do|nt, that|s
_NT_BASES = ("do", "does", "did", "is", "are", "was", "were", "have", "has", "had", "could", "would", "should", "ca",
             "wo", "ai")
_S_BASES = ("that", "what", "let", "there", "here", "who")

# Applied by ``re.finditer`` to a text, in order (the first alternative that matches wins):
#   URLs, e-mail addresses                        http://x.org/a?b  a.b@c.com  mailto:a.b@c.com
#   file and host names, file endings; b/c, w/    paper.pdf  .doc  irc.example.net  alt.animals.open-forum
#   abbreviations with inner dots, initials       U.S.  e.g.  J. Smith
#   titles, abbreviations where no sentence ends  Mr.  Dr.  Ft. Worth  etc.,  vs. that  Wed. 6/14
#   letters joined by &, hashtags                 AT&T  P&L  p&l  #audiobooks  (not # 1)
#   a phone number's country code                 +1  +44
#   a range of two numbers, split in three        5 - 10  1969 - 1970  5:00 - 8:30  (not 345-9945, 77415-0027)
#   numbers with inner separators, phone numbers  1,000  3.5  12/25/2005  3:30  713-853-3989
#   a number before a unit written against it     5 pm  65 k  35 mm  (not 21st  1990s  3D)
#   a number's plural with 's, a year's 'NN       80's  1590's  '72  '60s
#   emoticons                                     :)  :-(  ;)  :P  ^_^
#   a word before n't, then n't                   do n't  ca n't  wo n't  is n't
#   can|not, gon|na, wan|na, got|ta, out|ta, du|n|no   as PTB and UD split them
#   contractions without apostrophe               do|nt  ca|nt  i|m  i|ve  that|s  a|lot  (as EWT splits them)
#   clitics                                       's 're 'll 've 'd 'm (any case, ' or ’)
#   words, with kept prefixes and apostrophes     e-mail  non-profit  o'clock  (not it's: it 's)
#   an ellipsis before ? or !, then the rest      ... ?  .... !
#   runs of one punctuation mark, !? mixes, -=    ...  --  !!!  ***  ?!  .?  << >>  ----==
#   double quotes written as two marks            ``  ''  ‘’  ’’
#   any other non-space character alone           , . ; : ! ? ( ) " ' $ % - ...
_TOKEN = re.compile(
    r"(?:https?://|www\.)\S+[^\s.,;:!?)\]}'\"]"
    r"|(?:mailto:)?[\w.+-]+@\w+(?:[.-]\w+)*"
    r"|\w+(?:[.-]\w+)*\.(?i:" + _FILE_ENDINGS + r")\b"
    r"|(?<![\w.])\.(?i:" + _FILE_ENDINGS + r")\b"
    r"|[A-Za-z]\w*(?:\.[A-Za-z]\w*(?:-\w+)*){2,}(?=[\s,;:)]|$)"
    r"|(?<!\w)(?i:b/c|w/o|w/)(?!\w)"
    r"|(?:[A-Za-z]\.){2,}"
    r"|(?<!\w)[A-Z]\.(?=\s+[A-Z])"
    r"|(?<!\w)(?:" + _TITLES + r")\.(?=\s+[A-Z0-9])"
    r"|(?<!\w)(?:" + _ABBREVIATIONS + r")\.(?=\s+[a-z0-9(]|[,;:)])"
    r"|(?<![\w&])(?:[A-Z]+&[A-Z]+|[a-z]&[a-z])(?![\w&])"
    r"|(?<![\w#])#[A-Za-z]\w*"
    r"|(?<![\w+])\+\d+"
    r"|(?<![\w.,:/-])(?!(?:\d{1,3}|\d{5,})-\d{4}\b)" + _NUMBER + r"(?=-" + _NUMBER + _NUMBER_ENDS + r")"
    r"|\d+(?:[.,:/-]\d+)+"
    r"|(?<!\w)\d+(?=" + _UNIT + r")"
    r"|(?<!\w)\d+['’]s(?!\w)|(?<![\w'’])['’]\d\ds?(?!\w)"
    r"|(?<![\w)])[:;=][-o^']?[)(\]\[DPpO/\\|*](?![\w(])"
    r"|\^_*\^"
    r"|\w+(?=(?i:n['’]t)(?!\w))"
    r"|(?i:n['’]t)(?!\w)"
    r"|(?i:can)(?=(?i:not)(?!\w))"
    r"|(?i:gon|wan)(?=(?i:na)(?!\w))"
    r"|(?i:got|out)(?=(?i:ta)(?!\w))"
    r"|(?<!\w)(?i:du)(?=(?i:nno)(?!\w))|(?<=(?i:du))(?i:n)(?=(?i:no)(?!\w))"
    r"|(?<!\w)(?i:" + "|".join(_NT_BASES) + r")(?=(?i:nt)(?!\w))"
    r"|(?<!\w)(?i:i)(?=(?i:m|ve)(?!\w))|(?<!\w)(?i:" + "|".join(_S_BASES) + r")(?=s(?!\w))|(?<!\w)(?i:a)(?=lot(?!\w))"
    r"|" + _CLITIC +
    r"|(?<!\w)(?i:" + _KEPT_PREFIXES + r")-\w+(?:['’](?!(?i:s|re|ll|ve|d|m)(?!\w))\w+)*"
    r"|\w+(?:['’](?!(?i:s|re|ll|ve|d|m)(?!\w))\w+)*"
    r"|\.{3,}(?=[!?])|[.!?]{2,}|[-=]{2,}|([*_~#<>+$])\1+|``|''|[‘’]{2}"
    r"|\S"
)
# a word that UD writes in one multiword token with the word before it when nothing separates them
# (``joins_previous``: only after a letter; 10 m, 5 pm are two tokens)
_JOINS = re.compile(r"(?i:n['’]t|['’`](?:s|re|ll|ve|d|m)|not|na|ta|nt|s|m|ve|n|no)")


class WordSpan(NamedTuple):
    """A word's ``[start, end)`` characters in the text; joined : a clitic against the word before
    it (one multiword token with it)."""
    start: int
    end: int
    joined: bool


def joins_previous(word: str, previous: str = "") -> bool:
    """Whether ``word``, written against the word ``previous`` before it, forms one multiword token
    with it: only after a letter (``10|m`` and ``'|n`` are two tokens each; "" : not known)."""
    return _JOINS.fullmatch(word) is not None and (not previous or previous[-1].isalpha())


def word_spans(text: str) -> list[WordSpan]:
    """The words of raw English text as spans (see the module docstring).

    >>> [(s.start, s.end, s.joined) for s in word_spans("I don't")]
    [(0, 1, False), (2, 4, False), (4, 7, True)]
    """
    bounds = word_bounds(text)
    return [WordSpan(start, end, joined) for (start, end), joined in zip(bounds, joined_words(text, bounds))]


# The run of letters that ``_TOKEN`` splits (all its other splits need a character that is not a letter)
_SPLIT_LETTERS = frozenset(("cannot", "gonna", "wanna", "gotta", "outta", "dunno", "im", "ive", "alot",
                            *(base + "nt" for base in _NT_BASES), *(base + "s" for base in _S_BASES)))
# the words before a dot that ``_TOKEN`` may keep with it (titles, abbreviations; initials are one letter)
_BEFORE_DOT = frozenset(form for forms in (_TITLES, _ABBREVIATIONS)
                        for form in forms.replace("lbs?", "lb|lbs").split("|") if form.isalpha())
_AFTER_WORD = frozenset(',.;:!?)"')
_CHUNK = re.compile(r"\S+")


def word_bounds(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each word of ``text``: the matches of ``_TOKEN.finditer(text)``.

    No match holds a space, so the text is taken a run of non-space characters at a time. A run of
    ASCII letters is one word, and a run of ASCII letters and one mark after it (``,`` ``.`` ``)``
    ...) two, as ``_TOKEN`` would split them (``_SPLIT_LETTERS``, ``_BEFORE_DOT``: where it would
    not); any other run is matched by ``_TOKEN`` from its first character, which sees the text
    around it as ``finditer`` does."""
    bounds = []
    for chunk in _CHUNK.finditer(text):
        start, end = chunk.span()
        word = chunk.group()
        if word.isascii():  # (?i:...) also matches ı, İ, ſ and K to ASCII letters, which lower() does not
            if word.isalpha() and word.lower() not in _SPLIT_LETTERS:
                bounds.append((start, end))
                continue
            head, mark = word[:-1], word[-1]
            if (len(word) > 2 and mark in _AFTER_WORD and head.isalpha() and head.lower() not in _SPLIT_LETTERS
                    and (mark != "." or head not in _BEFORE_DOT)):
                bounds += [(start, end - 1), (end - 1, end)]
                continue
        at = start
        while at < end:
            match = _TOKEN.match(text, at)
            bounds.append(match.span())
            at = match.end()
    return bounds


def joined_words(text: str, bounds) -> list[bool]:
    """Whether each word of ``text`` at ``bounds`` (its ``(start, end)`` characters, in order) is a
    clitic written against the word before it, as ``WordSpan.joined`` (the writers of CoNLL-U
    rebuild their multiword tokens with it).

    >>> joined_words("I don't", [(0, 1), (2, 4), (4, 7)])
    [False, False, True]
    """
    joined = []
    previous_end = -1
    for start, end in bounds:
        joined.append(start == previous_end and start > 0
                      and (joins_previous(text[start:end], text[start - 1]) or _plural_possessive(text, start, end)))
        previous_end = end
    return joined


def _plural_possessive(text, start, end):
    """An apostrophe after an s, x or z and before a space or the end (the soldiers' camp, Peter Cox'
    files): UD writes it in one multiword token with its noun."""
    return (text[start:end] in ("'", "’") and text[start - 1] in "sSxXzZ"
            and (end == len(text) or text[end].isspace()))


def tokenize(text: str) -> list[str]:
    """Split raw English text into Penn Treebank / UD style words.

    >>> tokenize("I don't think it's U.S.-made, Mr. Smith...")
    ['I', 'do', "n't", 'think', 'it', "'s", 'U.S.', '-', 'made', ',', 'Mr.', 'Smith', '...']
    """
    return [text[s.start:s.end] for s in word_spans(text)]
