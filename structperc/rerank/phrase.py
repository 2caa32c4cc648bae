"""The ``phrase`` feature family: every chunk of a candidate seen with its neighbours in the candidate.

The ``chunk`` family looks at each chunk alone; here a chunk is one of a sequence, which a first-order
tagger, seeing two labels at a time, cannot score. For every chunk (type T, tokens a..b) of a
candidate, with the chunk before it (type P, or ``<s>``) and after it (type N, or ``</s>``):

- ``pp=T:pattern``: its POS sequence with runs of one tag collapsed (``DT JJ+ NN``);
- ``pb=T:pos[a-1] pos[a]`` and ``pe=T:pos[b] pos[b+1]``: the POS across its boundaries;
- ``pl=T:word[a-1]`` and ``pr=T:word[b+1]``: the words just outside it;
- with the chunk before it: ``p2=P [gap] T``, the two types with the collapsed POS of the tokens
  between them (outside every chunk); ``p2w=P:head T`` and ``p2v=P T:head``, a head word (a chunk's
  last word) with the other's type; ``p2p=P:pos T:pos``, both heads' POS; ``p2h=P:head T:head``,
  both heads;
- the same five for the last chunk with ``</s>`` after it (for a candidate with no chunk, nothing);
- ``p3=P T N``: chunk-type trigrams, and ``p3h=P T:head N`` with the chunk's head.

A chunk's features depend on (chunk before, chunk, chunk after) only, so they are made once per
distinct such triple of a sentence's candidates and gathered by the candidates that have it, the
same entries whether a vocabulary grows (training lists) or is fixed (tagging), which is what keeps
the interned featurizing (``rerank.interned``, which takes these as string parts) equal to the
string one.
"""
import numpy as np

from structperc._kernels.rank.interning import first_ids
from structperc.corpus import index_ranges
from structperc.errors import ConfigError

START, END = "<s>", "</s>"
LONG_GAP = 4  # a gap of more distinct POS runs than this is rendered as "long"


def collapsed(tags):
    """The tags with each run of one tag written once, followed by "+" when it repeats."""
    out = []
    for tag in tags:
        if out and out[-1][0] == tag:
            out[-1][1] = True
        else:
            out.append([tag, False])
    return " ".join(tag + "+" if repeated else tag for tag, repeated in out)


def _gap(pos, a, b):
    """The collapsed POS of tokens a..b - 1 between two chunks ("" when adjacent, "long" past LONG_GAP runs)."""
    text = collapsed(pos[a:b])
    return "long" if text.count(" ") >= LONG_GAP else text


def _pair(words, pos, before, after):
    """The strings of two neighbouring chunks, each (type, first, last); a boundary is (START, -1, -1)
    or (END, n, n)."""
    p, _, p_last = before
    t, t_first, t_last = after
    n = len(words)
    head_before = words[p_last] if 0 <= p_last < n else p
    pos_before = pos[p_last] if 0 <= p_last < n else p
    head_after = words[t_last] if 0 <= t_last < n else t
    pos_after = pos[t_last] if 0 <= t_last < n else t
    gap = _gap(pos, max(p_last + 1, 0), min(t_first, n))
    return [f"p2={p} [{gap}] {t}", f"p2w={p}:{head_before} {t}", f"p2v={p} {t}:{head_after}",
            f"p2p={p}:{pos_before} {t}:{pos_after}", f"p2h={p}:{head_before} {t}:{head_after}"]


def triple_strings(words, pos, before, chunk, after):
    """The feature strings of ``chunk`` (type, first, last) between ``before`` and ``after`` (chunks,
    or the boundaries (START, -1, -1) and (END, n, n)) in a sentence of ``words`` and ``pos``."""
    kind, a, b = chunk
    n = len(words)
    out = [f"pp={kind}:{collapsed(pos[a:b + 1])}",
           f"pb={kind}:{pos[a - 1] if a > 0 else START} {pos[a]}",
           f"pe={kind}:{pos[b]} {pos[b + 1] if b + 1 < n else END}",
           f"pl={kind}:{words[a - 1] if a > 0 else START}",
           f"pr={kind}:{words[b + 1] if b + 1 < n else END}"]
    out += _pair(words, pos, before, chunk)
    if after[0] == END:
        out += _pair(words, pos, chunk, after)
    out += [f"p3={before[0]} {kind} {after[0]}", f"p3h={before[0]} {kind}:{words[b]} {after[0]}"]
    return out


def phrase_parts(nb, spans, feature_id):
    """(candidates, ids, values) of the phrase features of every candidate of an NBestList, by
    ascending candidate (the chunks' order within one); ``spans``: its ``spans.CandidateSpans``;
    ``feature_id(string)``: the string's id, or -1 (dropped later) when the vocabulary lacks it."""
    corpus = nb.corpus
    try:
        word_column, pos_column = corpus.columns["word"], corpus.columns["pos"]
    except KeyError as exc:
        raise ConfigError(f"the phrase features need the input column {exc}") from None
    o = corpus.sentence_offsets
    n_chunks = len(spans.type)
    if n_chunks == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    n_distinct, n_sentences = spans.n_distinct, corpus.n_sentences
    sentence = nb.sentence_of_candidate()[spans.candidate]
    starts, ends = spans.offsets[:-1], spans.offsets[1:]
    is_first = np.zeros(n_chunks, dtype=bool)
    is_first[starts[starts < n_chunks]] = True
    is_last = np.zeros(n_chunks, dtype=bool)
    is_last[ends[ends > 0] - 1] = True
    # the chunk before and after each chunk as a distinct chunk, or its sentence's start or end
    before = np.where(is_first, n_distinct + sentence, np.roll(spans.distinct_of, 1))
    after = np.where(is_last, n_distinct + n_sentences + sentence, np.roll(spans.distinct_of, -1))
    width = n_distinct + 2 * n_sentences
    pair, _ = first_ids(before * width + spans.distinct_of)
    unit, n_units = first_ids(pair * width + after)
    _, first_of_unit = np.unique(unit, return_index=True)
    type_names = spans.type_names
    kinds, firsts, lasts = spans.type.tolist(), spans.first.tolist(), spans.last.tolist()
    rows = []
    for s, i in zip(first_of_unit.tolist(), sentence[first_of_unit].tolist()):
        words, pos = word_column[o[i]: o[i + 1]], pos_column[o[i]: o[i + 1]]
        n = len(words)
        chunk = (type_names[kinds[s]], firsts[s], lasts[s])
        left = (START, -1, -1) if is_first[s] else (type_names[kinds[s - 1]], firsts[s - 1], lasts[s - 1])
        right = (END, n, n) if is_last[s] else (type_names[kinds[s + 1]], firsts[s + 1], lasts[s + 1])
        rows.append([feature_id(text) for text in triple_strings(words, pos, left, chunk, right)])
    offsets = np.zeros(n_units + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    ids = np.fromiter((f for r in rows for f in r), dtype=np.int64, count=int(offsets[-1]))
    lengths = offsets[unit + 1] - offsets[unit]
    entries = index_ranges(offsets[unit], offsets[unit + 1])
    return np.repeat(spans.candidate, lengths), ids[entries], np.ones(len(entries))
