"""Bagging: bootstrap samples against a naive draw, bags on a real dask LocalCluster against serial
training, and `train --bagging` end to end (tag and eval give the plain-Python majority vote of the
members)."""
import json
from collections import Counter

import numpy as np
import pytest
import forked_cli

pytest.importorskip("dask.distributed")

from structperc import load_model  # noqa: E402
from structperc.ensembles.vote import VotingTagger, bag_indices, train_bagging  # noqa: E402
from structperc.errors import ConfigError  # noqa: E402
from structperc.readers import read_corpus  # noqa: E402
from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.corpus import as_corpus

TEMPLATES = ["w[0]", "w[-1]", "pos[0]", "bias"]
PARAMS = dict(templates=TEMPLATES, epochs=3)
VOCABULARY = [f"w{i}" for i in range(25)]


def synthetic(n_sentences, seed, noise=0.3):
    """Sentences of (word, pos) with labels A/B/C: each word has a usual label, replaced by a random
    one with probability ``noise`` (so that models trained on different samples disagree)."""
    rng = np.random.default_rng(seed)
    usual = {w: "ABC"[i % 3] for i, w in enumerate(VOCABULARY)}
    X, y = [], []
    for _ in range(n_sentences):
        words = [VOCABULARY[i] for i in rng.integers(0, len(VOCABULARY), int(rng.integers(2, 8)))]
        X.append([(w, f"P{len(w)}") for w in words])
        y.append([usual[w] if rng.random() > noise else "ABC"[int(rng.integers(0, 3))] for w in words])
    return X, y


def write_conll(path, X, y):
    with open(path, "w", encoding="utf-8") as out:
        for sentence, labels in zip(X, y):
            out.writelines(f"{w} {p} {t}\n" for (w, p), t in zip(sentence, labels))
            out.write("\n")
    return path


def naive_bootstrap(n_sentences, seed, b):
    """Bag b: n_sentences draws, one at a time, uniform over the sentences, from the generator (seed, b)."""
    rng = np.random.default_rng([seed, b])
    return [int(rng.integers(n_sentences)) for _ in range(n_sentences)]


def plain_vote(predictions):
    """Per token, the label most members predict; on a tie, the earliest member's among the tied."""
    out = []
    for labels in zip(*predictions):
        counts = Counter(labels)
        best = max(counts.values())
        out.append(next(label for label in labels if counts[label] == best))
    return out


# ------------------------------------------------------------------ samples and members
@pytest.mark.parametrize("n_sentences, seed", [(1, 0), (7, 3), (50, 11)])
def test_bootstrap_samples_are_the_naive_draws(n_sentences, seed):
    samples = bag_indices(n_sentences, 4, seed)
    for b, sample in enumerate(samples):
        assert sample.tolist() == naive_bootstrap(n_sentences, seed, b)
    # a bag does not depend on how many bags there are
    assert [s.tolist() for s in bag_indices(n_sentences, 2, seed)] == [s.tolist() for s in samples[:2]]


def test_bootstrap_samples_look_like_bootstrap_samples():
    n = 2000
    samples = bag_indices(n, 5, seed=1)
    assert all(len(s) == n and s.min() >= 0 and s.max() < n for s in samples)
    distinct = [len(set(s.tolist())) / n for s in samples]
    assert all(abs(d - (1 - np.exp(-1))) < 0.03 for d in distinct)  # about 63.2 % of the sentences
    assert len({tuple(s[:20].tolist()) for s in samples}) == 5


def test_each_bag_is_a_tagger_trained_on_its_naive_sample():
    X, y = synthetic(30, 0)
    corpus = as_corpus(X, y, ["word", "pos"])
    members = train_bagging(corpus, PARAMS, 3, seed=4)
    for b, member in enumerate(members):
        sample = naive_bootstrap(corpus.n_sentences, 4, b)
        expected = Tagger(**PARAMS, seed=4 + b).fit(as_corpus([X[i] for i in sample], [y[i] for i in sample],
                                                               ["word", "pos"]))
        np.testing.assert_array_equal(member.model_.weights, expected.model_.weights)
        assert member.model_.labels == expected.model_.labels
        training = member.model_.metadata["training"]
        assert training["n_sentences"] == 30 and training["n_tokens"] == sum(len(X[i]) for i in sample)
    with pytest.raises(ConfigError, match="at least one bag"):
        train_bagging(corpus, PARAMS, 0)


def test_a_local_cluster_trains_the_same_members_as_serial_training():
    from dask.distributed import Client, LocalCluster

    X, y = synthetic(30, 1)
    corpus = as_corpus(X, y, ["word", "pos"])
    serial = train_bagging(corpus, PARAMS, 3, seed=2)
    done = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        parallel = train_bagging(corpus, PARAMS, 3, seed=2, client=client, progress=lambda d, n: done.append(d))
    assert done == [1, 2, 3]
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a.model_.weights, b.model_.weights)
        assert a.model_.labels == b.model_.labels and a.seed == b.seed


# ------------------------------------------------------------------ through the CLI
def _cli(*args, timeout=600):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args, timeout=timeout)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bagging")
    train = write_conll(folder / "train.txt", *synthetic(40, 2))
    test_X, test_y = synthetic(25, 3)
    test = write_conll(folder / "test.txt", test_X, test_y)
    return folder, train, test, test_X, test_y


def test_train_bagging_then_tag_and_eval_give_the_members_majority_vote(corpora):
    folder, train, test, test_X, test_y = corpora
    (folder / "templates.txt").write_text("\n".join(TEMPLATES) + "\n")
    common = ["--columns", "word,pos,label", "--templates", folder / "templates.txt", "--epochs", 3, "--seed", 5,
              "--dev", test, "--bagging", 3]
    one, two = folder / "one.npz", folder / "two.npz"
    r = _cli("train", train, "--model", one, *common, "--workers", 1, "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    r = _cli("train", train, "--model", two, *common, "--workers", 2, "-q")
    assert r.returncode == 0, r.stderr
    assert one.read_bytes() == two.read_bytes()  # bag b depends on (seed, b), not on the worker

    voting = load_model(one)
    assert isinstance(voting, VotingTagger) and len(voting.members) == 3
    corpus = read_corpus(train, columns=["word", "pos", "label"])
    for b, member in enumerate(voting.members):  # the members are the bags, trained on their samples
        sample = naive_bootstrap(corpus.n_sentences, 5, b)
        expected = Tagger(templates=str(folder / "templates.txt"), epochs=3, seed=5 + b).fit(
            corpus.subset(sample), dev=read_corpus(test, columns=["word", "pos", "label"]))
        np.testing.assert_array_equal(member.model_.weights, expected.model_.weights)
    predictions = [[label for sentence in member.predict(test_X) for label in sentence] for member in voting.members]
    assert any(p != predictions[0] for p in predictions[1:])  # the members disagree somewhere: the vote matters
    voted = plain_vote(predictions)
    gold = [label for labels in test_y for label in labels]
    accuracy = 100.0 * sum(v == g for v, g in zip(voted, gold)) / len(gold)
    first = 100.0 * sum(p == g for p, g in zip(predictions[0], gold)) / len(gold)
    assert accuracy != first  # so that scoring the first member alone would be caught

    tagged = _cli("tag", test, "--model", one, "-q")
    assert tagged.returncode == 0, tagged.stderr
    assert [line.split()[-1] for line in tagged.stdout.splitlines() if line.strip()] == voted
    scored = _cli("eval", test, "--model", one, "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["accuracy"] == pytest.approx(accuracy)
    assert summary["dev"]["accuracy"] == pytest.approx(accuracy)  # --dev: the vote's score on the dev file

    shown = _cli("info", one, "--json")
    ensemble = json.loads(shown.stdout)["ensemble"]
    assert ensemble["method"] == "bagging" and ensemble["bags"] == 3 and ensemble["seed"] == 5
    assert ensemble["sample_sentences"] == [40, 40, 40]
    assert ensemble["sample_tokens"] == [sum(np.diff(corpus.sentence_offsets)[naive_bootstrap(40, 5, b)])
                                         for b in range(3)]
    assert ensemble["distinct_sentences"] == [len(set(naive_bootstrap(40, 5, b))) for b in range(3)]


def test_one_bag_is_allowed_and_tags_as_its_member(corpora):
    folder, train, test, test_X, _ = corpora
    out = folder / "single.npz"
    r = _cli("train", train, "--model", out, "--columns", "word,pos,label", "--epochs", 2, "--bagging", 1, "-q")
    assert r.returncode == 0, r.stderr
    (member,) = load_model(out).members
    tagged = _cli("tag", test, "--model", out, "-q")
    expected = [label for sentence in member.predict(test_X) for label in sentence]
    assert [line.split()[-1] for line in tagged.stdout.splitlines() if line.strip()] == expected


@pytest.mark.parametrize("extra, message", [
    (["--bagging", 0], "at least one bag"),
    (["--bagging", 2, "--init", "{train}"], "--bagging does not take --init"),
    (["--bagging", 2, "--resume", "{train}"], "--bagging does not take --resume"),
    (["--bagging", 2, "--checkpoint-every", 1], "--bagging does not take --checkpoint-every"),
    (["--bagging", 2, "--semi", "tri", "--unlabeled", "{train}"], "--bagging does not take --semi"),
    (["--bagging", 2, "--mix", "errors"], "--bagging does not take --mix"),
    (["--bagging", 2, "--cache-dir", "{folder}"], "--bagging does not take --cache-dir"),
    (["--bagging", 2, "--workers", 2, "--scheduler", "tcp://127.0.0.1:9"], "exclude each other"),
])
def test_options_that_do_not_apply_to_bagging_are_errors(corpora, extra, message):
    folder, train, _, _, _ = corpora
    out = folder / "refused.npz"
    extra = [str(a).format(train=train, folder=folder) for a in extra]
    r = _cli("train", train, "--model", out, "--columns", "word,pos,label", *extra)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
