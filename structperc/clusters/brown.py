"""Brown word clusters from unlabelled text (Brown et al. 1992; Liang 2005's windowed algorithm).

Pipeline::

    read_sentences   files -> sentences of words (raw text through `tokenize`; CoNLL, CoNLL-U and
                     PTB files through the corpus readers, word column)
    count_words      sentences -> interned token ids, word counts
    bigram_table     kept words ranked by frequency, directed bigram counts as CSR tables
    brown_clusters   the whole pipeline; the merges run in `structperc._kernels.cluster.brown`
    write_paths      ``bitstring<TAB>word<TAB>count`` lines (Liang's wcluster ``paths`` format)

Conventions
-----------
* Sentences: a raw text line is one sentence (blank lines are skipped); a CoNLL/CoNLL-U/PTB
  sentence is one sentence. Bigrams are adjacent tokens of one sentence: no pair spans a sentence
  or file boundary and no boundary symbols are added.
* ``min_count``: words seen fewer times are dropped before clustering, with every bigram they are
  part of (their neighbours are not joined).
* Word order: by count, descending; ties by the word's string (code point order). The C most
  frequent words start as clusters, the others are added in that order.
* Paths: when every word is in, the C remaining clusters are merged down to one; the path of a
  word is the path of its cluster from the root of that tree. At each merge, the child holding the
  more frequent word (lower rank) gets bit 0. All words of one cluster share one path, as in
  wcluster's output.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from structperc.utils.atomic import atomic_write
from structperc.readers import iter_corpus
from structperc.readers.raw import tokenize
from structperc.readers.stream import read_chunks
from structperc.errors import ConfigError, InputFormatError, StructpercError

FORMATS = ("auto", "raw", "conll", "conllu", "ptb")

# --------------------------------------------------------------------------------------------
# Reading


def detect_clusters_format(path, encoding: str = "utf-8", sample_lines: int = 200) -> str:
    """Format of an input file for clustering.

    ``.conllu`` -> conllu and ``.pos`` -> ptb (as the corpus readers decide). Any other file is
    sniffed: it is CoNLL columns when its first `sample_lines` non-blank lines all have the same
    number of whitespace-separated fields and either that number is at least 2 (and at most 20) or
    the sample holds a blank line between sentences (one word per line); otherwise raw text.
    """
    suffix = Path(str(path)).suffix.lower()
    if suffix == ".conllu":
        return "conllu"
    if suffix == ".pos":
        return "ptb"
    if str(path) == "-":
        raise ConfigError("standard input needs an explicit format=NAME")
    field_counts, saw_blank = set(), False
    n_lines = 0
    for _, lines in read_chunks(path, encoding, chunk_bytes=1 << 16):
        for line in lines:
            if not line.strip():
                saw_blank = saw_blank or n_lines > 0
                continue
            field_counts.add(len(line.split()))
            n_lines += 1
            if n_lines >= sample_lines or len(field_counts) > 1:
                break
        break
    if len(field_counts) == 1:
        (n_fields,) = field_counts
        if 2 <= n_fields <= 20 or (n_fields == 1 and saw_blank):
            return "conll"
    return "raw"


def _raw_sentences(path, encoding: str) -> Iterator[list[str]]:
    for _, lines in read_chunks(path, encoding):
        for line in lines:
            tokens = tokenize(line)
            if tokens:
                yield tokens


def read_sentences(path, format: str = "auto", encoding: str = "utf-8") -> Iterator[list[str]]:
    """Sentences of one file as lists of words.

    format : {"auto", "raw", "conll", "conllu", "ptb"}
        raw: one sentence per line, split by `tokenize`; the others: the word column of the
        corpus readers; auto: `detect_clusters_format`.
    """
    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r}; valid formats: {', '.join(FORMATS)}")
    if format == "auto":
        format = detect_clusters_format(path, encoding)
    if format == "raw":
        yield from _raw_sentences(path, encoding)
        return
    for batch in iter_corpus(path, format=format, encoding=encoding, require_label=False):
        words = batch.columns["word"]
        offsets = batch.sentence_offsets.tolist()
        for start, end in zip(offsets[:-1], offsets[1:]):
            yield words[start:end]


@dataclass
class WordCounts:
    """Interned text.

    Attributes
    ----------
    words : list of str
        Word types in order of first occurrence (the id of a word is its index).
    counts : ndarray of int64, shape (n_types,)
    token_ids : ndarray of int64, shape (n_tokens,)
    sentence_offsets : ndarray of int64, shape (n_sentences + 1,)
    """

    words: list[str]
    counts: np.ndarray
    token_ids: np.ndarray
    sentence_offsets: np.ndarray


def count_words(sentences: Iterable[Sequence[str]]) -> WordCounts:
    """Intern the words of `sentences` (ids in order of first occurrence)."""
    index: dict[str, int] = {}
    intern = index.setdefault
    ids, lengths = array("q"), array("q")
    for sentence in sentences:
        ids.extend([intern(word, len(index)) for word in sentence])
        lengths.append(len(sentence))
    token_ids = np.frombuffer(ids, dtype=np.int64) if ids else np.zeros(0, np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    counts = np.bincount(token_ids, minlength=len(index)).astype(np.int64)
    return WordCounts(list(index), counts, token_ids, offsets)


def rank_words(words: Sequence[str], counts: np.ndarray, min_count: int) -> np.ndarray:
    """Ids of the kept words (count >= min_count), most frequent first, ties by string."""
    keep = np.flatnonzero(counts >= min_count)
    order = sorted(keep.tolist(), key=lambda i: (-int(counts[i]), words[i]))
    return np.asarray(order, dtype=np.int64)


def bigram_table(text: WordCounts, ranked: np.ndarray):
    """Directed bigram counts between kept words, indexed by rank, as a `WordBigrams` record."""
    from structperc._kernels.cluster.brown import WordBigrams

    n_words = len(ranked)
    rank_of = np.full(len(text.words), -1, dtype=np.int64)
    rank_of[ranked] = np.arange(n_words, dtype=np.int64)
    ranks = rank_of[text.token_ids]
    follows = np.ones(len(ranks), dtype=bool)  # token t+1 continues token t's sentence
    follows[text.sentence_offsets[1:] - 1] = False
    left, right = ranks[:-1], ranks[1:]
    valid = follows[:-1] & (left >= 0) & (right >= 0)
    left, right = left[valid], right[valid]
    keys, pair_counts = np.unique(left * n_words + right, return_counts=True)
    out_left, out_right = keys // n_words, keys % n_words
    out_offsets = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_left, minlength=n_words), out=out_offsets[1:])
    by_right = np.lexsort((out_left, out_right))
    in_offsets = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_right, minlength=n_words), out=in_offsets[1:])
    pair_counts = pair_counts.astype(np.int64)
    return WordBigrams(
        out_offsets=out_offsets, out_words=out_right.astype(np.int64), out_counts=pair_counts,
        in_offsets=in_offsets, in_words=out_left[by_right].astype(np.int64),
        in_counts=pair_counts[by_right],
        left=np.bincount(left, minlength=n_words).astype(np.int64),
        right=np.bincount(right, minlength=n_words).astype(np.int64),
        total=int(len(left)),
    )


# --------------------------------------------------------------------------------------------
# Clustering


@dataclass
class BrownClusters:
    """Result of `brown_clusters`.

    Attributes
    ----------
    words : list of str
        Kept words by rank (most frequent first).
    counts : ndarray of int64, shape (n_words,)
    paths : list of str
        Bit-string path of each word's cluster.
    merges : ndarray of int64, shape (n_words - 1, 2)
        Merge k joins nodes merges[k] into node n_words + k; nodes below n_words are words (ranks).
        The first n_words - n_clusters merges are the windowed phase.
    losses : ndarray of float64, shape (n_words - 1,)
        Average mutual information lost by each merge (nats).
    ami : ndarray of float64, shape (n_words - 1,)
        Average mutual information after each merge.
    n_clusters : int
        C (capped at the number of words).
    n_bigrams : int
    """

    words: list[str]
    counts: np.ndarray
    paths: list[str]
    merges: np.ndarray
    losses: np.ndarray
    ami: np.ndarray
    n_clusters: int
    n_bigrams: int

    def lines(self) -> list[str]:
        """``path<TAB>word<TAB>count`` lines, by path, then count (descending), then word."""
        order = sorted(range(len(self.words)),
                       key=lambda i: (self.paths[i], -int(self.counts[i]), self.words[i]))
        return [f"{self.paths[i]}\t{self.words[i]}\t{int(self.counts[i])}" for i in order]


def run_merges(bigrams, n_words: int, n_clusters: int,
               progress: Callable[[int, int], None] | None = None, steps_per_call: int = 200):
    """Run the windowed algorithm over a `WordBigrams` record.

    Returns (merges (V-1, 2), losses (V-1,), ami (V-1,)), losses and ami in nats.
    `progress(done, total)` is called after every `steps_per_call` merges.
    """
    from structperc._kernels.cluster.brown import brown_steps, new_state

    n_merges = max(n_words - 1, 0)
    merges = np.zeros((n_merges, 2), dtype=np.int64)
    losses = np.zeros(n_merges)
    ami = np.zeros(n_merges)
    state = new_state(n_clusters, n_words)
    done = 0
    if progress is not None:
        progress(0, n_merges)
    while True:
        step = brown_steps(state, bigrams, n_words, n_clusters, steps_per_call, merges, losses, ami)
        done += step
        if progress is not None:
            progress(done, n_merges)
        if step < steps_per_call or done >= n_merges:
            break
    if bigrams.total > 0:
        losses /= bigrams.total
        ami /= bigrams.total
    return merges, losses, ami


def cluster_paths(merges: np.ndarray, n_words: int, n_clusters: int) -> list[str]:
    """Bit-string path of every word (see the module docstring)."""
    if n_words == 1:
        return ["0"]
    n_window = n_words - n_clusters
    n_nodes = 2 * n_words - 1
    min_rank = np.arange(n_nodes, dtype=np.int64)
    for k, (x, y) in enumerate(merges.tolist()):
        min_rank[n_words + k] = min(min_rank[x], min_rank[y])
    path = [""] * n_nodes
    top = np.arange(n_nodes, dtype=np.int64)
    # the final C - 1 merges form the tree; walk it from the root
    for k in range(n_words - 2, n_window - 1, -1):
        node = n_words + k
        x, y = merges[k].tolist()
        if min_rank[y] < min_rank[x]:
            x, y = y, x
        path[x] = path[node] + "0"
        path[y] = path[node] + "1"
    # words merged in the windowed phase take the path of the cluster they ended in
    for k in range(n_window - 1, -1, -1):
        node = n_words + k
        for child in merges[k].tolist():
            top[child] = top[node]
    return [path[top[w]] for w in range(n_words)]


def brown_clusters(paths: Sequence, n_clusters: int = 256, min_count: int = 1,
                   format: str = "auto", encoding: str = "utf-8",
                   progress: Callable[[int, int], None] | None = None) -> BrownClusters:
    """Brown clusters of the words of `paths` (windowed algorithm, exact incremental losses).

    Parameters
    ----------
    paths : sequence of str or Path
        Input files: raw text, CoNLL, CoNLL-U or PTB .pos (see `read_sentences`).
    n_clusters : int
        C, the number of clusters kept while words are added (the window).
    min_count : int
        Drop words seen fewer times than this.
    format : str
        One format for all files, or "auto" to decide per file.
    progress : callable (merges done, merges total) or None

    Raises
    ------
    ConfigError
        Bad option values.
    InputFormatError
        Unreadable input, or no word left after `min_count`.
    """
    if n_clusters < 1:
        raise ConfigError(f"n_clusters must be at least 1, got {n_clusters}")
    if min_count < 1:
        raise ConfigError(f"min_count must be at least 1, got {min_count}")
    if not paths:
        raise ConfigError("no input files")
    text = count_words(sentence for path in paths
                       for sentence in read_sentences(path, format=format, encoding=encoding))
    ranked = rank_words(text.words, text.counts, min_count)
    if len(ranked) == 0:
        where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files"
        raise InputFormatError(where, None, f"no word occurs at least {min_count} times")
    bigrams = bigram_table(text, ranked)
    n_words = len(ranked)
    n_clusters = min(n_clusters, n_words)
    merges, losses, ami = run_merges(bigrams, n_words, n_clusters, progress)
    return BrownClusters(
        words=[text.words[i] for i in ranked.tolist()], counts=text.counts[ranked],
        paths=cluster_paths(merges, n_words, n_clusters), merges=merges, losses=losses, ami=ami,
        n_clusters=n_clusters, n_bigrams=bigrams.total)


def write_paths(clusters: BrownClusters, path) -> None:
    """Write ``bitstring<TAB>word<TAB>count`` lines atomically (nothing is left behind on an error
    or an interrupt)."""
    try:
        with atomic_write(path, "w") as out:
            for line in clusters.lines():
                out.write(line + "\n")
    except OSError as error:
        raise StructpercError(f"{path}: cannot write ({error.strerror})") from None
