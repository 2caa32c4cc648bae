"""Voting against naive Python votes; chunk votes stay valid BIO; the vote command end to end."""
from collections import Counter

import numpy as np
import pytest
import forked_cli

from structperc.chunks import chunk_spans
from structperc.ensembles.vote import vote_chunks, vote_marginals, vote_tokens
from structperc.errors import ConfigError
from structperc.estimator.tagger import Tagger
from builders import WORDS

LABELS = ["B-NP", "I-NP", "B-VP", "I-VP", "O"]


def naive_token_vote(predictions, weights):
    out = []
    for t in range(len(predictions[0])):
        totals = Counter()
        for labels, weight in zip(predictions, weights):
            totals[labels[t]] += weight
        best = max(totals.values())
        # ties: the label of the earliest model among the tied ones
        out.append(next(labels[t] for labels in predictions if totals[labels[t]] == best))
    return out


def valid_bio(labels):
    prev = "O"
    for label in labels:
        if label.startswith("I-") and (prev == "O" or prev[2:] != label[2:]):
            return False
        prev = label
    return True


def random_predictions(rng, n_models, n_sentences):
    lengths = rng.integers(1, 8, n_sentences)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    predictions = [[LABELS[i] for i in rng.integers(0, len(LABELS), offsets[-1])] for _ in range(n_models)]
    return predictions, offsets


@pytest.mark.parametrize("seed", range(20))
def test_token_vote_equals_naive_vote(seed):
    rng = np.random.default_rng(seed)
    n_models = int(rng.integers(2, 6))
    predictions, _ = random_predictions(rng, n_models, 10)
    assert vote_tokens(predictions) == naive_token_vote(predictions, [1.0] * n_models)
    weights = rng.integers(0, 4, n_models).astype(float) + (rng.random(n_models) < 0.5) * 0.5
    weights[0] += 1.0
    assert vote_tokens(predictions, weights) == naive_token_vote(predictions, weights)


@pytest.mark.parametrize("seed", range(20))
def test_chunk_vote_keeps_the_majority_spans_as_valid_bio(seed):
    rng = np.random.default_rng(seed)
    n_models = int(rng.integers(2, 6))
    predictions, offsets = random_predictions(rng, n_models, 10)
    weights = rng.random(n_models) + 0.1
    voted = vote_chunks(predictions, offsets, weights)
    for i in range(len(offsets) - 1):
        a, b = offsets[i], offsets[i + 1]
        sentence = voted[a:b]
        assert valid_bio(sentence)
        support = Counter()
        for labels, weight in zip(predictions, weights):
            for span in chunk_spans(labels[a:b]):
                support[span] += weight
        expected = sorted(span for span, total in support.items() if total > weights.sum() / 2)
        assert sorted(chunk_spans(sentence)) == expected


def test_unanimous_models_vote_their_own_chunks():
    labels = ["B-NP", "I-NP", "O", "B-VP", "B-NP"]
    assert vote_chunks([labels] * 3, np.array([0, 5])) == labels
    assert vote_tokens([labels, labels, ["O"] * 5]) == labels


def test_soft_vote_is_argmax_of_the_weighted_mean_marginal_across_label_orders():
    rng = np.random.default_rng(0)
    a = rng.dirichlet(np.ones(3), size=6)
    b = rng.dirichlet(np.ones(3), size=6)
    labels_a, labels_b = ["X", "Y", "Z"], ["Z", "X", "Y"]
    voted = vote_marginals([a, b], [labels_a, labels_b], [1.0, 2.0])
    mean = a + 2.0 * b[:, [1, 2, 0]]  # b's columns in a's order
    assert voted == [labels_a[j] for j in np.argmax(mean, axis=1)]


def test_weights_are_checked():
    with pytest.raises(ConfigError, match="one weight per model"):
        vote_tokens([["O"], ["O"]], [1.0])
    with pytest.raises(ConfigError, match="not all zero"):
        vote_tokens([["O"], ["O"]], [0.0, 0.0])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vote")
    rng = np.random.default_rng(0)
    tags = {w: ("B-NP" if i % 3 else "O") for i, w in enumerate(WORDS)}
    X = [[(WORDS[i], "P") for i in rng.integers(0, len(WORDS), rng.integers(1, 7))] for _ in range(40)]
    # a fifth of the labels at random (I-NP only inside a chunk), so that the models disagree
    y = []
    for sentence in X:
        labels = [tags[w] if rng.random() < 0.8 else ["B-NP", "I-NP", "O"][rng.integers(0, 3)] for w, _ in sentence]
        y.append([("B-NP" if label == "I-NP" and (i == 0 or labels[i - 1] == "O") else label)
                  for i, label in enumerate(labels)])
    with open(folder / "train.txt", "w") as out:
        for sentence, labels in zip(X, y):
            out.writelines(f"{w} {p} {tag}\n" for (w, p), tag in zip(sentence, labels))
            out.write("\n")
    paths = []
    for trainer in ("perceptron", "crf", "memm"):
        path = folder / f"{trainer}.npz"
        tagger = Tagger(templates=["w[0]", "w[-1]"], trainer=trainer, epochs=3, constrain="bio")
        tagger.fit_file(folder / "train.txt", columns=["word", "pos", "chunk"]).save(path)
        paths.append(path)
    return folder, paths


def run_cli(*args):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args)


def naive_chunk_vote(predictions, offsets, weights):
    """Per sentence, the spans (type, first, last) whose models' weights sum to more than half the
    total, written as B-/I- labels, O elsewhere."""
    out = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        support = Counter()
        for labels, weight in zip(predictions, weights):
            for span in chunk_spans(labels[a:b]):
                support[span] += weight
        sentence = ["O"] * (b - a)
        for (kind, first, last), total in support.items():
            if total > sum(weights) / 2:
                sentence[first: last + 1] = [f"B-{kind}"] + [f"I-{kind}"] * (last - first)
        out.extend(sentence)
    return out


def last_column(path):
    return [line.split()[-1] for line in path.read_text().splitlines() if line.strip()]


def test_vote_command_writes_the_layout_of_tag(models):
    folder, paths = models
    tagged = run_cli("tag", folder / "train.txt", "-m", paths[0], "-o", folder / "tagged.txt", "-q")
    assert tagged.returncode == 0, tagged.stderr
    # each model's own labels, by `tag`; the votes are computed from them here
    predictions = [last_column(folder / "tagged.txt")]
    for i, path in enumerate(paths[1:], 1):
        done = run_cli("tag", folder / "train.txt", "-m", path, "-o", folder / f"tagged{i}.txt", "-q")
        assert done.returncode == 0, done.stderr
        predictions.append(last_column(folder / f"tagged{i}.txt"))
    lengths = [len(block.splitlines()) for block in (folder / "tagged.txt").read_text().strip().split("\n\n")]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    assert offsets[-1] == len(predictions[0])
    assert predictions[0] != predictions[1] or predictions[1] != predictions[2]  # a vote that decides something
    # [2, 1, 1]: ties of the first model against the other two (token), a half exactly reached (chunk)
    for method, weights in (("token", None), ("chunk", None), ("token", [1.0, 2.5, 1.0]), ("chunk", [2.0, 1.0, 0.5]),
                            ("token", [2.0, 1.0, 1.0]), ("chunk", [2.0, 1.0, 1.0])):
        extra = ["--weights", ",".join(map(str, weights))] if weights else []
        voted = run_cli("vote", *paths, folder / "train.txt", "-o", folder / "voted.txt", "--method", method, "-q",
                        *extra)
        assert voted.returncode == 0, voted.stderr
        ours = [line.split()[:3] for line in (folder / "voted.txt").read_text().splitlines()]
        theirs = [line.split()[:3] for line in (folder / "tagged.txt").read_text().splitlines()]
        assert ours == theirs  # same tokens, columns and sentence breaks; last column is the vote
        weights = weights or [1.0] * len(paths)
        if method == "token":
            expected = naive_token_vote(predictions, weights)
        else:
            expected = naive_chunk_vote(predictions, offsets, weights)
        assert last_column(folder / "voted.txt") == expected, (method, weights)
    soft = run_cli("vote", *paths, folder / "train.txt", "--method", "soft")
    # the perceptron model has no marginals: exit 2, one line naming it
    assert soft.returncode == 2, soft.stderr
    assert len(soft.stderr.strip().splitlines()) == 1 and "perceptron" in soft.stderr
    soft = run_cli("vote", *paths[1:], folder / "train.txt", "--method", "soft", "-q")
    assert soft.returncode == 0, soft.stderr
    bad = run_cli("vote", *paths, folder / "train.txt", "--weights", "1,2")
    assert bad.returncode == 2 and "one weight per model" in bad.stderr


def test_bagging_is_deterministic_with_a_seed_and_bags_differ():
    from structperc.ensembles.vote import bag_indices, train_bagging
    from structperc.corpus import as_corpus

    first, second = bag_indices(50, 3, seed=7), bag_indices(50, 3, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert not np.array_equal(first[0], first[1])
    assert all(np.array_equal(a, b) for a, b in zip(bag_indices(50, 2, seed=7), first[:2]))
    rng = np.random.default_rng(1)
    X = [[(WORDS[i], "P") for i in rng.integers(0, len(WORDS), rng.integers(1, 7))] for _ in range(30)]
    y = [[("B-NP" if WORDS.index(w) % 2 else "O") for w, _ in s] for s in X]
    corpus = as_corpus(X, y, ["word", "pos"])
    params = dict(templates=["w[0]"], epochs=2)
    bags_a = train_bagging(corpus, params, 3, seed=5)
    bags_b = train_bagging(corpus, params, 3, seed=5)
    for a, b in zip(bags_a, bags_b):
        np.testing.assert_array_equal(a.model_.weights, b.model_.weights)
    with pytest.raises(ConfigError, match="at least one bag"):
        train_bagging(corpus, params, 0)
