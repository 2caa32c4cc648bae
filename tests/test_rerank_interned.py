"""Featurizing n-best lists over interned ids (``rerank.interned`` and the kernels of
``_kernels.rank.interning`` / ``type_shares``) against the string featurizing it replaces: the same
rows, ids and values, bit for bit, on random corpora; the kernels against naive references; and a
reranked model saved before the kernels existed tags as it did; a linear reranker's scores without
the rows against the rows' dot products."""
import json
from pathlib import Path

import numpy as np
import pytest
from test_rerank_tagger import cluster_map, ner_corpus_text

from structperc._kernels.rank.candidates import distinct_in_blocks
from structperc._kernels.rank.interning import first_ids, intern_ranges, lookup_ranges, new_trie
from structperc._kernels.rank.rows import candidate_rows, pairwise_sum
from structperc.corpus import as_corpus
from structperc.estimator.tagger import Tagger
from structperc.nbest.jackknife import fold_split
from structperc.nbest.lists import nbest_corpus
from structperc.readers import read_corpus
from structperc.rerank.context import (FAMILIES, Gazetteer, ListContext, document_ids, featurize_in_context,
                                       jackknifed_gazetteers, scores_in_context)
from structperc.rerank.interned import DocumentWords, candidate_parts

DATA = Path(__file__).parent / "data"
# names that recur in several cases and spellings, one of several words, and a final sigma
NAMES = ["Jan", "jan", "JAN", "Peeters", "peeters", "Van", "van", "Dijk", "ΟΔΟΣ", "Οδός", "Ölçü", "De", "de"]
OTHERS = ["zag", "in", "de", "het", "Gent", "gisteren", ".", ","]
KINDS = ["PER", "LOC", "ORG", "MISC"]


def random_corpus(seed, n_sentences=60):
    """(word, pos) token lists with BIO labels: random names (1 to 3 words) between other words."""
    rng = np.random.default_rng(seed)
    sentences, labels = [], []
    for _ in range(n_sentences):
        words, tags = [], []
        for _ in range(int(rng.integers(1, 7))):
            if rng.random() < 0.4:
                kind = str(rng.choice(KINDS))
                name = [str(w) for w in rng.choice(NAMES, int(rng.integers(1, 4)))]
                words += [(w, "N") for w in name]
                tags += ["B-" + kind] + ["I-" + kind] * (len(name) - 1)
            else:
                words.append((str(rng.choice(OTHERS)), "X"))
                tags.append("O")
        sentences.append(words)
        labels.append(tags)
    return as_corpus(sentences, labels)


def same_data(ours, theirs):
    for name in ("group_offsets", "row_offsets", "feature_ids", "values", "targets", "qids"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name


def string_featurized(monkeypatch, nb, families, make_context, vocabulary, clusters=None):
    """featurize_in_context as it was: every feature through its string."""
    with monkeypatch.context() as patch:
        patch.setattr(DocumentWords, "exact", property(lambda self: False))
        return featurize_in_context(nb, families, make_context(), dict(vocabulary), clusters=clusters)[0]


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 5])
def test_interned_featurizing_equals_the_string_featurizing(monkeypatch, seed, k, threaded):
    """threaded: the chunks' and the candidates' rows made in ranges on three threads whatever their
    number (``type_shares.PARALLEL_FROM_CHUNKS`` and ``PARALLEL_FROM_ADDITIONS``, ``rows.PARALLEL_FROM_ENTRIES``)."""
    if threaded:
        from structperc._kernels import threads
        from structperc._kernels.rank import rows, type_shares

        monkeypatch.setattr(type_shares, "PARALLEL_FROM_CHUNKS", 1)
        monkeypatch.setattr(type_shares, "PARALLEL_FROM_ADDITIONS", 1)
        monkeypatch.setattr(rows, "PARALLEL_FROM_ENTRIES", 1)
        monkeypatch.setattr(threads, "thread_count", lambda: 3)
    corpus = random_corpus(seed)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(random_corpus(seed + 10, 20))
    nb = nbest_corpus(tagger, corpus, k)
    documents = document_ids(corpus, document_size=int(np.random.default_rng(seed).integers(2, 7)))
    fold_of = fold_split(corpus.n_sentences, 3, blocks=True)
    gazetteers = jackknifed_gazetteers(corpus, fold_of) + [Gazetteer.from_corpus(random_corpus(seed + 20))]
    clusters = cluster_map(NAMES + OTHERS, seed)
    for gazetteer_of, blocks in ((fold_of, fold_of), (np.full(corpus.n_sentences, 3), None)):
        def make_context():
            return ListContext(nb, documents, gazetteers, gazetteer_of, blocks)

        for families in (list(FAMILIES), ["document"], ["gazetteer", "rank"], ["sequence"], ["entity", "document"],
                         ["phrase", "document"], ["chunk", "phrase", "sequence"], ["corpus"], ["corpus", "rank"],
                         ["cluster", "document"]):
            _, vocabulary = featurize_in_context(nb, families, make_context(), {}, grow=True, clusters=clusters)
            for fixed in (vocabulary, dict(list(vocabulary.items())[::2])):
                context = make_context()
                ours, _ = featurize_in_context(nb, families, context, dict(fixed), clusters=clusters)
                assert "_counts" not in vars(context)  # the string counts were not needed
                same_data(ours, string_featurized(monkeypatch, nb, families, make_context, fixed, clusters))


@pytest.mark.parametrize("grow", [True, False])
def test_the_corpus_family_is_the_document_family_over_blocks_renamed(grow):
    """``corpus`` with documents D and blocks B gives the features ``document`` gives with documents B,
    each d1/dn renamed c1/cn; blocks None are the whole file."""
    corpus = random_corpus(3, n_sentences=80)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(random_corpus(13, 20))
    nb = nbest_corpus(tagger, corpus, 4)
    documents = document_ids(corpus, document_size=4)
    folds = fold_split(corpus.n_sentences, 3, blocks=True)
    for blocks, as_documents in ((folds, folds), (None, np.zeros(corpus.n_sentences, dtype=np.int64))):
        want, want_vocabulary = featurize_in_context(nb, ["document"], ListContext(nb, as_documents), {}, grow=True)
        renamed = {"c" + name[1:]: i for name, i in want_vocabulary.items()}
        assert all(name[:2] in ("c1", "cn") for name in renamed)
        got, vocabulary = featurize_in_context(nb, ["corpus"], ListContext(nb, documents, blocks=blocks),
                                               {} if grow else dict(renamed), grow=grow)
        assert vocabulary == renamed
        same_data(got, want)
        # and the documents alone count otherwise: the test sees blocks wider than documents
        by_documents, _ = featurize_in_context(nb, ["document"], ListContext(nb, documents), dict(want_vocabulary))
        assert not np.array_equal(by_documents.values, want.values)


def test_a_word_with_a_space_is_featurized_through_its_strings(monkeypatch):
    corpus = as_corpus([["New York", "zag", "New", "York"], ["New York"]],
                       [["B-LOC", "O", "B-LOC", "I-LOC"], ["B-LOC"]])
    assert not DocumentWords(corpus.columns["word"]).exact
    assert DocumentWords(["New", "York"]).exact
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(corpus)
    nb = nbest_corpus(tagger, corpus, 3)

    def make_context():
        return ListContext(nb, np.zeros(2, dtype=np.int64), [Gazetteer.from_corpus(corpus)], np.zeros(2, dtype=np.int64))

    families = ["entity", "document", "gazetteer", "sequence", "rank"]
    _, vocabulary = featurize_in_context(nb, families, make_context(), {}, grow=True)
    ours, _ = featurize_in_context(nb, families, make_context(), dict(vocabulary))
    same_data(ours, string_featurized(monkeypatch, nb, families, make_context, vocabulary))
    # "New York" as one word and as two are one entity string, as they were
    assert "d1s:LOC=LOC" in vocabulary


def naive_scores(data, weights):
    """w · x of every row of RankingData, one entry at a time (ids past the weights weigh 0)."""
    out = []
    for r in range(data.n_rows):
        total = 0.0
        for e in range(data.row_offsets[r], data.row_offsets[r + 1]):
            f = int(data.feature_ids[e])
            total += (weights[f] if f < len(weights) else 0.0) * data.values[e]
        out.append(total)
    return np.asarray(out)


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_scores_without_rows_are_the_rows_dot_products(monkeypatch, seed):
    """scores_in_context against the string featurizing's rows, scored naively, for random weights
    shorter than the vocabulary; with a word holding a space (no interned kernels) too."""
    corpus = random_corpus(seed)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(random_corpus(seed + 10, 20))
    nb = nbest_corpus(tagger, corpus, 5)
    documents = document_ids(corpus, document_size=4)
    fold_of = fold_split(corpus.n_sentences, 3, blocks=True)
    gazetteers = jackknifed_gazetteers(corpus, fold_of)

    def make_context():
        return ListContext(nb, documents, gazetteers, fold_of, fold_of)

    rng = np.random.default_rng(seed)
    clusters = cluster_map(NAMES + OTHERS, seed)
    for families in (list(FAMILIES), ["document", "gazetteer", "sequence", "rank", "posterior"], ["corpus"]):
        _, vocabulary = featurize_in_context(nb, families, make_context(), {}, grow=True, clusters=clusters)
        weights = rng.normal(size=len(vocabulary) - 3)
        rows = string_featurized(monkeypatch, nb, families, make_context, vocabulary, clusters)
        got = scores_in_context(nb, families, make_context(), dict(vocabulary), weights, clusters=clusters)
        np.testing.assert_allclose(got, naive_scores(rows, weights), rtol=1e-12, atol=1e-12)
        assert np.ptp(got) > 0
    spaced = as_corpus([["New York", "zag", "New", "York"], ["New York"]], [["B-LOC", "O", "B-LOC", "I-LOC"], ["B-LOC"]])
    nb = nbest_corpus(Tagger(templates=["w[0]", "bias"], epochs=1).fit(spaced), spaced, 3)
    context = ListContext(nb, np.zeros(2, dtype=np.int64), [Gazetteer.from_corpus(spaced)], np.zeros(2, dtype=np.int64))
    data, vocabulary = featurize_in_context(nb, ["entity", "document", "sequence"], context, {}, grow=True)
    weights = rng.normal(size=len(vocabulary))
    got = scores_in_context(nb, ["entity", "document", "sequence"], context, vocabulary, weights)
    np.testing.assert_allclose(got, naive_scores(data, weights), rtol=1e-12, atol=1e-12)


def test_a_model_saved_before_the_interned_kernels_tags_as_it_did(tmp_path):
    """tests/data/rerank_before.npz: written by the string featurizing (main at 6474157) with
    Tagger(templates=["w[0]", "bias"], epochs=1), k=8, the families document, gazetteer, sequence and
    rank, Reranker(epochs=10, score_weight=0.1), folds=3, on the even sentences of
    ner_corpus_text(24, 0); rerank_before.json: its labels of ner_corpus_text(6, 1)."""
    from structperc import load_model

    path = tmp_path / "dev.txt"
    path.write_text(ner_corpus_text(6, 1))
    model = load_model(DATA / "rerank_before.npz")
    expected = json.loads((DATA / "rerank_before.json").read_text())["labels"]
    dev = read_corpus(path, columns=["word", "pos", "ne"], label="ne")
    assert model.predict(dev) == expected
    assert model.predict(dev) != model.base_.predict(dev)  # the reranker chose other candidates


# ------------------------------------------------------------------------------------ kernels
@pytest.mark.parametrize("seed", range(4))
def test_first_ids_number_codes_by_first_appearance(seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(-(2 ** 62), 2 ** 62, size=50)[rng.integers(0, 50, size=int(rng.integers(0, 400)))]
    index = {}
    expected = [index.setdefault(c, len(index)) for c in codes.tolist()]
    ids, m = first_ids(codes.astype(np.int64))
    assert ids.tolist() == expected and m == len(index)


@pytest.mark.parametrize("seed", range(4))
def test_tries_intern_and_look_up_sequences(seed):
    rng = np.random.default_rng(seed)
    items = rng.integers(0, 4, size=300).astype(np.int64)
    starts = rng.integers(0, 290, size=120).astype(np.int64)
    ends = starts + rng.integers(0, 6, size=120)
    trie = new_trie()
    nodes = intern_ranges(trie, items, starts, ends)
    sequences = [tuple(items[a:b].tolist()) for a, b in zip(starts, ends)]
    for s, t, ns, nt in zip(sequences, sequences[1:], nodes, nodes[1:]):
        assert (s == t) == (ns == nt)
    assert all(n == -1 for s, n in zip(sequences, nodes) if not s)
    # looked up: the same nodes; a sequence not interned, or with an unknown item (-1), is -2
    assert lookup_ranges(trie, items, starts, ends).tolist() == nodes.tolist()
    probe = np.array([0, 1, 2, 3, 3, 3, 3, 3, 3, 3, -1], dtype=np.int64)
    found = lookup_ranges(trie, probe, np.array([0, 10], dtype=np.int64), np.array([10, 11], dtype=np.int64))
    assert found[1] == -2
    assert (found[0] == -2) == (tuple(probe[:10].tolist()) not in sequences)


@pytest.mark.parametrize("seed,scale", [(0, 1), (1, 1), (2, 1), (3, 1), (4, 200)])
def test_candidate_rows_sort_and_sum_as_lexsort_and_reduceat(seed, scale):
    """Parts of single entries and of shared rows: the entries each candidate gets, in the parts'
    order, sorted by (candidate, id) with np.lexsort and summed with np.add.reduceat. At scale 200
    the rows are made in ranges of candidates on threads (``rows.PARALLEL_FROM_ENTRIES``)."""
    rng = np.random.default_rng(seed)
    n_candidates, n_rows = 60 * scale, 40 * scale
    lengths = rng.integers(0, 6, size=n_rows)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    row_ids = rng.integers(-1, 30, size=offsets[-1]).astype(np.int64)
    row_values = rng.random(offsets[-1]) * 10.0 ** rng.integers(-6, 6, size=offsets[-1])
    single = np.sort(rng.integers(0, n_candidates, size=300 * scale)).astype(np.int64)
    single_ids = rng.integers(-1, 30, size=300 * scale).astype(np.int64)
    single_values = rng.random(300 * scale) * 10.0 ** rng.integers(-6, 6, size=300 * scale)
    owners = np.sort(rng.integers(0, n_candidates, size=200 * scale)).astype(np.int64)
    items = rng.integers(0, n_rows, size=200 * scale).astype(np.int64)
    parts = [(single, single_ids, single_values), (owners, items, offsets, row_ids, row_values)]
    ids, values, row_offsets = candidate_parts(n_candidates, parts)
    # the reference: every entry spelled out, in the parts' order
    c = np.concatenate([single, np.repeat(owners, lengths[items])])
    f = np.concatenate([single_ids] + [row_ids[offsets[r]: offsets[r + 1]] for r in items])
    v = np.concatenate([single_values] + [row_values[offsets[r]: offsets[r + 1]] for r in items])
    c, f, v = c[f >= 0], f[f >= 0], v[f >= 0]
    order = np.lexsort((f, c))
    c, f, v = c[order], f[order], v[order]
    first = np.flatnonzero(np.concatenate([[True], (c[1:] != c[:-1]) | (f[1:] != f[:-1])]))
    assert ids.tolist() == f[first].tolist()
    assert np.array_equal(values, np.add.reduceat(v, first))
    assert row_offsets.tolist() == [0, *np.cumsum(np.bincount(c[first], minlength=n_candidates)).tolist()]
    # the shared rows alone, on one thread and on three: the same bits
    one, three = (candidate_rows(n_candidates, 30, owners, items, offsets, row_ids, row_values, threads=t)
                  for t in (1, 3))
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("seed", range(4))
def test_distinct_in_blocks_is_np_unique_of_keys_in_ascending_blocks(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 12, size=30)
    keys = np.concatenate([100 * b + rng.integers(0, 6, size=n) for b, n in enumerate(sizes)]).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    index, inverse = distinct_in_blocks(keys, offsets)
    _, expected_index, expected_inverse = np.unique(keys, return_index=True, return_inverse=True)
    assert index.tolist() == expected_index.tolist()
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()


def test_a_run_is_summed_as_np_add_reduceat_sums_it():
    """candidate_rows sums a run of one id as its first value plus numpy's pairwise sum of the rest:
    what np.add.reduceat (so the string featurizing) gives, bit for bit, at every length."""
    rng = np.random.default_rng(3)
    for n in [*range(1, 40), 127, 128, 129, 130, 136, 255, 256, 300, 1000]:
        x = rng.random(n) * 10.0 ** rng.integers(-8, 8, size=n)
        expected = np.add.reduceat(np.concatenate([[7.0], x, [3.0]]), [0, 1, n + 1])[1]
        ours = x[0] + pairwise_sum(x, 1, n - 1) if n > 1 else x[0]
        assert ours == expected, n
        one = np.zeros(n, dtype=np.int64)
        ids, values, _ = candidate_rows(1, 1, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                        np.array([0, n], dtype=np.int64), one, x)
        assert ids.tolist() == [0] and values[0] == expected, n
