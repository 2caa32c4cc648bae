"""Features a first-order tagger cannot have: a candidate scored against the rest of its document,
against entity gazetteers, and as a whole sequence; and the featurizing of n-best lists with them.

Feature families (each switched on by name in ``featurize_in_context``):

- ``entity``: Collins' (2002) features of every entity of a candidate (``features.ENTITY_FEATURES``)
  plus each word of each entity (``entity_word``).
- ``around``: the word just before and the word just after every entity, with its type
  (``entity_before1``, ``entity_after1``); Collins' own context features are bigrams and trigrams.
- ``cluster``: the Brown path prefixes of each word of every entity and of the words just around it,
  with its type (``rerank.clusters``); it needs clusters (``featurize_in_context``'s ``clusters``).
- ``chunk``: the chunking features of every chunk (``features.GLOBAL_FEATURES``: its words, POS,
  length, first and last word, shape).
- ``phrase``: every chunk with its neighbours in the candidate (``rerank.phrase``): its collapsed POS
  pattern, the POS and words across its boundaries, chunk-type bigrams (with the POS between the
  chunks, a head word, both heads or both heads' POS) and trigrams (alone and with the head).
- ``posterior``: the probability of each chunk under the base, from its n-best list, and the
  candidate's expected merit under it (``rerank.posterior``).
- ``document``: for every entity of a candidate (type T, words s), the types that s, its lower-cased
  form and its last word get *elsewhere* in its document (the other sentences; the document's own
  sentence is left out), counted in the base's 1-best (``d1``) and in the other sentences' candidates,
  each candidate weighing 1/k (``dn``). A feature ``d1s:T=T'`` has the share of T' among those
  occurrences as its value; ``d1s:agree`` the share of T itself; ``d1s:T:none`` fires when s occurs
  nowhere else. For the last word the shares count occurrences outside entities too (``O``). Every
  capitalised word that the candidate leaves outside its entities adds ``d1o:T'`` (the share of T'
  that word gets elsewhere), so leaving out a name the rest of the document labels costs.
- ``corpus``: the ``document`` features counted over the sentence's block instead of its document,
  prefixed ``c1`` and ``cn`` instead of ``d1`` and ``dn``: a name keeps its label across the articles
  of a file too (Krishnan and Manning 2006). A block is the sentences whose lists one base model made
  (``ListContext``'s ``blocks``): for jackknifed training lists a fold, so that no count comes from a
  model that saw the sentence's gold; for other lists the whole file.
- ``gazetteer``: the same shares (``gs``, ``gl``) in a gazetteer of gold entities. For training lists
  the gazetteer of a sentence is gathered from the other jackknife folds only, so that no candidate
  sees its own gold; for other lists from all the training corpus.
- ``sequence``: label trigrams of the candidate (``l3=``) and its number of entities of each type
  (``nT=T:n``), with the sequence of its entity types (``chunk_sequence``).
- ``rank``: the candidate's rank in the base's list (``rank=r``, 5 and beyond as one).

Feature 1 is always the base's score relative to the group's 1-best (``features.featurize``).

Training lists grow the vocabulary here, one feature string at a time. With a fixed vocabulary
(tagging, dev lists) every family but the string ones (``entity``, ``around``, ``cluster``, ``chunk``,
``phrase``) is made by the kernels of ``rerank.interned`` over interned ids, with the same ids and values; the
per-document counts (``ListContext.one`` and ``many``) are then never built.

Documents come from the file (``rerank.documents``).
"""
import collections
import functools
import itertools

import numpy as np

from structperc._kernels.rank.candidates import label_trigrams, outside_tokens
from structperc.chunks import chunk_spans
from structperc.corpus import index_ranges
from structperc.errors import ConfigError
from structperc.rerank.clusters import ClusterPaths
from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE, RankingData
from structperc.rerank.documents import DOCUMENT_MARKERS, document_ids, marker_lines  # noqa: F401 (re-exported)
from structperc.rerank.features import ENTITY_FEATURES, FEATURES, GLOBAL_FEATURES
from structperc.rerank.gazetteer import Gazetteer, entity_keys, jackknifed_gazetteers  # noqa: F401 (re-exported)
from structperc.rerank.interned import DocumentWords, corpus_name, featurize_interned, interned_scores
from structperc.rerank.phrase import phrase_parts
from structperc.rerank.posterior import fit_temperature, posterior_parts
from structperc.rerank.spans import CandidateSpans

FAMILIES = ("entity", "around", "cluster", "chunk", "phrase", "posterior", "document", "corpus", "gazetteer",
            "sequence", "rank")
ENTITY_FAMILY = ENTITY_FEATURES + ["entity_word"]
AROUND_FAMILY = ["entity_before1", "entity_after1"]
CHUNK_FAMILY = [name for name in GLOBAL_FEATURES if name != "chunk_sequence"]
# the families made of features.FEATURES, computed from each chunk's strings
CHUNK_FEATURE_FAMILIES = {"entity": ENTITY_FAMILY, "around": AROUND_FAMILY, "chunk": CHUNK_FAMILY}


def check_families(families, clusters=None):
    """The list of families (None: all of them, ``cluster`` only with ``clusters``), or ConfigError."""
    if families is None:
        families = [name for name in FAMILIES if name != "cluster" or clusters is not None]
    families = list(families)
    for name in families:
        if name not in FAMILIES:
            raise ConfigError(f"unknown feature family {name!r}: choose from {', '.join(FAMILIES)}")
    if "cluster" in families and clusters is None:
        raise ConfigError("the cluster family needs clusters: give clusters=FILE / --clusters FILE "
                          "(the paths that `structperc clusters` writes)")
    return families


# ------------------------------------------------------------------------------------ entity keys
def _is_capitalised(word):
    return word[:1].isupper()


class TypeCounts:
    """Per document (or gazetteer), key -> Counter of types, with each sentence's own share kept
    apart so that ``elsewhere`` leaves a sentence's own occurrences out."""

    def __init__(self):
        self.total = {}  # key -> {type: count}
        self.own = {}    # sentence -> key -> {type: count}

    def add(self, key, kind, weight, sentence):
        counts = self.total.get(key)
        if counts is None:
            counts = self.total[key] = {}
        counts[kind] = counts.get(kind, 0) + weight
        own = self.own.get(sentence)
        if own is None:
            own = self.own[sentence] = {}
        counts = own.get(key)
        if counts is None:
            counts = own[key] = {}
        counts[kind] = counts.get(kind, 0) + weight

    def elsewhere(self, key, sentence):
        total = self.total.get(key)
        if not total:
            return {}
        own = self.own.get(sentence, {}).get(key)
        if not own:
            return total
        out = {kind: count - own.get(kind, 0) for kind, count in total.items()}
        return {kind: count for kind, count in out.items() if count > 1e-9}


def shares(counts):
    """The share of every type of a Counter of types, as a tuple of (type, share); () when empty."""
    total = sum(counts.values())
    if total <= 0:
        return ()
    return tuple((kind, count / total) for kind, count in counts.items())


def _share_features(prefix, kind, type_shares, out, with_none=True):
    """``prefix:kind=T'`` (share of T') and ``prefix:agree`` (share of kind) of ``shares``' tuple."""
    if not type_shares:
        if with_none:
            out.append((f"{prefix}:{kind}:none", 1.0))
        return
    agree = 0.0
    for other, share in type_shares:
        out.append((f"{prefix}:{kind}={other}", share))
        if other == kind:
            agree = share
    out.append((f"{prefix}:agree", agree))


# ------------------------------------------------------------------------------------ context
class ListContext:
    """What the document-level features of an NBestList read: per document the types of entity
    strings, lower-cased strings and words in the base's 1-best and in all candidates.

    nb : NBestList; documents : int64 (n_sentences,) (``document_ids``); gazetteers : list of
    Gazetteer and gazetteer_of : int64 (n_sentences,) the gazetteer of each sentence (or None);
    blocks : int64 (n_sentences,), the sentences whose lists one base model made (the jackknife fold
    of each training sentence), which the ``corpus`` family counts over; None: the whole file.
    """

    def __init__(self, nb, documents, gazetteers=None, gazetteer_of=None, blocks=None, spans=None):
        self.nb = nb
        self.documents = np.asarray(documents, dtype=np.int64)
        self.gazetteers = gazetteers or []
        self.gazetteer_of = gazetteer_of
        self.blocks = (np.zeros(nb.n_sentences, dtype=np.int64) if blocks is None
                       else np.asarray(blocks, dtype=np.int64))
        self.spans = CandidateSpans(nb) if spans is None else spans

    @functools.cached_property
    def over_blocks(self):
        """A ListContext of the same lists whose documents are the blocks: the ``corpus`` family's counts."""
        return ListContext(self.nb, self.blocks, spans=self.spans)

    @functools.cached_property
    def words(self):
        """The corpus's words interned (``interned.DocumentWords``)."""
        return DocumentWords(self.nb.corpus.columns["word"])

    @property
    def one(self):
        """document -> TypeCounts of the keys of the base's 1-best."""
        return self._counts[0]

    @property
    def many(self):
        """document -> TypeCounts of the keys of all candidates, each weighing 1/k."""
        return self._counts[1]

    @functools.cached_property
    def _counts(self):
        """(one, many), counted when first read: tagging reads them through the interned kernels."""
        nb, spans = self.nb, self.spans
        words, o = nb.corpus.columns["word"], nb.corpus.sentence_offsets
        one = collections.defaultdict(TypeCounts)   # document -> counts of the 1-best's keys
        many = collections.defaultdict(TypeCounts)  # document -> counts over the candidates, each 1/k
        n_candidates = np.diff(nb.candidate_offsets)
        # each distinct chunk once: its share of its sentence's candidates, and whether the 1-best has it
        shares = (np.bincount(spans.distinct_of, minlength=spans.n_distinct)
                  / np.maximum(n_candidates[spans.distinct_sentence], 1))
        in_one = np.zeros(spans.n_distinct, dtype=bool)
        in_one[spans.distinct_of[spans.in_first]] = True
        type_names = spans.type_names
        for d, (i, kind, first, last, share, first_best) in enumerate(zip(
                spans.distinct_sentence.tolist(), spans.distinct_type.tolist(), spans.distinct_first.tolist(),
                spans.distinct_last.tolist(), shares.tolist(), in_one.tolist())):
            document = int(self.documents[i])
            kind = type_names[kind]
            w = words[o[i]: o[i + 1]]
            string, lower = entity_keys(w, first, last)
            keys = [("s", string), ("l", lower)] + [("w", w[t]) for t in range(first, last + 1)]
            for key in keys:
                many[document].add(key, kind, share, i)
                if first_best:
                    one[document].add(key, kind, 1.0, i)
        # capitalised words left outside every chunk, with their share of the candidates
        capitalised = np.fromiter((_is_capitalised(w) for w in words), dtype=np.bool_, count=len(words))
        candidates, tokens = outside_tokens(nb.path_offsets, spans.offsets, spans.first, spans.last,
                                            spans.token_start, capitalised)
        sentence_of_token = np.repeat(np.arange(nb.corpus.n_sentences), np.diff(o))
        counts = np.bincount(tokens, minlength=len(words))
        first_counts = np.bincount(tokens[spans.first_candidate[candidates]], minlength=len(words))
        for t in np.flatnonzero(counts).tolist():
            i = int(sentence_of_token[t])
            document = int(self.documents[i])
            many[document].add(("w", words[t]), "O", counts[t] / n_candidates[i], i)
            if first_counts[t]:
                one[document].add(("w", words[t]), "O", 1.0, i)
        return one, many

    def gazetteer(self, i):
        if self.gazetteer_of is None or not self.gazetteers:
            return None
        return self.gazetteers[int(self.gazetteer_of[i])]

    def _elsewhere_shares(self, source, key, i):
        """``shares`` of what ``key`` gets elsewhere in sentence i's document, in the 1-best
        (source "d1") or the candidates ("dn"); cached, as the chunks of one sentence's candidates
        repeat their strings with other types."""
        cache = self.__dict__.setdefault("_share_cache", {})
        found = cache.get((source, key, i))
        if found is None:
            counts = (self.one if source == "d1" else self.many).get(int(self.documents[i]))
            found = cache[(source, key, i)] = () if counts is None else shares(counts.elsewhere(key, i))
        return found

    def entity_features(self, i, words, kind, first, last, families):
        """(feature string, value) pairs of the entity words[first..last] of type ``kind``."""
        out = []
        for prefix, type_shares, with_none in self._span_shares(i, words, first, last, tuple(families)):
            _share_features(prefix, kind, type_shares, out, with_none)
        return out

    def _span_shares(self, i, words, first, last, families):
        """[(prefix, shares, with_none)] of the words[first..last] of sentence i, whatever their type
        (cached: a sentence's candidates give one span several types)."""
        cache = self.__dict__.setdefault("_span_cache", {})
        found = cache.get((i, first, last, families))
        if found is not None:
            return found
        found = []
        string, lower = entity_keys(words, first, last)
        if "document" in families:
            d = int(self.documents[i])
            for source in ("d1", "dn"):
                if (self.one if source == "d1" else self.many).get(d) is None:
                    continue
                found += [(f"{source}s", self._elsewhere_shares(source, ("s", string), i), True),
                          (f"{source}l", self._elsewhere_shares(source, ("l", lower), i), False),
                          (f"{source}h", self._elsewhere_shares(source, ("w", words[last]), i), False)]
        if "gazetteer" in families:
            gazetteer = self.gazetteer(i)
            if gazetteer is not None:
                found += [("gs", shares(gazetteer.strings.get(string, {})), True),
                          ("gl", shares(gazetteer.lowers.get(lower, {})), False)]
        cache[(i, first, last, families)] = found
        return found

    def outside_features(self, i, word):
        """(feature string, value) pairs of a capitalised word left outside every entity."""
        if not _is_capitalised(word):
            return ()
        out = []
        d = int(self.documents[i])
        for source, counts in (("d1o", self.one.get(d)), ("dno", self.many.get(d))):
            if counts is None:
                continue
            elsewhere = counts.elsewhere(("w", word), i)
            total = sum(elsewhere.values())
            for kind, count in elsewhere.items():
                out.append((f"{source}:{kind}", count / total))
        return out


@functools.lru_cache(maxsize=65536)
def _cached_spans(labels):
    return chunk_spans(labels)


# ------------------------------------------------------------------------------------ featurizing
def candidate_merits(nb):
    """Per candidate, 2 * correct - predicted entities (``NBestList.oracle_choice``'s merit): the
    targets the learners rank by; corpus F1 rises with it at a fixed number of gold entities."""
    if nb.metric != "f1":
        return np.zeros(nb.n_candidates) if nb.task_scores is None else nb.task_scores.astype(np.float64)
    return (2 * nb.counts[:, 0] - nb.counts[:, 1]).astype(np.float64)


def posterior_temperature(nb, families):
    """The ``posterior`` family's temperature for training lists ``nb``: ``posterior.fit_temperature``
    against ``candidate_merits``; 1 when ``families`` leave the family out."""
    return fit_temperature(nb, candidate_merits(nb)) if "posterior" in families else 1.0


def featurize_in_context(nb, families, context=None, vocabulary=None, grow=False, clusters=None, temperature=1.0):
    """RankingData of an NBestList with the feature families ``families`` (see the module
    docstring); one group per sentence with candidates (qid = sentence index + 1), targets from
    ``candidate_merits``. ``context`` (a ListContext of ``nb``) is needed by ``document``, ``corpus``
    and ``gazetteer``; ``clusters`` (``clusters.ClusterPaths``, or what ``ClusterPaths.of`` takes) by
    ``cluster``; ``temperature`` the ``posterior`` family's (``posterior_temperature``). Returns
    (RankingData, vocabulary).

    A chunk's features are made once per distinct (sentence, type, first, last) and a word's outside
    features once per token; every candidate then gathers those of its chunks and outside tokens.
    """
    return _in_context(nb, families, context, vocabulary, grow, clusters, temperature)


def scores_in_context(nb, families, context, vocabulary, weights, clusters=None, temperature=1.0):
    """float64 (C,): weights · x of every candidate of ``nb``, x its row of ``featurize_in_context``
    with the fixed ``vocabulary``, up to rounding: what a linear reranker scores. Where the interned
    kernels apply (tagging), the rows are never made."""
    weights = np.asarray(weights, dtype=np.float64)
    scored = _in_context(nb, families, context, vocabulary, False, clusters, temperature, weights)
    return scored if isinstance(scored, np.ndarray) else scored[0].scores(weights)


def _in_context(nb, families, context, vocabulary, grow, clusters, temperature, weights=None):
    """``featurize_in_context``; with ``weights``, the scores where the interned kernels apply."""
    families = check_families(families, clusters)
    if context is None and any(f in families for f in ("document", "corpus", "gazetteer")):
        raise ConfigError("the document, corpus and gazetteer features need a ListContext")
    vocabulary = {} if vocabulary is None else vocabulary
    spans = context.spans if context is not None and context.nb is nb else CandidateSpans(nb)
    corpus = nb.corpus
    o = corpus.sentence_offsets
    columns = corpus.columns
    n_candidates = nb.n_candidates
    entity_names = [name for family, names in CHUNK_FEATURE_FAMILIES.items() if family in families for name in names]
    chunk_features = [FEATURES[n] for n in entity_names if hasattr(FEATURES[n], "of_chunk")]
    has_entity_word = "entity_word" in entity_names
    clusters = ClusterPaths.of(clusters) if "cluster" in families else None
    in_context = [f for f in families if f in ("document", "gazetteer")]
    counted = in_context or "corpus" in families  # families that read a ListContext

    def feature_id(string):
        fid = vocabulary.get(string)
        if fid is None:
            if not grow:
                return -1
            fid = vocabulary[string] = len(vocabulary) + FIRST_FEATURE_ID
        return fid

    def csr(lists):
        """(offsets, ids, values) of a list of [(id, value), ...] (unknown ids, -1, are dropped with
        the rest at the end)."""
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(pairs) for pairs in lists], out=offsets[1:])
        flat = list(itertools.chain.from_iterable(lists))
        ids = np.fromiter((f for f, _ in flat), dtype=np.int64, count=len(flat))
        values = np.fromiter((v for _, v in flat), dtype=np.float64, count=len(flat))
        return offsets, ids, values

    def gather(owners, items, offsets, ids, values):
        """The (candidate, id, value) entries of the item rows ``items`` owned by ``owners``."""
        lengths = offsets[items + 1] - offsets[items]
        entries = index_ranges(offsets[items], offsets[items + 1])
        return np.repeat(owners, lengths), ids[entries], values[entries]

    def outside_part(counts, rename):
        """The entries of the capitalised words that candidates leave outside their chunks, with the
        shares of ``counts`` (a ListContext), each feature string passed through ``rename``."""
        words = columns["word"]
        sentence_of_token = np.repeat(np.arange(corpus.n_sentences), np.diff(o))
        capitalised = np.fromiter((_is_capitalised(w) for w in words), dtype=np.bool_, count=len(words))
        candidates, outside = outside_tokens(nb.path_offsets, spans.offsets, spans.first, spans.last,
                                             spans.token_start, capitalised)
        distinct, row_of_entry = np.unique(outside, return_inverse=True)
        rows = [[(feature_id(rename(text)), value) for text, value in
                 counts.outside_features(int(sentence_of_token[t]), words[t])] for t in distinct.tolist()]
        return gather(candidates, row_of_entry.reshape(-1).astype(np.int64), *csr(rows))

    # with a fixed vocabulary, the kernels of ``interned`` make all but the string families' features
    fast = not grow and (not counted or (context.nb is nb and context.words.exact))
    parts = []  # (candidates, ids, values) arrays
    scores = nb.scores - np.repeat(nb.scores[nb.candidate_offsets[:-1][np.diff(nb.candidate_offsets) > 0]],
                                   np.diff(nb.candidate_offsets)[np.diff(nb.candidate_offsets) > 0])
    parts.append((np.arange(n_candidates, dtype=np.int64), np.full(n_candidates, SCORE_FEATURE, dtype=np.int64),
                  scores.astype(np.float64)))
    type_names = spans.type_names
    if chunk_features or has_entity_word or clusters is not None or (in_context and not fast):
        found, tokens, sentence = [], None, -1
        words = None
        for i, kind, first, last in zip(spans.distinct_sentence.tolist(), spans.distinct_type.tolist(),
                                        spans.distinct_first.tolist(), spans.distinct_last.tolist()):
            if i != sentence:
                sentence = i
                tokens = {name: values[o[i]: o[i + 1]] for name, values in columns.items()}
                words = tokens["word"]
            kind = type_names[kind]
            try:
                strings = [(f.of_chunk(tokens, kind, first, last), 1.0) for f in chunk_features]
            except KeyError as exc:
                raise ConfigError(f"a chunk feature needs the input column {exc}") from None
            if has_entity_word:
                strings += [(f"ei={kind}:{w}", 1.0) for w in words[first: last + 1]]
            if clusters is not None:
                strings += [(text, 1.0) for text in clusters.strings(words, kind, first, last)]
            if in_context and not fast:
                strings += context.entity_features(i, words, kind, first, last, in_context)
            found.append([(feature_id(text), value) for text, value in strings])
        parts.append(gather(spans.candidate, spans.distinct_of, *csr(found)))
    if "phrase" in families:
        parts.append(phrase_parts(nb, spans, feature_id))
    if "posterior" in families:
        parts += posterior_parts(nb, spans, feature_id, temperature)
    if fast:
        where = {} if not counted else dict(words=context.words, documents=context.documents,
                                            gazetteers=context.gazetteers, gazetteer_of=context.gazetteer_of,
                                            blocks=context.blocks)
        if weights is not None:
            return interned_scores(nb, families, spans, vocabulary, weights, given_parts=parts[1:], **where)
        return featurize_interned(nb, families, spans, vocabulary=vocabulary, targets=candidate_merits(nb),
                                  given_parts=parts[1:], **where), vocabulary
    if "document" in families:
        parts.append(outside_part(context, str))
    if "corpus" in families:
        blocks = context.over_blocks
        found, sentence = [], -1
        for i, kind, first, last in zip(spans.distinct_sentence.tolist(), spans.distinct_type.tolist(),
                                        spans.distinct_first.tolist(), spans.distinct_last.tolist()):
            if i != sentence:
                sentence, words = i, columns["word"][o[i]: o[i + 1]]
            found.append([(feature_id(corpus_name(text)), value) for text, value in
                          blocks.entity_features(i, words, type_names[kind], first, last, ["document"])])
        parts.append(gather(spans.candidate, spans.distinct_of, *csr(found)))
        parts.append(outside_part(blocks, corpus_name))
    if "sequence" in families:
        n_labels = len(nb.label_names)
        names = list(nb.label_names) + ["<s>", "</s>"]
        width = n_labels + 2
        candidates, codes = label_trigrams(nb.paths, nb.path_offsets, n_labels)
        distinct, inverse = np.unique(codes, return_inverse=True)
        ids = np.asarray([feature_id(f"l3={names[c // (width * width)]} {names[(c // width) % width]} "
                                     f"{names[c % width]}") for c in distinct.tolist()], dtype=np.int64)
        parts.append((candidates, ids[inverse.reshape(-1)], np.ones(len(codes))))
        # entities per type (4 and more as one), and the sequence of entity types
        n_types = len(type_names)
        per_type = np.bincount(spans.candidate * n_types + spans.type, minlength=n_candidates * n_types)
        owners, kinds = np.divmod(np.flatnonzero(per_type), n_types)
        counts = np.minimum(per_type[owners * n_types + kinds], 4)
        count_ids = {}
        ids = np.asarray([count_ids.setdefault((k, n), feature_id(f"nT={type_names[k]}:{n}"))
                          for k, n in zip(kinds.tolist(), counts.tolist())], dtype=np.int64)
        parts.append((owners.astype(np.int64), ids, np.ones(len(ids))))
        sequence_ids = {}
        span_types, offsets = spans.type.tolist(), spans.offsets.tolist()
        ids = np.empty(n_candidates, dtype=np.int64)
        for c in range(n_candidates):
            key = tuple(span_types[offsets[c]: offsets[c + 1]])
            fid = sequence_ids.get(key)
            if fid is None:
                fid = sequence_ids[key] = feature_id("cseq=" + " ".join(type_names[k] for k in key))
            ids[c] = fid
        parts.append((np.arange(n_candidates, dtype=np.int64), ids, np.ones(n_candidates)))
    if "rank" in families:
        ranks = np.minimum(nb.ranks(), 5)
        rank_ids = np.full(6, -1, dtype=np.int64)
        for r in np.unique(ranks).tolist():
            rank_ids[r] = feature_id(f"rank={r}")
        parts.append((np.arange(n_candidates, dtype=np.int64), rank_ids[ranks], np.ones(n_candidates)))
    # rows: each candidate's features by ascending id, the values of a repeated id summed in order
    candidates = np.concatenate([p[0] for p in parts])
    ids = np.concatenate([p[1] for p in parts])
    values = np.concatenate([p[2] for p in parts])
    known = ids >= 0
    candidates, ids, values = candidates[known], ids[known], values[known]
    order = np.lexsort((ids, candidates))
    candidates, ids, values = candidates[order], ids[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], (candidates[1:] != candidates[:-1]) | (ids[1:] != ids[:-1])]))
    values = np.add.reduceat(values, starts) if len(values) else values
    candidates, ids = candidates[starts], ids[starts]
    row_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
    np.cumsum(np.bincount(candidates, minlength=n_candidates), out=row_offsets[1:])
    cand_counts = np.diff(nb.candidate_offsets)
    group_offsets = np.concatenate([[0], np.cumsum(cand_counts[cand_counts > 0])]).astype(np.int64)
    kept = np.flatnonzero(cand_counts > 0).astype(np.int64)
    return RankingData(group_offsets, row_offsets, ids.astype(np.int64), values.astype(np.float64),
                       candidate_merits(nb), kept + 1, []), vocabulary
