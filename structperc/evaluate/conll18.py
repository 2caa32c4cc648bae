"""Scores of a segmentation and tagging of raw text, as the CoNLL 2018 shared task scored them.

The definition is the shared task's (Zeman et al., 2018, "CoNLL 2018 Shared Task: Multilingual Parsing
from Raw Text to Universal Dependencies", section 3, and its evaluation script, conll18_ud_eval):

- Gold and system text are compared as one stream of characters with every whitespace removed; both
  must have the same stream. A token, word or sentence is a span ``[start, end)`` of that stream.
- Tokens and Sentences: precision, recall and F1 of the spans that match exactly.
- Words: a word outside any multiword token has its token's span and aligns with a word of the same
  span. Inside a multiword span (the minimal stretch of words covering overlapping multiword tokens
  of either side, all of whose words carry their token's span) the words align by the longest common
  subsequence of their case-folded forms.
- UPOS, XPOS: the aligned words whose tag is the same, over the system's words (precision) and the
  gold words (recall); F1 of the two. ``aligned_accuracy`` is the same count over the aligned words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from structperc.errors import DataError


@dataclass(frozen=True)
class Word:
    """One word: its form, its tags, and its token's span of the whitespace-free text.

    multiword : whether the word is part of a multiword token (its span is then the token's)."""
    form: str
    start: int
    end: int
    multiword: bool = False
    upos: str = "_"
    xpos: str = "_"


@dataclass(frozen=True)
class Segmented:
    """A text split into sentences, tokens and words, as spans of its whitespace-free characters.

    tokens, sentences : (start, end) spans, in order; words : list of Word, in order."""
    characters: str
    tokens: list
    words: list
    sentences: list


@dataclass(frozen=True)
class Score:
    """gold, system : counts; correct : matches (aligned : the aligned words, for tags)."""
    gold: int
    system: int
    correct: int
    aligned: int | None = None

    @property
    def precision(self):
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self):
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self):
        return 2 * self.correct / (self.gold + self.system) if self.gold + self.system else 0.0

    @property
    def aligned_accuracy(self):
        return self.correct / self.aligned if self.aligned else None


def segment(sentences: Sequence[Sequence[tuple]]) -> Segmented:
    """A ``Segmented`` text of sentences, each a list of tokens ``(form, words)``: ``words`` a list of
    ``(form, upos, xpos)``, one for a plain token, several for a multiword token."""
    characters, tokens, words, spans = [], [], [], []
    at = 0
    for sentence in sentences:
        first = at
        for form, token_words in sentence:
            chars = "".join(form.split())
            start, at = at, at + len(chars)
            characters.append(chars)
            tokens.append((start, at))
            multiword = len(token_words) > 1
            words.extend(Word(w[0], start, at, multiword, *w[1:]) for w in token_words)
        if at > first:
            spans.append((first, at))
    return Segmented("".join(characters), tokens, words, spans)


def spans_score(gold, system):
    """Exact matches of two ordered lists of (start, end) spans."""
    correct = gi = si = 0
    while gi < len(gold) and si < len(system):
        if system[si][0] < gold[gi][0]:
            si += 1
        elif gold[gi][0] < system[si][0]:
            gi += 1
        else:
            correct += gold[gi][1] == system[si][1]
            gi += 1
            si += 1
    return Score(len(gold), len(system), correct)


def _beyond_end(words, i, end):
    if i >= len(words):
        return True
    if words[i].multiword:
        return words[i].start >= end
    return words[i].end > end


def _extend_end(word, end):
    return word.end if word.multiword and word.end > end else end


def _multiword_span(gold, system, gi, si):
    """(gold start, system start, gold end, system end) of the multiword span at gi, si."""
    if gold[gi].multiword:
        end = gold[gi].end
        if not system[si].multiword and system[si].start < gold[gi].start:
            si += 1
    else:
        end = system[si].end
        if not gold[gi].multiword and gold[gi].start < system[si].start:
            gi += 1
    gs, ss = gi, si
    while not _beyond_end(gold, gi, end) or not _beyond_end(system, si, end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            end = _extend_end(gold[gi], end)
            gi += 1
        else:
            end = _extend_end(system[si], end)
            si += 1
    return gs, ss, gi, si


def _aligned_by_lcs(gold, system):
    """Pairs (g, s) of a longest common subsequence of the case-folded forms.

    lcs[g][s] = length of the LCS of gold[g:] and system[s:]."""
    n, m = len(gold), len(system)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for g in reversed(range(n)):
        for s in reversed(range(m)):
            same = gold[g].form.casefold() == system[s].form.casefold()
            lcs[g][s] = max(lcs[g + 1][s + 1] + 1 if same else 0, lcs[g + 1][s], lcs[g][s + 1])
    pairs, g, s = [], 0, 0
    while g < n and s < m:
        if gold[g].form.casefold() == system[s].form.casefold():
            pairs.append((g, s))
            g += 1
            s += 1
        elif lcs[g][s] == lcs[g + 1][s]:
            g += 1
        else:
            s += 1
    return pairs


def align_words(gold: list, system: list) -> list:
    """Pairs (gold Word, system Word) aligned as the shared task aligns them."""
    aligned, gi, si = [], 0, 0
    while gi < len(gold) and si < len(system):
        if gold[gi].multiword or system[si].multiword:
            gs, ss, gi, si = _multiword_span(gold, system, gi, si)
            aligned.extend((gold[gs + g], system[ss + s]) for g, s in _aligned_by_lcs(gold[gs:gi], system[ss:si]))
        elif (gold[gi].start, gold[gi].end) == (system[si].start, system[si].end):
            aligned.append((gold[gi], system[si]))
            gi += 1
            si += 1
        elif gold[gi].start <= system[si].start:
            gi += 1
        else:
            si += 1
    return aligned


def evaluate(gold: Segmented, system: Segmented) -> dict:
    """{"tokens", "sentences", "words", "upos", "xpos": Score} of a system's segmentation and tags.

    A DataError when the two texts differ outside whitespace (the first difference is named)."""
    if gold.characters != system.characters:
        at = next((i for i, (a, b) in enumerate(zip(gold.characters, system.characters)) if a != b),
                  min(len(gold.characters), len(system.characters)))
        raise DataError(f"the gold and system texts differ at non-whitespace character {at}: "
                        f"{gold.characters[at:at + 20]!r} against {system.characters[at:at + 20]!r}")
    aligned = align_words(gold.words, system.words)
    scores = {"tokens": spans_score(gold.tokens, system.tokens),
              "sentences": spans_score(gold.sentences, system.sentences),
              "words": Score(len(gold.words), len(system.words), len(aligned))}
    for tag in ("upos", "xpos"):
        correct = sum(getattr(g, tag) == getattr(s, tag) for g, s in aligned)
        scores[tag] = Score(len(gold.words), len(system.words), correct, len(aligned))
    return scores


def read_conllu_segmented(path) -> tuple[Segmented, list]:
    """(the Segmented gold text of a CoNLL-U file, its paragraphs: lists of the sentences' ``# text``).

    A paragraph starts at each ``# newpar`` or ``# newdoc`` comment (a file without them is one
    paragraph per sentence)."""
    import conllu

    sentences, paragraphs = [], []
    with open(path, encoding="utf-8") as handle:
        for tokenlist in conllu.parse_incr(handle):
            meta = tokenlist.metadata
            if not paragraphs or any(key.startswith(("newpar", "newdoc")) for key in meta):
                paragraphs.append([])
            paragraphs[-1].append(meta.get("text", ""))
            tokens, skip = [], set()
            for token in tokenlist:
                token_id = token["id"]
                if isinstance(token_id, tuple) and token_id[1] == "-":
                    parts = [t for t in tokenlist if isinstance(t["id"], int) and token_id[0] <= t["id"] <= token_id[2]]
                    tokens.append((token["form"], [(t["form"], t["upos"] or "_", t["xpos"] or "_") for t in parts]))
                    skip.update(t["id"] for t in parts)
                elif isinstance(token_id, int) and token_id not in skip:
                    tokens.append((token["form"], [(token["form"], token["upos"] or "_", token["xpos"] or "_")]))
            sentences.append(tokens)
    return segment(sentences), paragraphs
