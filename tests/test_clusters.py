"""Brown clustering: the incremental numba kernels against a naive recomputation, the tokenizer,
format detection, output and the `clusters` command."""
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from structperc.clusters.brown import (
    BrownClusters, brown_clusters, bigram_table, cluster_paths, count_words, detect_clusters_format,
    rank_words, read_sentences, run_merges, tokenize, write_paths,
)

DATA = Path(__file__).parent / "data"
SETTINGS = settings(max_examples=60, deadline=None)


# ------------------------------------------------------------------------------- naive reference
# Written from the definition: the AMI of a clustering is recomputed from the word bigram counts
# for every candidate merge, O(C^2) candidates times O(bigrams) each.


def naive_counts(sentences, min_count):
    counts = Counter(w for s in sentences for w in s)
    vocab = sorted((w for w in counts if counts[w] >= min_count), key=lambda w: (-counts[w], w))
    bigrams = Counter()
    for s in sentences:
        for u, v in zip(s, s[1:]):
            if counts[u] >= min_count and counts[v] >= min_count:
                bigrams[u, v] += 1
    return vocab, counts, bigrams


def naive_ami(clusters, bigrams):
    total = sum(bigrams.values())
    if total == 0:
        return 0.0
    cluster_of = {w: k for k, c in enumerate(clusters) for w in c}
    left, right, joint = Counter(), Counter(), Counter()
    for (u, v), n in bigrams.items():
        left[u] += n
        right[v] += n
        if u in cluster_of and v in cluster_of:
            joint[cluster_of[u], cluster_of[v]] += n
    cl = [sum(left[w] for w in c) for c in clusters]
    cr = [sum(right[w] for w in c) for c in clusters]
    return sum(n / total * math.log(n * total / (cl[a] * cr[b])) for (a, b), n in joint.items())


def check_against_naive(sentences, n_clusters, min_count):
    """Replay the kernel's merges on the naive model: each must be a least-loss merge."""
    text = count_words(sentences)
    ranked = rank_words(text.words, text.counts, min_count)
    vocab, counts, bigrams = naive_counts(sentences, min_count)
    assert [text.words[i] for i in ranked] == vocab
    if not vocab:
        return
    table = bigram_table(text, ranked)
    assert table.total == sum(bigrams.values())
    n_words, c = len(vocab), min(n_clusters, len(vocab))
    merges, losses, ami = run_merges(table, n_words, c, steps_per_call=3)
    assert merges.shape == (n_words - 1, 2)
    if n_words == 1:
        return
    node_words = {w: frozenset([vocab[w]]) for w in range(n_words)}
    clusters = []
    pending = list(vocab)
    for k in range(n_words - 1):
        while pending and len(clusters) < c:
            clusters.append(frozenset([pending.pop(0)]))
        if pending:  # window full: add the next word, then merge
            clusters.append(frozenset([pending.pop(0)]))
        base = naive_ami(clusters, bigrams)
        candidates = {}
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                merged = [x for t, x in enumerate(clusters) if t not in (i, j)]
                merged.append(clusters[i] | clusters[j])
                candidates[frozenset([clusters[i], clusters[j]])] = (base - naive_ami(merged, bigrams),
                                                                     merged)
        x, y = merges[k]
        chosen = frozenset([node_words[x], node_words[y]])
        assert chosen in candidates, f"merge {k} joins clusters that do not exist"
        loss, merged = candidates[chosen]
        best = min(value for value, _ in candidates.values())
        assert loss <= best + 1e-9, f"merge {k}: loss {loss} but {best} was possible"
        assert losses[k] == pytest.approx(loss, abs=1e-9)
        assert ami[k] == pytest.approx(naive_ami(merged, bigrams), abs=1e-9)
        node_words[n_words + k] = node_words[x] | node_words[y]
        clusters = merged
    assert len(clusters) == 1 and not pending


sentence_lists = st.lists(st.lists(st.sampled_from(list("abcdefghijkl")), min_size=0, max_size=12),
                          min_size=1, max_size=8)


@SETTINGS
@given(sentence_lists, st.integers(1, 5), st.integers(1, 2))
def test_merges_equal_naive(sentences, n_clusters, min_count):
    check_against_naive(sentences, n_clusters, min_count)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), min_size=2, max_size=30), min_size=3, max_size=12),
       st.integers(3, 8))
def test_merges_equal_naive_larger_vocabulary(sentences, n_clusters):
    check_against_naive([[f"w{i}" for i in s] for s in sentences], n_clusters, 1)


def test_frequent_structure_is_found():
    # determiners, nouns and verbs in strict alternation: the top split separates the classes
    rng = np.random.default_rng(0)
    dets, nouns, verbs = ["the", "a", "this"], ["dog", "cat", "man", "bird"], ["runs", "sees", "eats"]
    sentences = [[rng.choice(dets), rng.choice(nouns), rng.choice(verbs), rng.choice(dets),
                  rng.choice(nouns)] for _ in range(400)]
    text = count_words(sentences)
    ranked = rank_words(text.words, text.counts, 1)
    table = bigram_table(text, ranked)
    merges, _, _ = run_merges(table, len(ranked), 3)
    paths = cluster_paths(merges, len(ranked), 3)
    by_word = {text.words[r]: p for r, p in zip(ranked.tolist(), paths)}
    for group in (dets, nouns, verbs):
        assert len({by_word[w] for w in group}) == 1
    assert len(set(paths)) == 3


def test_paths_follow_the_final_tree():
    sentences = [list("abcabdabcaedd"), list("ebcadde")]
    text = count_words(sentences)
    ranked = rank_words(text.words, text.counts, 1)
    merges, _, _ = run_merges(bigram_table(text, ranked), len(ranked), 3)
    paths = cluster_paths(merges, len(ranked), 3)
    assert len(set(paths)) == 3
    distinct = sorted(set(paths))
    for p in distinct:  # prefix-free: leaves of one binary tree
        assert not any(q != p and q.startswith(p) for q in distinct)
    assert paths[0].endswith("0") or paths[0] == "0" * len(paths[0])  # the most frequent word goes left
    assert set("".join(paths)) <= {"0", "1"}


# ------------------------------------------------------------------------------------- tokenizer


@pytest.mark.parametrize("text, expected", [
    ("I don't think it's U.S.-made, Mr. Smith...",
     ["I", "do", "n't", "think", "it", "'s", "U.S.", "-", "made", ",", "Mr.", "Smith", "..."]),
    ("Can't won't cannot gonna", ["Ca", "n't", "wo", "n't", "can", "not", "gon", "na"]),
    ("She'll we've I'd I'm they're ISN'T", ["She", "'ll", "we", "'ve", "I", "'d", "I", "'m", "they",
                                            "'re", "IS", "N'T"]),
    ("It costs $1,000.50 (about 3.5%).", ["It", "costs", "$", "1,000.50", "(", "about", "3.5", "%",
                                          ")", "."]),
    # UD English EWT splits a hyphenated compound at its hyphen (well - known), as the tokeniser does
    ('"Hi," she said -- well-known o\'clock!', ['"', "Hi", ",", '"', "she", "said", "--",
                                               "well", "-", "known", "o'clock", "!"]),
    ("it’s don’t", ["it", "’s", "do", "n’t"]),
    ("``quoted''", ["``", "quoted", "''"]),
    ("see http://x.org/a?b=1. now", ["see", "http://x.org/a?b=1", ".", "now"]),
    ("2nd place, 12/25/2005", ["2nd", "place", ",", "12/25/2005"]),
    ("James' dogs", ["James", "'", "dogs"]),
    ("", []),
])
def test_tokenize(text, expected):
    assert tokenize(text) == expected


# ------------------------------------------------------------------------------- reading, output


def test_detect_format(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("The cat sat .\nA dog barked at the moon .\n")
    conll = tmp_path / "chunk.txt"
    conll.write_text("He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\n")
    one = tmp_path / "one.txt"
    one.write_text("He\nran\n\nShe\nsat\n")
    assert detect_clusters_format(raw) == "raw"
    assert detect_clusters_format(conll) == "conll"
    assert detect_clusters_format(one) == "conll"
    assert detect_clusters_format(DATA / "tiny.conllu") == "conllu"
    assert detect_clusters_format(DATA / "tiny.pos") == "ptb"
    assert list(read_sentences(conll)) == [["He", "ran"], ["She"]]
    assert list(read_sentences(raw, format="raw"))[0] == ["The", "cat", "sat", "."]


def test_read_word_column_of_corpus_files():
    from structperc.readers import read_corpus

    for name in ("tiny.conll", "tiny.conllu", "tiny.pos"):
        corpus = read_corpus(DATA / name, require_label=False)
        sentences = list(read_sentences(DATA / name))
        assert [w for s in sentences for w in s] == corpus.columns["word"]
        assert len(sentences) == corpus.n_sentences


def test_no_bigram_spans_a_sentence():
    text = count_words([["a", "b"], ["c", "a"]])
    ranked = rank_words(text.words, text.counts, 1)
    table = bigram_table(text, ranked)
    assert table.total == 2  # a b, c a; not b c


def _corpus(tmp_path):
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    lines = [" ".join(rng.choice(words, size=rng.integers(3, 12), p=None)) for _ in range(300)]
    path = tmp_path / "text.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_output_is_deterministic_and_atomic(tmp_path):
    path = _corpus(tmp_path)
    first = brown_clusters([path], n_clusters=8, min_count=2)
    second = brown_clusters([path], n_clusters=8, min_count=2)
    assert first.lines() == second.lines()
    out = tmp_path / "paths.txt"
    write_paths(first, out)
    lines = out.read_text().splitlines()
    assert lines == first.lines()
    assert len({line.split("\t")[0] for line in lines}) == 8
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    for line in lines:
        bits, word, count = line.split("\t")
        assert set(bits) <= {"0", "1"} and int(count) >= 2


def test_write_paths_leaves_nothing_on_error(tmp_path):
    clusters = BrownClusters(words=["a"], counts=np.array([1]), paths=None, merges=np.zeros((0, 2)),
                             losses=np.zeros(0), ami=np.zeros(0), n_clusters=1, n_bigrams=0)
    with pytest.raises(TypeError):
        write_paths(clusters, tmp_path / "p.txt")
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------- CLI


def _app():
    # the application itself: its main turns errors into one line, once for every command
    from structperc.cli.main import app

    return app


def test_cli_clusters(tmp_path):
    path = _corpus(tmp_path)
    out = tmp_path / "paths.txt"
    result = CliRunner().invoke(_app(), ["clusters", str(path), str(DATA / "tiny.conllu"), "--n-clusters", "6",
                                         "--min-count", "2", "--output", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["clusters"] == 6 and summary["words"] == len(out.read_text().splitlines())
    assert summary["merges_per_second"] > 0
    expected = brown_clusters([path, DATA / "tiny.conllu"], n_clusters=6, min_count=2)
    assert out.read_text().splitlines() == expected.lines()


def test_cli_errors(tmp_path):
    result = CliRunner().invoke(_app(), ["clusters", str(tmp_path / "missing.txt"), "--output",
                                         str(tmp_path / "p.txt")])
    assert result.exit_code == 2
    assert "missing.txt: no such file" in result.output
    assert not (tmp_path / "p.txt").exists()
    result = CliRunner().invoke(_app(), ["clusters", str(_corpus(tmp_path)), "--n-clusters", "0"])
    assert result.exit_code == 2 and "--n-clusters" in result.output


def test_cli_subprocess_stdout(tmp_path):
    path = _corpus(tmp_path)
    expected = brown_clusters([path], n_clusters=5).lines()  # compiles the kernels: no notice below
    done = subprocess.run([sys.executable, "-m", "structperc", "clusters", str(path), "--n-clusters", "5", "--quiet"],
                          capture_output=True, text=True, check=True)
    assert done.stderr == ""
    assert done.stdout.splitlines() == expected
