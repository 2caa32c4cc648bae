"""Featurizing n-best lists in their documents' context over interned strings, with a fixed vocabulary
(tagging, scoring dev lists): the features of ``rerank.context`` with the same ids, computed by the
kernels of ``_kernels.rank`` over flat int arrays instead of feature strings built per chunk.

Per call, the corpus's words are interned once (``DocumentWords``: a word id per token, each distinct
word's lower-cased id and capitalisation). An entity's string and lower-cased string are then the
nodes of its word ids in a trie (``_kernels.rank.interning``), a gazetteer's keys are looked up in the
gazetteer's own trie (``gazetteer.InternedGazetteer``, made once per gazetteer), and the feature
strings of the document and gazetteer families, finitely many per type, are looked up once in the
vocabulary (``context_tables``). That an entity's string is its words joined by spaces is what makes
the tries exact: a corpus with a space inside a word is featurized by ``rerank.context`` instead
(``DocumentWords.exact``).
"""
from collections import namedtuple

import numpy as np

from structperc._kernels.rank.candidates import outside_tokens, trigram_counts
from structperc._kernels.rank.interning import first_ids, intern_ranges, lookup_ranges, new_trie
from structperc._kernels.rank.rows import add_entry_scores, add_row_scores, candidate_rows
from structperc._kernels.rank.type_shares import (ChunkDocuments, ChunkSpans, GazetteerEntries, ShareIds, chunk_rows,
                                                  document_counts, entity_keys, outside_rows)
from structperc.rerank.data import SCORE_FEATURE, RankingData

SHARE_PREFIXES = ("d1s", "d1l", "d1h", "dns", "dnl", "dnh", "gs", "gl")
OUTSIDE_PREFIXES = ("d1o", "dno")
OUTSIDE_TYPE = "O"
TABLE_LIMIT = 1 << 21  # label trigram codes counted in a table up to this many, sorted beyond


class DocumentWords:
    """The words of a corpus interned: word_of_token int64 (N,); words, the distinct words in order of
    first occurrence; lower_of_word int64 (W,) ids of their lower-cased forms (``lowers``);
    capitalised bool (W,) (``context._is_capitalised``)."""

    def __init__(self, tokens):
        self.words = list(dict.fromkeys(tokens))
        index = {w: i for i, w in enumerate(self.words)}
        self.word_of_token = np.fromiter(map(index.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        self.lowers = list(dict.fromkeys(w.lower() for w in self.words))
        lower_index = {w: i for i, w in enumerate(self.lowers)}
        self.lower_of_word = np.fromiter((lower_index[w.lower()] for w in self.words), dtype=np.int64,
                                         count=len(self.words))
        self.capitalised = np.fromiter((w[:1].isupper() for w in self.words), dtype=np.bool_, count=len(self.words))

    @property
    def exact(self):
        """Whether joining a span's words with spaces is one-to-one (no word holds a space)."""
        return not any(" " in w for w in self.words)


def corpus_name(name):
    """The ``corpus`` family's name of a ``document`` feature: d1s:... -> c1s:..., dno:... -> cno:..."""
    return "c" + name[1:]


class CorpusNames:
    """A vocabulary seen through ``corpus_name``: ``context_tables`` of it gives the ``corpus``
    family's ids in the document features' places (and none for the gazetteer's)."""

    def __init__(self, vocabulary):
        self.vocabulary = vocabulary

    def get(self, name, default=None):
        if not name.startswith(("d1", "dn")):
            return default
        return self.vocabulary.get(corpus_name(name), default)


def context_tables(vocabulary, type_names):
    """(pair_ids, agree_ids, none_ids, outside_ids) of ``_kernels.rank.type_shares``: the vocabulary's
    ids of the share features over ``type_names`` (-1 where it lacks one)."""
    n = len(type_names)
    pair_ids = np.full((len(SHARE_PREFIXES), n, n), -1, dtype=np.int64)
    none_ids = np.full((len(SHARE_PREFIXES), n), -1, dtype=np.int64)
    agree_ids = np.full(len(SHARE_PREFIXES), -1, dtype=np.int64)
    outside_ids = np.full((len(OUTSIDE_PREFIXES), n), -1, dtype=np.int64)
    for p, prefix in enumerate(SHARE_PREFIXES):
        agree_ids[p] = vocabulary.get(f"{prefix}:agree", -1)
        for a, kind in enumerate(type_names):
            none_ids[p, a] = vocabulary.get(f"{prefix}:{kind}:none", -1)
            for b, other in enumerate(type_names):
                pair_ids[p, a, b] = vocabulary.get(f"{prefix}:{kind}={other}", -1)
    for p, prefix in enumerate(OUTSIDE_PREFIXES):
        for b, other in enumerate(type_names):
            outside_ids[p, b] = vocabulary.get(f"{prefix}:{other}", -1)
    return pair_ids, agree_ids, none_ids, outside_ids


def _gazetteer_entries(spans, words, starts, ends, gazetteers, gazetteer_of, type_index):
    """(string entry, lower entry) int64 (D,) of every distinct chunk in its sentence's gazetteer (-1:
    not there, -2: no gazetteer), and the entries' (offsets, types, counts), types into type_index."""
    n = spans.n_distinct
    string_entry = np.full(n, -2, dtype=np.int64)
    lower_entry = np.full(n, -2, dtype=np.int64)
    offsets, kinds, counts = [np.zeros(1, dtype=np.int64)], [], []
    if gazetteer_of is None or not gazetteers:
        return string_entry, lower_entry, (offsets[0], np.zeros(0, dtype=np.int64), np.zeros(0))
    which = np.asarray(gazetteer_of, dtype=np.int64)[spans.distinct_sentence]
    first_entry = 0
    for g, gazetteer in enumerate(gazetteers):
        table = gazetteer.interned
        here = np.flatnonzero(which == g)
        if len(here):
            word_ids = np.fromiter((table.words.get(w, -1) for w in words.words), dtype=np.int64,
                                   count=len(words.words))
            lower_ids = np.fromiter((table.lowers.get(w, -1) for w in words.lowers), dtype=np.int64,
                                    count=len(words.lowers))
            for out, items, trie, entry_of_node in (
                    (string_entry, word_ids[words.word_of_token], table.string_trie, table.string_entry),
                    (lower_entry, lower_ids[words.lower_of_word[words.word_of_token]], table.lower_trie,
                     table.lower_entry)):
                nodes = lookup_ranges(trie, items, starts[here], ends[here])
                found = (np.where(nodes >= 0, entry_of_node[np.maximum(nodes, 0)], -1) if len(entry_of_node)
                         else np.full(len(nodes), -1, dtype=np.int64))
                out[here] = np.where(found >= 0, found + first_entry, -1)
        type_map = np.asarray([type_index[name] for name in table.type_names], dtype=np.int64)
        offsets.append(table.entry_offsets[1:] + (offsets[-1][-1]))
        kinds.append(type_map[table.entry_types])
        counts.append(table.entry_counts)
        first_entry += len(table.entry_offsets) - 1
    return string_entry, lower_entry, (np.concatenate(offsets), np.concatenate(kinds), np.concatenate(counts))


Additions = namedtuple("Additions", "key_offsets sentence added kinds weights in_one n_keys own_slot n_own "
                                    "tokens token_sentence outside_candidates outside_rows chunk_span n_spans")
Additions.__doc__ = """What every distinct chunk and outside word adds to the document family's counts,
whatever the documents (``chunk_additions``): the document and corpus families share it.

key_offsets int64 (D + 1,): each distinct chunk's additions; sentence, added (keys), kinds, weights,
in_one (bool: the base's 1-best has it) per addition; n_keys; own_slot int64 (additions,), n_own: the
(sentence, key) slots; tokens, token_sentence int64 (R,): the capitalised words that some candidate
leaves outside its chunks; (outside_candidates, outside_rows): every (candidate, row of such a word);
chunk_span int64 (D,), n_spans: each distinct chunk's tokens numbered."""

DocumentCounts = namedtuple("DocumentCounts", "tables total_slot in_one in_many")
DocumentCounts.__doc__ = """What the document family reads (``document_counts``) for one partition into
documents: the one/many total/own tables of ``_kernels.rank.type_shares.document_counts``; total_slot
int64 (additions,); in_one, in_many: bool (D + R,), whether the document of each chunk, then of each
outside word, has counts in the 1-best, in the candidates."""


def chunk_bounds(nb, spans):
    """(starts, ends) int64 (D,): the tokens of every distinct chunk, starts to ends - 1."""
    o = nb.corpus.sentence_offsets
    return (o[spans.distinct_sentence] + spans.distinct_first, o[spans.distinct_sentence] + spans.distinct_last + 1)


def outside_type_of(spans):
    """The type number of "O" (``context_parts``'s numbering: the chunk types, then "O")."""
    return {name: t for t, name in enumerate(spans.type_names)}.get(OUTSIDE_TYPE, len(spans.type_names))


def chunk_additions(nb, spans, words):
    """Additions of an NBestList: each distinct chunk adds its type under its keys (string key,
    lower-cased key, each token's word key), then each outside capitalised word adds "O" under its
    word, in the order ``context.ListContext`` adds them."""
    corpus = nb.corpus
    starts, ends = chunk_bounds(nb, spans)
    # keys: an entity's string and lower-cased string are nodes of one trie (lower-cased word ids after
    # the word ids), a word is the number of nodes + its id
    trie = new_trie()
    string_key = intern_ranges(trie, words.word_of_token, starts, ends)
    lower_key = intern_ranges(trie, len(words.words) + words.lower_of_word[words.word_of_token], starts, ends)
    word_key = len(trie) + words.word_of_token
    n_candidates = np.diff(nb.candidate_offsets)
    n_keys = int(word_key.max()) + 1 if len(word_key) else 1
    outside_candidates, outside = outside_tokens(nb.path_offsets, spans.offsets, spans.first, spans.last,
                                                 spans.token_start, words.capitalised[words.word_of_token])
    per_token = np.bincount(outside, minlength=corpus.n_tokens)
    first_per_token = np.bincount(outside[spans.first_candidate[outside_candidates]], minlength=corpus.n_tokens)
    tokens = np.flatnonzero(per_token)
    token_sentence = np.repeat(np.arange(corpus.n_sentences, dtype=np.int64), np.diff(corpus.sentence_offsets))[tokens]
    chunk_share = (np.bincount(spans.distinct_of, minlength=spans.n_distinct)
                   / np.maximum(n_candidates[spans.distinct_sentence], 1))
    chunk_in_one = np.zeros(spans.n_distinct, dtype=bool)
    chunk_in_one[spans.distinct_of[spans.in_first]] = True
    key_offsets, chunk_keys = entity_keys(string_key, lower_key, word_key, starts, ends)
    lengths = np.diff(key_offsets)
    sentence = np.concatenate([np.repeat(spans.distinct_sentence, lengths), token_sentence])
    added = np.concatenate([chunk_keys, word_key[tokens]])
    kinds = np.concatenate([np.repeat(spans.distinct_type, lengths),
                            np.full(len(tokens), outside_type_of(spans), dtype=np.int64)])
    weights = np.concatenate([np.repeat(chunk_share, lengths), per_token[tokens] / n_candidates[token_sentence]])
    in_one = np.concatenate([np.repeat(chunk_in_one, lengths), first_per_token[tokens] > 0])
    own_slot, n_own = first_ids(sentence * n_keys + added)
    chunk_span, n_spans = first_ids(starts * (corpus.n_tokens + 1) + ends)
    return Additions(key_offsets, sentence, added, kinds, weights, in_one, n_keys, own_slot, n_own, tokens,
                     token_sentence, outside_candidates, np.searchsorted(tokens, outside), chunk_span, n_spans)


def count_documents(spans, additions, documents):
    """DocumentCounts of the additions of an NBestList's chunks and outside words (``chunk_additions``)
    with documents int64 (n_sentences,)."""
    a = additions
    total_slot, n_total = first_ids(documents[a.sentence] * a.n_keys + a.added)
    tables = document_counts(n_total, a.n_own, total_slot, a.own_slot, a.kinds, a.weights, a.in_one)
    n_documents = int(documents.max()) + 1 if len(documents) else 1
    one_documents = np.zeros(n_documents, dtype=bool)
    many_documents = np.zeros(n_documents, dtype=bool)
    one_documents[documents[a.sentence[a.in_one]]] = True
    many_documents[documents[a.sentence]] = True
    owners = documents[np.concatenate([spans.distinct_sentence, a.token_sentence])]
    return DocumentCounts(tables, total_slot, one_documents[owners], many_documents[owners])


def context_parts(nb, families, spans, words, documents, gazetteers, gazetteer_of, vocabulary, additions=None):
    """The parts (``candidate_parts``) of the document and gazetteer families: a row per distinct
    chunk, owned by the candidates that have it, then a row per outside word. additions: the list's
    ``chunk_additions`` when the caller has them (the document family reads them)."""
    documents = np.asarray(documents, dtype=np.int64)
    type_index = {name: t for t, name in enumerate(spans.type_names)}
    for name in [OUTSIDE_TYPE, *(name for g in gazetteers or [] for name in g.interned.type_names)]:
        type_index.setdefault(name, len(type_index))
    n_types = len(type_index)
    n_chunks = spans.n_distinct
    starts, ends = chunk_bounds(nb, spans)
    if "gazetteer" in families:
        string_entry, lower_entry, entries = _gazetteer_entries(spans, words, starts, ends, gazetteers, gazetteer_of,
                                                                type_index)
    else:
        string_entry = lower_entry = np.full(n_chunks, -2, dtype=np.int64)
        entries = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    pair_ids, agree_ids, none_ids, outside_ids = context_tables(vocabulary, list(type_index))
    if "document" not in families:
        no = np.zeros(0, dtype=np.int64)
        tables = document_counts(1, 1, no, no, no, np.zeros(0), np.zeros(0, dtype=bool))
        documents = ChunkDocuments(tables, np.zeros(n_chunks + 1, dtype=np.int64), no, no,
                                   np.zeros(n_chunks, dtype=bool), np.zeros(n_chunks, dtype=bool))
        rows = chunk_rows(n_types, documents, ChunkSpans(spans.distinct_type, np.zeros(n_chunks, dtype=np.int64), 0),
                          GazetteerEntries(string_entry, lower_entry, *entries),
                          ShareIds(pair_ids, agree_ids, none_ids))
        return [(spans.candidate, spans.distinct_of, *rows)]
    a = chunk_additions(nb, spans, words) if additions is None else additions
    counted = count_documents(spans, a, documents)
    documents = ChunkDocuments(counted.tables, a.key_offsets, counted.total_slot, a.own_slot,
                               counted.in_one[:n_chunks], counted.in_many[:n_chunks])
    rows = chunk_rows(n_types, documents, ChunkSpans(spans.distinct_type, a.chunk_span, a.n_spans),
                      GazetteerEntries(string_entry, lower_entry, *entries), ShareIds(pair_ids, agree_ids, none_ids))
    parts = [(spans.candidate, spans.distinct_of, *rows)]
    first = int(a.key_offsets[-1])
    rows = outside_rows(n_types, counted.tables, counted.total_slot[first:], a.own_slot[first:],
                        counted.in_one[n_chunks:], counted.in_many[n_chunks:], outside_ids)
    parts.append((a.outside_candidates, a.outside_rows, *rows))
    return parts


def sequence_parts(nb, spans, vocabulary):
    """The parts (``candidate_parts``) of the sequence family: label trigrams, entities per type, the
    sequence of entity types."""
    n_candidates = nb.n_candidates
    n_labels = len(nb.label_names)
    names = list(nb.label_names) + ["<s>", "</s>"]
    width = n_labels + 2
    # a candidate's trigrams counted: their values are 1 each, so that the sum is the count, whatever the order
    offsets, codes, counts = trigram_counts(nb.paths, nb.path_offsets, n_labels)
    if width ** 3 <= TABLE_LIMIT:
        distinct = np.flatnonzero(np.bincount(codes, minlength=width ** 3))
        table = np.full(width ** 3, -1, dtype=np.int64)
        table[distinct] = [vocabulary.get(f"l3={names[c // (width * width)]} {names[(c // width) % width]} "
                                          f"{names[c % width]}", -1) for c in distinct.tolist()]
        trigram_ids = table[codes]
    else:
        distinct, inverse = np.unique(codes, return_inverse=True)
        trigram_ids = np.asarray([vocabulary.get(f"l3={names[c // (width * width)]} {names[(c // width) % width]} "
                                                 f"{names[c % width]}", -1) for c in distinct.tolist()],
                                 dtype=np.int64)[inverse.reshape(-1)]
    every = np.arange(n_candidates, dtype=np.int64)
    parts = [(every, every, offsets, trigram_ids, counts.astype(np.float64))]
    type_names = spans.type_names
    n_types = len(type_names)
    per_type = np.bincount(spans.candidate * n_types + spans.type, minlength=n_candidates * n_types)
    owners, kinds = np.divmod(np.flatnonzero(per_type), n_types)
    counts = np.minimum(per_type[owners * n_types + kinds], 4)
    table = np.full((n_types, 5), -1, dtype=np.int64)
    for k in range(n_types):
        for n in range(1, 5):
            table[k, n] = vocabulary.get(f"nT={type_names[k]}:{n}", -1)
    parts.append((owners.astype(np.int64), table[kinds, counts], np.ones(len(owners))))
    # the sequence of entity types: one trie node per distinct sequence
    nodes = intern_ranges(new_trie(), spans.type, spans.offsets[:-1].copy(), spans.offsets[1:].copy())
    distinct, first, inverse = np.unique(nodes, return_index=True, return_inverse=True)
    ids = np.asarray([vocabulary.get("cseq=" + " ".join(type_names[k] for k in
                                                       spans.type[spans.offsets[c]: spans.offsets[c + 1]].tolist()), -1)
                      for c in first.tolist()], dtype=np.int64)
    parts.append((np.arange(n_candidates, dtype=np.int64), ids[inverse.reshape(-1)], np.ones(n_candidates)))
    return parts


def candidate_parts(n_candidates, parts):
    """(ids, values, row_offsets) of the candidates' rows (``_kernels.rank.rows``) from parts, each
    (candidates, ids, values), entries by ascending candidate, or (owners, rows, offsets, ids, values),
    CSR rows owned by candidates."""
    owners, rows, offsets, ids, values = [], [], [np.zeros(1, dtype=np.int64)], [], []
    n_rows = n_entries = 0
    for part in parts:
        if len(part) == 3:  # one row per candidate (the entries' candidates ascend)
            owner, part_ids, part_values = part
            part_offsets = np.zeros(n_candidates + 1, dtype=np.int64)
            np.cumsum(np.bincount(owner, minlength=n_candidates), out=part_offsets[1:])
            owner = row = np.arange(n_candidates, dtype=np.int64)
        else:
            owner, row, part_offsets, part_ids, part_values = part
        owners.append(owner)
        rows.append(row + n_rows)
        offsets.append(part_offsets[1:] + n_entries)
        ids.append(part_ids)
        values.append(part_values)
        n_rows += len(part_offsets) - 1
        n_entries += len(part_ids)
    ids = np.concatenate(ids).astype(np.int64, copy=False)
    n_features = int(ids.max()) + 1 if len(ids) else 1
    row_ids, values, row_offsets = candidate_rows(
        n_candidates, n_features, np.concatenate(owners).astype(np.int64, copy=False),
        np.concatenate(rows).astype(np.int64, copy=False), np.concatenate(offsets).astype(np.int64, copy=False), ids,
        np.concatenate(values).astype(np.float64, copy=False))
    return row_ids, values, row_offsets


def interned_parts(nb, families, spans, vocabulary, words=None, documents=None, gazetteers=None, gazetteer_of=None,
                   given_parts=(), blocks=None):
    """The parts (``candidate_parts``) of every candidate's features: the score, then ``given_parts``
    (the entries ``context.featurize_in_context`` has made already: those of the string families,
    entity, around, cluster, chunk and phrase, and of the posterior family), then the document,
    gazetteer, corpus, sequence and rank families'.

    spans : ``spans.CandidateSpans`` of nb; words : DocumentWords of nb.corpus (``exact``);
    documents int64 (n_sentences,), gazetteers (list of Gazetteer) and gazetteer_of int64
    (n_sentences,) for the document and gazetteer families; blocks int64 (n_sentences,) for the
    corpus family (``context.ListContext``'s).
    """
    n_candidates = nb.n_candidates
    counts = np.diff(nb.candidate_offsets)
    has = counts > 0
    scores = nb.scores - np.repeat(nb.scores[nb.candidate_offsets[:-1][has]], counts[has])
    parts = [(np.arange(n_candidates, dtype=np.int64), np.full(n_candidates, SCORE_FEATURE, dtype=np.int64),
              scores.astype(np.float64)), *given_parts]
    # what the chunks and outside words add to the counts, whatever the documents: the document and
    # corpus families count the same additions over different documents
    additions = chunk_additions(nb, spans, words) if "document" in families or "corpus" in families else None
    if "document" in families or "gazetteer" in families:
        parts += context_parts(nb, families, spans, words, documents, gazetteers, gazetteer_of, vocabulary, additions)
    if "corpus" in families:
        parts += context_parts(nb, ["document"], spans, words, blocks, None, None, CorpusNames(vocabulary), additions)
    if "sequence" in families:
        parts += sequence_parts(nb, spans, vocabulary)
    if "rank" in families:
        ranks = np.minimum(nb.ranks(), 5)
        rank_ids = np.asarray([vocabulary.get(f"rank={r}", -1) for r in range(6)], dtype=np.int64)
        parts.append((np.arange(n_candidates, dtype=np.int64), rank_ids[ranks], np.ones(n_candidates)))
    return parts


def featurize_interned(nb, families, spans, vocabulary, targets, **where):
    """RankingData of an NBestList with a fixed vocabulary, as ``context.featurize_in_context`` makes
    it (same rows, ids and values, summed in the same order): the rows of ``interned_parts(nb,
    families, spans, vocabulary, **where)``; targets float64 (C,)."""
    counts = np.diff(nb.candidate_offsets)
    has = counts > 0
    ids, values, row_offsets = candidate_parts(nb.n_candidates, interned_parts(nb, families, spans, vocabulary,
                                                                                **where))
    group_offsets = np.concatenate([[0], np.cumsum(counts[has])]).astype(np.int64)
    kept = np.flatnonzero(has).astype(np.int64)
    return RankingData(group_offsets, row_offsets, ids, values, targets, kept + 1, [])


def interned_scores(nb, families, spans, vocabulary, weights, **where):
    """float64 (C,): weights · x of every candidate, x its row in ``featurize_interned`` (equal up to
    rounding: each part's sums are added to the candidates without making the rows)."""
    weights = np.asarray(weights, dtype=np.float64)
    scores = np.zeros(nb.n_candidates)
    for part in interned_parts(nb, families, spans, vocabulary, **where):
        *indices, values = part  # (candidates, ids) or (owners, rows, offsets, ids), then the values
        indices = [np.asarray(a, dtype=np.int64) for a in indices]
        add = add_entry_scores if len(part) == 3 else add_row_scores
        add(scores, *indices, np.asarray(values, dtype=np.float64), weights)
    return scores
