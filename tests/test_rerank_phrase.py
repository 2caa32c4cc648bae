"""The phrase family (``structperc.rerank.phrase``): its strings on a hand-made sentence, and the
features of every candidate, made once per distinct (chunk before, chunk, chunk after), against a
naive reference that walks each candidate's chunks."""
import collections

import numpy as np
import pytest
from test_rerank_interned import random_corpus
from test_rerank_tagger import ner_corpus_text

from structperc.chunks import chunk_spans
from structperc.corpus import as_corpus
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from structperc.nbest.lists import nbest_corpus
from structperc.rerank.context import featurize_in_context
from structperc.rerank.spans import CandidateSpans
from structperc.rerank.phrase import END, START, collapsed, phrase_parts, triple_strings


def test_collapsed_writes_a_run_once():
    assert collapsed(["DT", "JJ", "JJ", "NN", "NN", "NN", "JJ"]) == "DT JJ+ NN+ JJ"
    assert collapsed([]) == ""
    assert collapsed(["NN"]) == "NN"


def test_the_strings_of_a_chunk_between_its_neighbours():
    words = ["He", "saw", "the", "big", "big", "dog", ",", "and", "ran"]
    pos = ["PRP", "VBD", "DT", "JJ", "JJ", "NN", ",", "CC", "VBD"]
    # [NP He] [VP saw] [NP the big big dog] , and [VP ran]
    chunks = [("NP", 0, 0), ("VP", 1, 1), ("NP", 2, 5), ("VP", 8, 8)]
    assert triple_strings(words, pos, chunks[1], chunks[2], chunks[3]) == [
        "pp=NP:DT JJ+ NN", "pb=NP:VBD DT", "pe=NP:NN ,", "pl=NP:saw", "pr=NP:,",
        "p2=VP [] NP", "p2w=VP:saw NP", "p2v=VP NP:dog", "p2p=VP:VBD NP:NN", "p2h=VP:saw NP:dog",
        "p3=VP NP VP", "p3h=VP NP:dog VP"]
    assert triple_strings(words, pos, chunks[2], chunks[3], (END, 9, 9)) == [
        "pp=VP:VBD", "pb=VP:CC VBD", "pe=VP:VBD </s>", "pl=VP:and", "pr=VP:</s>",
        "p2=NP [, CC] VP", "p2w=NP:dog VP", "p2v=NP VP:ran", "p2p=NP:NN VP:VBD", "p2h=NP:dog VP:ran",
        "p2=VP [] </s>", "p2w=VP:ran </s>", "p2v=VP </s>:</s>", "p2p=VP:VBD </s>:</s>", "p2h=VP:ran </s>:</s>",
        "p3=NP VP </s>", "p3h=NP VP:ran </s>"]
    first = triple_strings(words, pos, (START, -1, -1), chunks[0], chunks[1])
    assert first[:2] == ["pp=NP:PRP", "pb=NP:<s> PRP"] and first[5] == "p2=<s> [] NP"
    assert first[6:8] == ["p2w=<s>:<s> NP", "p2v=<s> NP:He"]
    # a gap of more than LONG_GAP runs is "long"
    many = ["a", "b", "c", "d", "e", "f", "g"]
    gap = triple_strings(many, ["X", "Y", "Z", "X", "Y", "Z", "X"], ("NP", 0, 0), ("NP", 6, 6), (END, 7, 7))
    assert "p2=NP [long] NP" in gap


def naive_phrase(nb):
    """Per candidate, the Counter of its phrase strings, walking its chunks."""
    corpus = nb.corpus
    o = corpus.sentence_offsets
    out = []
    for i in range(nb.n_sentences):
        words, pos = corpus.columns["word"][o[i]: o[i + 1]], corpus.columns["pos"][o[i]: o[i + 1]]
        n = len(words)
        for j in range(nb.candidate_offsets[i], nb.candidate_offsets[i + 1]):
            labels = [nb.label_names[c] for c in nb.paths[nb.path_offsets[j]: nb.path_offsets[j + 1]]]
            bounded = [(START, -1, -1), *chunk_spans(labels), (END, n, n)]
            counts = collections.Counter()
            for m in range(1, len(bounded) - 1):
                counts.update(triple_strings(words, pos, *bounded[m - 1: m + 2]))
            out.append(counts)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 6])
def test_phrase_parts_match_a_walk_over_each_candidate(seed, k):
    corpus = random_corpus(seed)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(random_corpus(seed + 10, 20))
    nb = nbest_corpus(tagger, corpus, k)
    vocabulary = {}
    candidates, ids, values = phrase_parts(nb, CandidateSpans(nb), lambda s: vocabulary.setdefault(s, len(vocabulary)))
    assert np.all(np.diff(candidates) >= 0)  # by ascending candidate, as the interned rows want them
    strings = {v: s for s, v in vocabulary.items()}
    ours = [collections.Counter() for _ in range(nb.n_candidates)]
    for c, f, v in zip(candidates.tolist(), ids.tolist(), values.tolist()):
        ours[c][strings[f]] += v
    assert ours == naive_phrase(nb)


def test_the_phrase_family_is_switchable_and_needs_pos():
    corpus = random_corpus(3, 20)
    tagger = Tagger(templates=["w[0]", "bias"], epochs=1).fit(corpus)
    nb = nbest_corpus(tagger, corpus, 3)
    _, with_phrase = featurize_in_context(nb, ["phrase", "rank"], None, {}, grow=True)
    _, without = featurize_in_context(nb, ["rank"], None, {}, grow=True)
    assert any(s.startswith("p3=") for s in with_phrase) and not any(s.startswith("p3=") for s in without)
    no_pos = as_corpus([["Jan", "zag", "Peeters"]], [["B-PER", "O", "B-PER"]])
    nb = nbest_corpus(Tagger(templates=["w[0]", "bias"], epochs=1).fit(no_pos), no_pos, 2)
    with pytest.raises(ConfigError, match="phrase"):
        featurize_in_context(nb, ["phrase"], None, {}, grow=True)


def test_a_reranked_tagger_trains_and_tags_with_the_phrase_family(tmp_path):
    """Training grows the phrase strings into the vocabulary; tagging (a fixed vocabulary, the interned
    path) reads them back, before and after a save."""
    from structperc import load_model
    from structperc.readers import read_corpus
    from structperc.rerank.learners import Reranker
    from structperc.rerank.tagger import RerankedTagger

    for name, seed, n in (("train.txt", 0, 24), ("dev.txt", 1, 6)):
        (tmp_path / name).write_text(ner_corpus_text(n, seed))
    train, dev = (read_corpus(tmp_path / name, columns=["word", "pos", "ne"], label="ne")
                  for name in ("train.txt", "dev.txt"))
    model = RerankedTagger(base=Tagger(templates=["w[0]", "pos[0]", "bias"], epochs=2), k=5,
                           learner=Reranker(epochs=3), families=["chunk", "phrase", "rank"], folds=3).fit(train)
    assert model.families_ == ["chunk", "phrase", "rank"]
    assert any(s.startswith("p2w=") for s in model.vocabulary_)
    labels = model.predict(dev)
    model.save(tmp_path / "reranked.npz")
    assert load_model(tmp_path / "reranked.npz").predict(dev) == labels
