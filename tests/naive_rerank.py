"""Naive references of ``structperc.rerank.context``: the document counts and the featurizing of
n-best lists, one candidate at a time, as first written (the package computes them per distinct chunk
and token, with the kernels of ``structperc._kernels.rank.candidates``)."""
import collections
import math

import numpy as np

from structperc.rerank.context import (ENTITY_FAMILY, CHUNK_FAMILY, ListContext, TypeCounts, _cached_spans,
                                       _is_capitalised, candidate_merits, check_families, entity_keys)
from structperc.rerank.data import FIRST_FEATURE_ID, SCORE_FEATURE, RankingData
from structperc.rerank.features import FEATURES
from structperc.rerank.phrase import END, START, triple_strings

POSTERIOR_BUCKETS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)  # a chunk's bucket: how many of these its probability reaches


def naive_document_counts(nb, documents):
    """(one, many): per document the TypeCounts of the 1-best and of all candidates."""
    documents = np.asarray(documents, dtype=np.int64)
    names = nb.label_names
    corpus = nb.corpus
    words, o = corpus.columns["word"], corpus.sentence_offsets
    one = collections.defaultdict(TypeCounts)   # (document) -> counts of 1-best keys
    many = collections.defaultdict(TypeCounts)  # (document) -> counts over the candidates
    for i in range(nb.n_sentences):
        a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
        if b == a:
            continue
        d = int(documents[i])
        w = words[o[i]: o[i + 1]]
        weight = 1.0 / (b - a)
        for j in range(a, b):
            labels = tuple(names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            inside = np.zeros(len(w), dtype=bool)
            for kind, first, last in _cached_spans(labels):
                string, lower = entity_keys(w, first, last)
                inside[first: last + 1] = True
                for key in (("s", string), ("l", lower)):
                    many[d].add(key, kind, weight, i)
                    if j == a:
                        one[d].add(key, kind, 1.0, i)
                for t in range(first, last + 1):
                    many[d].add(("w", w[t]), kind, weight, i)
                    if j == a:
                        one[d].add(("w", w[t]), kind, 1.0, i)
            for t in np.flatnonzero(~inside):
                if _is_capitalised(w[t]):
                    many[d].add(("w", w[t]), "O", weight, i)
                    if j == a:
                        one[d].add(("w", w[t]), "O", 1.0, i)
    return one, many


def naive_cluster_strings(words, kind, first, last, clusters):
    """The ``cluster`` family of the entity words[first..last]: the prefixes of lengths 4, 6, 10 and 20
    of the paths (``clusters``, a dict word -> bit string) of its words and of the words around it."""
    out = []
    for n in (4, 6, 10, 20):
        def prefix(word):
            return clusters[word][:n] if word in clusters else "<none>"
        out += [f"ec{n}={kind}:{prefix(w)}" for w in words[first: last + 1]]
        out.append(f"ecb{n}={kind}:{prefix(words[first - 1]) if first > 0 else '<s>'}")
        out.append(f"eca{n}={kind}:{prefix(words[last + 1]) if last + 1 < len(words) else '</s>'}")
    return out


def naive_featurize(nb, families, context=None, vocabulary=None, grow=False, clusters=None, temperature=1.0):
    """``featurize_in_context``, one candidate at a time (clusters: a dict word -> bit string).
    Returns (RankingData, vocabulary)."""
    families = check_families(families, clusters)
    vocabulary = {} if vocabulary is None else vocabulary
    corpus = nb.corpus
    o = corpus.sentence_offsets
    columns = corpus.columns
    names = nb.label_names
    entity_names = (ENTITY_FAMILY if "entity" in families else []) + (CHUNK_FAMILY if "chunk" in families else [])
    chunk_features = [FEATURES[n] for n in entity_names if hasattr(FEATURES[n], "of_chunk")]
    has_entity_word = "entity_word" in entity_names
    in_context = [f for f in families if f in ("document", "gazetteer")]
    # the corpus family: the document features of a context whose documents are the blocks, renamed
    blocks = ListContext(nb, context.blocks) if "corpus" in families else None
    ranks = nb.ranks()

    def in_blocks(pairs):
        return [("c" + text[1:], value) for text, value in pairs]

    def feature_id(string):
        fid = vocabulary.get(string)
        if fid is None and grow:
            fid = vocabulary[string] = len(vocabulary) + FIRST_FEATURE_ID
        return fid

    row_ids, row_values, lengths = [], [], []
    for i in range(nb.n_sentences):
        a, b = nb.candidate_offsets[i], nb.candidate_offsets[i + 1]
        if b == a:
            continue
        tokens = {name: values[o[i]: o[i + 1]] for name, values in columns.items()}
        words = tokens["word"]
        top = nb.scores[a]
        span_cache, outside_cache, trigram_cache = {}, {}, {}
        # the posterior family: each candidate's probability, softmax(score / temperature) over the
        # sentence's list, and each chunk's, the sum over the candidates that have it
        exps = [math.exp((nb.scores[j] - max(nb.scores[a:b])) / temperature) for j in range(a, b)]
        chunk_probability = collections.defaultdict(float)
        for j in range(a, b):
            labels = tuple(names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            for chunk in set(_cached_spans(labels)):
                chunk_probability[chunk] += exps[j - a] / sum(exps)
        for j in range(a, b):
            labels = tuple(names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]])
            spans = _cached_spans(labels)
            values = collections.defaultdict(float)
            for kind, first, last in spans:
                key = (kind, first, last)
                pairs = span_cache.get(key)
                if pairs is None:
                    found = [(f.of_chunk(tokens, kind, first, last), 1.0) for f in chunk_features]
                    if has_entity_word:
                        found += [(f"ei={kind}:{w}", 1.0) for w in words[first: last + 1]]
                    if "around" in families:  # the words just outside the entity
                        before = words[first - 1] if first > 0 else "<s>"
                        after = words[last + 1] if last + 1 < len(words) else "</s>"
                        found += [(f"eb1={kind}:{before}", 1.0), (f"ea1={kind}:{after}", 1.0)]
                    if "cluster" in families:
                        found += [(text, 1.0) for text in naive_cluster_strings(words, kind, first, last, clusters)]
                    if in_context:
                        found += context.entity_features(i, words, kind, first, last, in_context)
                    if blocks is not None:
                        found += in_blocks(blocks.entity_features(i, words, kind, first, last, ["document"]))
                    pairs = span_cache[key] = [(fid, v) for fid, v in ((feature_id(s), v) for s, v in found)
                                               if fid is not None]
                for fid, v in pairs:
                    values[fid] += v
            if "phrase" in families:
                n = len(words)
                bounded = [(START, -1, -1), *spans, (END, n, n)]
                for m in range(1, len(bounded) - 1):
                    for text in triple_strings(words, tokens["pos"], *bounded[m - 1: m + 2]):
                        fid = feature_id(text)
                        if fid is not None:
                            values[fid] += 1.0
            if "posterior" in families:
                merit = 0.0
                for kind, first, last in spans:
                    p = min(chunk_probability[(kind, first, last)], 1.0)
                    bucket = sum(1 for threshold in POSTERIOR_BUCKETS if p >= threshold)
                    fid = feature_id(f"pp={kind}:{bucket}")
                    if fid is not None:
                        values[fid] += 1.0
                    merit += 2 * p - 1
                fid = feature_id("pp:merit")
                if fid is not None:
                    values[fid] += merit
            if "document" in families or blocks is not None:
                inside = np.zeros(len(labels), dtype=bool)
                for kind, first, last in spans:
                    inside[first: last + 1] = True
                for t in np.flatnonzero(~inside):
                    pairs = outside_cache.get(t)
                    if pairs is None:
                        found = context.outside_features(i, words[t]) if "document" in families else []
                        if blocks is not None:
                            found = [*found, *in_blocks(blocks.outside_features(i, words[t]))]
                        pairs = outside_cache[t] = [(fid, v) for fid, v in ((feature_id(s), v) for s, v in found)
                                                    if fid is not None]
                    for fid, v in pairs:
                        values[fid] += v
            if "sequence" in families:
                padded = ("<s>", "<s>") + labels + ("</s>",)
                for t in range(len(padded) - 2):
                    gram = padded[t: t + 3]
                    fid = trigram_cache.get(gram, -1)
                    if fid == -1:
                        fid = trigram_cache[gram] = feature_id("l3=" + " ".join(gram))
                    if fid is not None:
                        values[fid] += 1.0
                by_type = collections.Counter(kind for kind, _, _ in spans)
                for kind, n in by_type.items():
                    fid = feature_id(f"nT={kind}:{min(n, 4)}")
                    if fid is not None:
                        values[fid] += 1.0
                fid = feature_id("cseq=" + " ".join(kind for kind, _, _ in spans))
                if fid is not None:
                    values[fid] += 1.0
            if "rank" in families:
                fid = feature_id(f"rank={min(int(ranks[j]), 5)}")
                if fid is not None:
                    values[fid] += 1.0
            pairs = sorted(values.items())
            row_ids.append([SCORE_FEATURE] + [fid for fid, _ in pairs])
            row_values.append([float(nb.scores[j] - top)] + [v for _, v in pairs])
            lengths.append(len(pairs) + 1)
    cand_counts = np.diff(nb.candidate_offsets)
    group_offsets = np.concatenate([[0], np.cumsum(cand_counts[cand_counts > 0])]).astype(np.int64)
    row_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    nnz = int(row_offsets[-1])
    flat_ids = np.fromiter((f for ids in row_ids for f in ids), dtype=np.int64, count=nnz)
    flat_values = np.fromiter((v for vals in row_values for v in vals), dtype=np.float64, count=nnz)
    kept = np.flatnonzero(cand_counts > 0).astype(np.int64)
    return RankingData(group_offsets, row_offsets, flat_ids, flat_values, candidate_merits(nb), kept + 1,
                       []), vocabulary
