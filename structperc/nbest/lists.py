"""n-best lists: the k best labelings of every sentence, their task scores, oracles, jackknifing.

An ``NBestList`` stores the candidates of a corpus as flat arrays (see ``structperc._kernels.decode.nbest``),
best first per sentence, with the model score of each candidate and, when the corpus has gold labels,
its task score: per-sentence chunk F1 for BIO label sets, else token accuracy (both in percent).

The readable block format (``write_block``): for every sentence i (0-based) and candidate rank r
(0-based, best first)::

    # sentence <i> candidate <r> score <model score> task <task score, or - without gold labels>
    <token line: the input columns, then the candidate's label>
    ...
    <blank line>
"""
import time
from dataclasses import dataclass

import numpy as np

from structperc._kernels.cache import compiling_seconds
from structperc._kernels.decode.nbest import kbest_corpus
from structperc._kernels.rank.ranking import group_argmax
from structperc.chunks import chunk_spans, is_bio
from structperc.corpus import Corpus, concatenate, index_ranges
from structperc.errors import ConfigError, DataError
from structperc.evaluate.metrics import check_gold_labels, f1_from_counts


# ------------------------------------------------------------------------------------ n-best lists
@dataclass
class NBestList:
    """Candidates of every sentence of ``corpus``, best first.

    Attributes
    ----------
    corpus : Corpus
    label_names : list of str, the label of id c is label_names[c]
    candidate_offsets : int64 (n_sentences + 1,)
    path_offsets : int64 (n_candidates + 1,)
    paths : int64 (sum of candidate lengths,), label ids
    scores : float64 (n_candidates,), model scores
    metric : "f1" (chunking), "accuracy" (tagging) or None (no gold labels)
    counts : int64 (n_candidates, 3) or None. f1: (correct chunks, predicted chunks, gold chunks);
        accuracy: (correct tokens, tokens, tokens)
    task_scores : float64 (n_candidates,) or None: per-sentence F1 (100 when neither the candidate
        nor the gold labels have a chunk) or token accuracy (100 for an empty sentence), in percent
    k : the requested list size
    seconds : time spent in the k-best kernel, less its compiling
    """

    corpus: Corpus
    label_names: list
    candidate_offsets: np.ndarray
    path_offsets: np.ndarray
    paths: np.ndarray
    scores: np.ndarray
    metric: str | None
    counts: np.ndarray | None
    task_scores: np.ndarray | None
    k: int
    seconds: float = 0.0

    @property
    def n_sentences(self):
        return len(self.candidate_offsets) - 1

    @property
    def n_candidates(self):
        return len(self.scores)

    def sentence_of_candidate(self):
        return np.repeat(np.arange(self.n_sentences), np.diff(self.candidate_offsets))

    def ranks(self):
        """Rank (0 = best) of every candidate within its sentence."""
        return np.arange(self.n_candidates) - np.repeat(self.candidate_offsets[:-1], np.diff(self.candidate_offsets))

    def candidate_labels(self, j):
        names = self.label_names
        return [names[c] for c in self.paths[self.path_offsets[j]: self.path_offsets[j + 1]]]

    # -------------------------------------------------------------- choices of one candidate per sentence
    def first_choice(self):
        """Index of the model's 1-best candidate of every sentence (-1 for a sentence without any)."""
        first = self.candidate_offsets[:-1].copy()
        first[np.diff(self.candidate_offsets) == 0] = -1
        return first

    def oracle_choice(self):
        """Per sentence, the candidate closest to the gold labels (ties to the better model rank).

        Accuracy: most correct tokens (this maximizes corpus accuracy exactly). F1: most correct
        chunks minus wrongly predicted chunks, 2 * correct - predicted (equivalently correct minus
        false positives minus false negatives, as the gold count is fixed per sentence). Corpus F1 is
        not a sum over sentences, so this per-sentence choice is a close, cheap lower bound of the
        true F1 oracle.
        """
        self._need_gold()
        if self.metric == "f1":
            merit = 2 * self.counts[:, 0] - self.counts[:, 1]
        else:
            merit = self.counts[:, 0]
        return self._argmax_per_sentence(merit.astype(float))

    def _argmax_per_sentence(self, values):
        return group_argmax(np.asarray(values, dtype=np.float64), self.candidate_offsets)

    def selected_labels(self, choice):
        """Flat label strings of the corpus when sentence i takes candidate choice[i] (a sentence
        with no candidate, choice -1, gets "O" labels)."""
        choice = np.asarray(choice, dtype=np.int64)
        lengths = np.diff(self.corpus.sentence_offsets)
        chosen = np.repeat(choice >= 0, lengths)
        first = np.where(choice >= 0, self.path_offsets[np.maximum(choice, 0)] if len(self.path_offsets) > 1 else 0, 0)
        positions = index_ranges(first, first + lengths)
        n_labels = len(self.label_names)
        ids = np.where(chosen, self.paths[np.where(chosen, positions, 0)] if len(self.paths) else n_labels, n_labels)
        return np.asarray([*self.label_names, "O"], dtype=object)[ids].tolist()

    def corpus_score(self, choice):
        """Corpus-level chunk F1 or token accuracy (percent) of a choice of one candidate per sentence."""
        self._need_gold()
        choice = np.asarray(choice)
        have = choice >= 0
        totals = self.counts[choice[have]].sum(axis=0)
        if self.metric == "f1":
            totals[2] += sum(self._gold_chunks(i) for i in np.flatnonzero(~have))
            return f1_from_counts(totals)
        n_tokens = self.corpus.n_tokens
        return 100.0 * totals[0] / n_tokens if n_tokens else 0.0

    def _gold_chunks(self, i):
        o = self.corpus.sentence_offsets
        return len(chunk_spans(self.corpus.columns[self.corpus.label][o[i]: o[i + 1]]))

    def _need_gold(self):
        if self.metric is None:
            raise ConfigError(f"{self.corpus.path}: the n-best lists have no gold labels to score against")

    def summary(self):
        """Sentences, candidates, k, kernel seconds and tokens/s; with gold labels also the metric,
        the 1-best and the oracle score."""
        n_tokens = self.corpus.n_tokens
        out = {"sentences": self.n_sentences, "tokens": n_tokens, "candidates": self.n_candidates,
               "k": self.k, "seconds": self.seconds,
               "tokens_per_second": n_tokens / self.seconds if self.seconds > 0 else float("inf")}
        if self.metric is not None:
            out["metric"] = self.metric
            out["one_best"] = self.corpus_score(self.first_choice())
            out["oracle"] = self.corpus_score(self.oracle_choice())
        return out

    # -------------------------------------------------------------- reshaping
    def truncate(self, k):
        """A new NBestList of the first ``k`` candidates of every sentence (the lists of a smaller k)."""
        k = int(k)
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k!r}")
        keep = np.flatnonzero(self.ranks() < k)
        candidate_offsets = np.zeros(self.n_sentences + 1, dtype=np.int64)
        np.cumsum(np.minimum(np.diff(self.candidate_offsets), k), out=candidate_offsets[1:])
        path_index = index_ranges(self.path_offsets[keep], self.path_offsets[keep + 1])
        path_offsets = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(np.diff(self.path_offsets)[keep], out=path_offsets[1:])
        return NBestList(
            self.corpus, list(self.label_names), candidate_offsets, path_offsets, self.paths[path_index],
            self.scores[keep], self.metric, None if self.counts is None else self.counts[keep],
            None if self.task_scores is None else self.task_scores[keep], min(k, self.k), self.seconds,
        )

    def take(self, sentence_indices):
        """A new NBestList of the given sentences, in the given order."""
        idx = np.asarray(sentence_indices, dtype=np.int64)
        cands = index_ranges(self.candidate_offsets[idx], self.candidate_offsets[idx + 1])
        candidate_offsets = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(np.diff(self.candidate_offsets)[idx], out=candidate_offsets[1:])
        path_index = index_ranges(self.path_offsets[cands], self.path_offsets[cands + 1])
        path_offsets = np.zeros(len(cands) + 1, dtype=np.int64)
        np.cumsum(np.diff(self.path_offsets)[cands], out=path_offsets[1:])
        return NBestList(
            self.corpus.subset(idx), list(self.label_names), candidate_offsets, path_offsets,
            self.paths[path_index], self.scores[cands], self.metric,
            None if self.counts is None else self.counts[cands],
            None if self.task_scores is None else self.task_scores[cands], self.k, self.seconds,
        )


def concatenate_nbest(lists):
    """One NBestList of the sentences of several, in order; label ids are remapped to the sorted
    union of their label sets (models trained on different folds may know different labels)."""
    lists = list(lists)
    if not lists:
        raise DataError("concatenate_nbest needs at least one list")
    names = sorted(set().union(*(nb.label_names for nb in lists)))
    index = {name: i for i, name in enumerate(names)}
    paths, scores, counts, tasks, cand_counts, path_lengths = [], [], [], [], [], []
    for nb in lists:
        remap = np.array([index[name] for name in nb.label_names], dtype=np.int64)
        paths.append(remap[nb.paths] if len(nb.paths) else nb.paths)
        scores.append(nb.scores)
        counts.append(nb.counts)
        tasks.append(nb.task_scores)
        cand_counts.append(np.diff(nb.candidate_offsets))
        path_lengths.append(np.diff(nb.path_offsets))
    metrics = {nb.metric for nb in lists}
    if len(metrics) != 1:
        raise DataError(f"cannot concatenate n-best lists scored by {sorted(map(str, metrics))}")
    candidate_offsets = np.concatenate([[0], np.cumsum(np.concatenate(cand_counts))]).astype(np.int64)
    path_offsets = np.concatenate([[0], np.cumsum(np.concatenate(path_lengths))]).astype(np.int64)
    with_gold = lists[0].metric is not None
    return NBestList(
        concatenate([nb.corpus for nb in lists]), names, candidate_offsets, path_offsets,
        np.concatenate(paths).astype(np.int64), np.concatenate(scores), lists[0].metric,
        np.concatenate(counts) if with_gold else None, np.concatenate(tasks) if with_gold else None,
        max(nb.k for nb in lists), sum(nb.seconds for nb in lists),
    )


# ------------------------------------------------------------------------------------ producing lists
def _model_of(tagger_or_model):
    return getattr(tagger_or_model, "model_", tagger_or_model)


def nbest_corpus(tagger_or_model, corpus, k, encoded=None):
    """The k best labelings of every sentence of ``corpus`` under a first-order model.

    Parameters
    ----------
    tagger_or_model : fitted Tagger or LinearChainModel
    corpus : Corpus, read with the model's columns; its label column (if any) is the gold standard
    k : int >= 1
    encoded : the model's encoding of the input (``Tagger.encode_input``) when the caller has it

    Returns
    -------
    NBestList
    """
    model = _model_of(tagger_or_model)
    if model.order != 1:
        raise ConfigError("k-best needs a first-order model (this model has order 2)")
    if int(k) < 1:
        raise ConfigError(f"k must be at least 1, got {k!r}")
    if corpus.label is not None:  # scored against gold labels: none known is an error, some a warning
        check_gold_labels(corpus.labels(), model.labels, corpus.path)
    if encoded is None and hasattr(tagger_or_model, "encode_input"):  # a Tagger: its own input (a stacked
        encoded = tagger_or_model.encode_input(corpus)                  # model adds a column)
    elif encoded is None:
        encoded = model.encoder.transform(corpus, with_labels=False)
    layout, data = model.layout(), model.data(encoded)
    start, compiled = time.perf_counter(), compiling_seconds()
    candidate_offsets, path_offsets, paths, scores = kbest_corpus(model.weights, layout, data, int(k))
    seconds = time.perf_counter() - start - (compiling_seconds() - compiled)  # a speed without compiling
    nb = NBestList(corpus, list(model.labels), candidate_offsets, path_offsets, paths, scores,
                   None, None, None, int(k), seconds)
    if corpus.label is not None:
        _score_candidates(nb, "f1" if is_bio(model.labels) else "accuracy")
    return nb


def _score_candidates(nb, metric):
    """Fill nb.metric, nb.counts and nb.task_scores against the corpus's gold labels."""
    corpus = nb.corpus
    gold = corpus.columns[corpus.label]
    n_candidates = nb.n_candidates
    counts = np.zeros((n_candidates, 3), dtype=np.int64)
    sentence_of = nb.sentence_of_candidate()
    lengths = np.diff(nb.path_offsets)
    if metric == "accuracy":
        index = {name: i for i, name in enumerate(nb.label_names)}
        gold_ids = np.fromiter((index.get(g, -1) for g in gold), dtype=np.int64, count=len(gold))
        token_index = index_ranges(corpus.sentence_offsets[sentence_of], corpus.sentence_offsets[sentence_of] + lengths)
        owner = np.repeat(np.arange(n_candidates), lengths)
        counts[:, 0] = np.bincount(owner, weights=nb.paths == gold_ids[token_index], minlength=n_candidates)
        counts[:, 1] = counts[:, 2] = lengths
        with np.errstate(invalid="ignore", divide="ignore"):
            task = np.where(lengths > 0, 100.0 * counts[:, 0] / np.maximum(lengths, 1), 100.0)
    else:
        o = corpus.sentence_offsets
        names = nb.label_names
        for i in range(nb.n_sentences):
            gold_spans = set(chunk_spans(gold[o[i]: o[i + 1]]))
            for j in range(nb.candidate_offsets[i], nb.candidate_offsets[i + 1]):
                spans = chunk_spans([names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]]])
                counts[j] = (len(gold_spans.intersection(spans)), len(spans), len(gold_spans))
        task = f1_from_counts(counts, empty=100.0)
    nb.metric, nb.counts, nb.task_scores = metric, counts, task.astype(float)


def jackknife_nbest(corpus, tagger_params, folds=10, k=20, seed=0, progress=None, blocks=False):
    """n-best lists of a training corpus that look like test-time output.

    The sentences are dealt into ``folds`` folds (``jackknife.fold_split``: a permutation drawn from
    ``seed``); for each fold a ``Tagger(**tagger_params)`` (or a copy of the estimator ``tagger_params``,
    ``jackknife.jackknife``) is trained on the other folds and produces
    the k-best lists of the held-out fold (``jackknife.jackknife``). The lists are returned in the
    corpus's sentence order.

    progress : optional callable(fold, folds, seconds) called after each fold; blocks : contiguous
        folds instead (``fold_split``), so a fold's documents were not seen by its model.
    """
    from structperc.nbest.jackknife import jackknife

    parts = jackknife(corpus, tagger_params, lambda tagger, held: nbest_corpus(tagger, held, k), folds, seed, progress,
                      blocks)
    merged = concatenate_nbest([nb for _, nb in parts])
    position = np.empty(corpus.n_sentences, dtype=np.int64)
    position[np.concatenate([held for held, _ in parts])] = np.arange(corpus.n_sentences)
    result = merged.take(position)
    result.corpus = corpus
    return result


# ------------------------------------------------------------------------------------ block format
def _number(value):
    return repr(float(value))


def write_block(out, nb):
    """Write the readable block format (see the module docstring)."""
    corpus = nb.corpus
    if corpus.lines is not None and corpus.format in ("conll", "conllu"):
        base = corpus.lines
    else:
        base = [" ".join(fields) for fields in zip(*corpus.columns.values())]
    separator = "\t" if corpus.format == "conllu" else " "
    o = corpus.sentence_offsets
    names = nb.label_names
    chunks = []
    for i in range(nb.n_sentences):
        lines = base[o[i]: o[i + 1]]
        first = nb.candidate_offsets[i]
        for j in range(first, nb.candidate_offsets[i + 1]):
            task = "-" if nb.task_scores is None else _number(nb.task_scores[j])
            chunks.append(f"# sentence {i} candidate {j - first} score {_number(nb.scores[j])} task {task}\n")
            path = nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]]
            chunks.append("".join(f"{line}{separator}{names[c]}\n" for line, c in zip(lines, path)))
            chunks.append("\n")
        if len(chunks) > 4096:
            out.write("".join(chunks))
            chunks.clear()
    out.write("".join(chunks))
