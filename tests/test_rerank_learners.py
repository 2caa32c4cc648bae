"""The dual (voted / averaged, linear / polynomial kernel) ranking perceptron and ranking boosting,
against naive Python references on small random lists."""
import collections
import json
import math

import numpy as np
import pytest
import forked_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from structperc.errors import ConfigError
from structperc.rerank.pipeline import BoostReranker, DualReranker, RankingData, Reranker, load_reranker, write_svmrank

SETTINGS = settings(max_examples=30, deadline=None)


def ranking_data(groups):
    """RankingData of ``groups``: lists of (row dict feature -> value, target)."""
    group_offsets, row_offsets, ids, values, targets = [0], [0], [], [], []
    for candidates in groups:
        for row, target in candidates:
            row = {f: v for f, v in row.items() if v != 0}
            ids.extend(sorted(row))
            values.extend(row[f] for f in sorted(row))
            row_offsets.append(len(ids))
            targets.append(target)
        group_offsets.append(group_offsets[-1] + len(candidates))
    return RankingData(np.array(group_offsets, dtype=np.int64), np.array(row_offsets, dtype=np.int64),
                       np.array(ids, dtype=np.int64), np.array(values, dtype=np.float64),
                       np.array(targets), np.arange(1, len(groups) + 1, dtype=np.int64), [])


def random_data(seed, groups=6, max_candidates=4, n_features=7):
    """RankingData with integer values: feature 1 in {0, -1} (so its scale is 1) and counts 0..2
    on features 2.., integer targets; exact arithmetic keeps ties identical across implementations."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(groups):
        candidates = []
        for rank in range(int(rng.integers(1, max_candidates + 1))):
            row = {1: -float(rank > 0)}
            for f in range(2, n_features + 1):
                v = int(rng.integers(0, 3)) if rng.random() < 0.5 else 0
                if v:
                    row[f] = float(v)
            candidates.append((row, float(rng.integers(0, 4))))
        out.append(candidates)
    return ranking_data(out)


def rows_of(data, values=None):
    values = data.values if values is None else values
    return [{int(f): float(v) for f, v in zip(data.feature_ids[a:b], values[a:b])}
            for a, b in zip(data.row_offsets[:-1], data.row_offsets[1:])]


def dot(x, z):
    return sum(v * z.get(f, 0.0) for f, v in x.items())


def gold_rows(data):
    """Highest target of every group, ties to the first row."""
    out = []
    for a, b in zip(data.group_offsets[:-1], data.group_offsets[1:]):
        out.append(max(range(a, b), key=lambda j: (data.targets[j], -j)))
    return out


def first_argmax(scores):
    best = 0
    for j, s in enumerate(scores):
        if s > scores[best]:
            best = j
    return best


def naive_voted(train, test, epochs, seed, score_weight, degree):
    """Freund & Schapire's voted perceptron for ranking in the plainest form: explicit intermediate
    weight vectors (degree 1) or explicit kernel sums (degree > 1), each voting for its argmax."""
    x, gold = rows_of(train), gold_rows(train)

    def kernel(a, b):
        return dot(a, b) if degree == 1 else (1.0 + dot(a, b)) ** degree

    mistakes, survival = [], [0.0]
    vectors = [collections.Counter({1: score_weight})]

    def score(z, upto):
        if degree == 1:
            return dot(z, vectors[upto])
        total = score_weight * z.get(1, 0.0)
        for g, p in mistakes[:upto]:
            total += kernel(x[g], z) - kernel(x[p], z)
        return total

    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        for g in rng.permutation(train.n_groups):
            a, b = train.group_offsets[g], train.group_offsets[g + 1]
            if b - a > 1:
                predicted = a + first_argmax([score(x[j], len(mistakes)) for j in range(a, b)])
                if train.targets[predicted] < train.targets[gold[g]]:
                    mistakes.append((gold[g], predicted))
                    v = collections.Counter(vectors[-1])
                    for f, val in x[gold[g]].items():
                        v[f] += val
                    for f, val in x[predicted].items():
                        v[f] -= val
                    vectors.append(v)
                    survival.append(0.0)
            survival[-1] += 1.0
    z, chosen = rows_of(test), []
    for a, b in zip(test.group_offsets[:-1], test.group_offsets[1:]):
        votes = [0.0] * (b - a)
        for m, c in enumerate(survival):
            if c > 0:
                votes[first_argmax([score(z[j], m) for j in range(a, b)])] += c
        chosen.append(a + first_argmax(votes))
    return chosen, mistakes, survival


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 3), st.sampled_from([0.0, 1.0]), st.sampled_from([1, 2, 3]))
def test_voted_equals_naive(seed, epochs, score_weight, degree):
    train, test = random_data(seed), random_data(seed + 1)
    kernel = "linear" if degree == 1 else f"poly:{degree}"
    reranker = DualReranker(epochs=epochs, kernel=kernel, vote="voted", seed=seed, score_weight=score_weight)
    reranker.fit_ranking(train)
    chosen, mistakes, survival = naive_voted(train, test, epochs, seed, score_weight, degree)
    assert np.array_equal(reranker.survival_, survival)
    assert sum(h["mistakes"] for h in reranker.history_) == len(mistakes)
    assert reranker.choose(test).tolist() == chosen


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 4), st.sampled_from([0.0, 1.0]))
def test_dual_linear_averaged_equals_primal(seed, epochs, score_weight):
    train, test = random_data(seed, groups=8), random_data(seed + 7)
    primal = Reranker(epochs=epochs, average=True, seed=seed, score_weight=score_weight).fit_ranking(train)
    dual = DualReranker(epochs=epochs, kernel="linear", vote="averaged", seed=seed,
                        score_weight=score_weight).fit_ranking(train)
    total = dual.survival_.sum()
    scores = dual.decision_function(test) / total
    assert np.allclose(scores, primal.decision_function(test))
    # the same choice in every group, unless two candidates tie up to rounding (seed 65537 has one)
    for a, b in zip(dual.choose(test).tolist(), primal.choose(test).tolist()):
        assert a == b or np.isclose(scores[a], scores[b], rtol=0, atol=1e-9)


def test_dual_grows_past_its_initial_capacity():
    train = random_data(3, groups=400)
    small = DualReranker(epochs=8, kernel="linear", vote="averaged", seed=0, score_weight=0.0).fit_ranking(train)
    assert len(small.survival_) - 1 > 1024
    primal = Reranker(epochs=8, average=True, seed=0, score_weight=0.0).fit_ranking(train)
    assert small.choose(train).tolist() == primal.choose(train).tolist()


@pytest.mark.parametrize("degree", [1, 2])
def test_growing_the_mistake_arrays_changes_nothing(monkeypatch, degree):
    import structperc.rerank.learners as learners

    monkeypatch.setattr(learners, "INITIAL_MISTAKES", 2)
    train, test = random_data(41, groups=12), random_data(42)
    kernel = "linear" if degree == 1 else f"poly:{degree}"
    reranker = DualReranker(epochs=3, kernel=kernel, vote="voted", seed=4, score_weight=1.0).fit_ranking(train)
    chosen, mistakes, survival = naive_voted(train, test, 3, 4, 1.0, degree)
    assert len(mistakes) > 2
    assert np.array_equal(reranker.survival_, survival)
    assert reranker.choose(test).tolist() == chosen


def shared_data(seed, groups=10, max_candidates=6, n_features=12):
    """RankingData like n-best lists: the candidates of a group are one row of integer counts with a
    few changes each, so that most features are common to the group (with the same value) and some
    are in every candidate with different values."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(groups):
        shared = {f: float(rng.integers(1, 3)) for f in range(2, n_features + 1) if rng.random() < 0.6}
        candidates = []
        for rank in range(int(rng.integers(1, max_candidates + 1))):
            row = {1: -float(rank > 0), **shared}
            for f in rng.choice(np.arange(2, n_features + 1), size=2, replace=False).tolist():
                row[f] = float(rng.integers(0, 3))
            candidates.append((row, float(rng.integers(0, 4))))
        out.append(candidates)
    return ranking_data(out)


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 3), st.sampled_from([0.0, 1.0]))
def test_linear_vote_by_differences_equals_the_dual_vote_and_the_naive_one(seed, epochs, score_weight):
    from structperc._kernels.rank.dual_ranking import Rows, dual_predict, linear_vote

    train, test = shared_data(seed, groups=30), shared_data(seed + 1)
    reranker = DualReranker(epochs=epochs, kernel="linear", vote="voted", seed=seed, score_weight=score_weight)
    reranker.fit_ranking(train)
    support = Rows(reranker.support_offsets_, reranker.support_ids_, reranker.support_values_)
    candidates = Rows(test.row_offsets, test.feature_ids, reranker._scaled_values(test))
    w0 = reranker._w0()
    by_differences = linear_vote(w0, support, reranker.survival_, test.group_offsets, candidates)
    by_dots = dual_predict(w0, support, reranker.survival_, test.group_offsets, candidates, 1)
    assert by_differences[0].tolist() == by_dots[0].tolist()
    assert np.allclose(by_differences[1], by_dots[1])
    assert reranker.choose(test).tolist() == naive_voted(train, test, epochs, seed, score_weight, 1)[0]


@pytest.mark.parametrize("kernel", ["rbf", "poly:0", "poly:x", "poly"])
def test_bad_kernel_names(kernel):
    with pytest.raises(ConfigError, match="unknown kernel"):
        DualReranker(kernel=kernel).fit_ranking(random_data(0))


# ------------------------------------------------------------------------------------ boosting
def naive_boost_round(pairs, h, base_diff, alpha0, alpha, epsilon):
    """W+, W- and Z recomputed from scratch at the current weights (Collins 2000)."""
    w_plus, w_minus, z = collections.Counter(), collections.Counter(), 0.0
    for (g, o), dl in zip(pairs, base_diff):
        margin = alpha0 * dl + sum(alpha[k] for k in h[g] - h[o]) - sum(alpha[k] for k in h[o] - h[g])
        loss = math.exp(-margin)
        z += loss
        for k in h[g] - h[o]:
            w_plus[k] += loss
        for k in h[o] - h[g]:
            w_minus[k] += loss
    gains = {k: abs(math.sqrt(w_plus[k]) - math.sqrt(w_minus[k])) for k in set(w_plus) | set(w_minus)}
    return w_plus, w_minus, z, gains


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from([0.0, 0.7]), st.sampled_from([1e-3, 0.1]))
def test_boosting_equals_naive(seed, alpha0, epsilon):
    data = random_data(seed, groups=8)
    rounds = 6
    booster = BoostReranker(rounds=rounds, epsilon=epsilon, score_weight=alpha0).fit_ranking(data)
    x = rows_of(data)
    h = [frozenset(f for f, v in row.items() if f >= 2 and v != 0) for row in x]
    pairs, base_diff = [], []
    for g, (a, b) in zip(gold_rows(data), zip(data.group_offsets[:-1], data.group_offsets[1:])):
        for j in range(a, b):
            if data.targets[j] < data.targets[g]:
                pairs.append((g, j))
                base_diff.append(x[g].get(1, 0.0) - x[j].get(1, 0.0))

    def column(f):
        """Where feature f separates the pairs: (pair, +1) where only the gold has it, (pair, -1) where only
        the other does."""
        return tuple((i, 1 if f in h[g] else -1) for i, (g, o) in enumerate(pairs) if (f in h[g]) != (f in h[o]))

    alpha = collections.Counter()
    for r in range(rounds):
        w_plus, w_minus, z, gains = naive_boost_round(pairs, h, base_diff, alpha0, alpha, epsilon)
        top = max(gains.values(), default=0.0)
        if top <= 0:
            assert booster.picks_[r] == -1
            break
        k = int(booster.picks_[r])
        # the same pick up to exact ties, which go to the lowest id
        assert gains.get(k, 0.0) == pytest.approx(top, rel=1e-9, abs=1e-12)
        # ties go to the lowest id: checked among features of identical columns, whose gains are equal
        # in any summation order (gains equal only up to rounding may go either way: seeds 753, 762)
        assert k == min(f for f in gains if column(f) == column(k))
        delta = 0.5 * math.log((w_plus[k] + epsilon * z) / (w_minus[k] + epsilon * z))
        assert booster.steps_[r] == pytest.approx(delta, rel=1e-9, abs=1e-12)
        alpha[k] += delta
    expected = np.zeros_like(booster.weights_)
    expected[1] = alpha0
    for k, v in alpha.items():
        expected[k] += v
    assert np.allclose(booster.weights_, expected)
    assert np.allclose(booster.weights_at(rounds), booster.weights_)


def test_boosting_fits_the_base_weight_by_the_exponential_loss():
    data = random_data(11, groups=30)
    booster = BoostReranker(rounds=0).fit_ranking(data)
    a = booster.weights_[1]
    x = rows_of(data)
    diffs = [x[g].get(1, 0.0) - x[j].get(1, 0.0) for g, (lo, hi) in
             zip(gold_rows(data), zip(data.group_offsets[:-1], data.group_offsets[1:]))
             for j in range(lo, hi) if data.targets[j] < data.targets[g]]

    def loss(t):
        return sum(math.exp(-t * d) for d in diffs)
    assert loss(a) <= min(loss(a * 0.9), loss(a * 1.1) if a > 0 else loss(0.1)) + 1e-9


def test_boosting_lowers_the_training_loss():
    data = random_data(5, groups=40)
    booster = BoostReranker(rounds=20, epsilon=0.01).fit_ranking(data)
    assert booster.history_[1]["loss"] < booster.history_[0]["loss"]


# ------------------------------------------------------------------------------------ files and CLI
@pytest.mark.parametrize("make", [
    lambda: DualReranker(epochs=2, kernel="poly:2", vote="voted", seed=1),
    lambda: DualReranker(epochs=2, kernel="linear", vote="averaged", seed=1),
    lambda: BoostReranker(rounds=5, epsilon=0.01),
    lambda: Reranker(epochs=2),
])
def test_every_learner_round_trips_through_its_file(tmp_path, make):
    train, test = random_data(21, groups=30), random_data(22, groups=10)
    reranker = make().fit_ranking(train)
    reranker.save(tmp_path / "r.npz")
    loaded = load_reranker(tmp_path / "r.npz")
    assert type(loaded) is type(reranker)
    assert loaded.choose(test).tolist() == reranker.choose(test).tolist()
    assert np.allclose(loaded.decision_function(test), reranker.decision_function(test))
    assert Reranker.load(tmp_path / "r.npz").choose(test).tolist() == reranker.choose(test).tolist()


def run_cli(*args):
    # `python -m structperc ARGS` as a real process, forked from one that imported the command line once
    return forked_cli.run(args)


def test_cli_trains_voted_kernel_and_boosted_rerankers(tmp_path):
    train, test = random_data(31, groups=40), random_data(32, groups=15)
    for name, data in (("train.svm", train), ("test.svm", test)):
        with open(tmp_path / name, "w") as out:
            write_svmrank(out, data)
    expected = {
        "voted": DualReranker(epochs=3, kernel="linear", vote="voted", seed=0),
        "kernel": DualReranker(epochs=3, kernel="poly:2", vote="averaged", seed=0),
        "boost": BoostReranker(rounds=7, epsilon=0.01),
    }
    flags = {"voted": ["--voted"], "kernel": ["--kernel", "poly:2"], "boost": ["--boost", "--rounds", "7",
                                                                               "--epsilon", "0.01"]}
    for name, flag in flags.items():
        model = tmp_path / f"{name}.npz"
        epochs = [] if name == "boost" else ["--epochs", "3"]  # boosting takes no epochs: an error
        done = run_cli("rerank", "train", tmp_path / "train.svm", "--model", model, *epochs, *flag, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["learner"] == expected[name].learner
        applied = run_cli("rerank", "apply", tmp_path / "test.svm", "--model", model, "--output", tmp_path / "c.txt")
        assert applied.returncode == 0, applied.stderr
        indices = [int(line.split()[1]) for line in (tmp_path / "c.txt").read_text().splitlines()]
        rows = expected[name].fit_ranking(train).choose(test)
        assert indices == (rows - test.group_offsets[:-1]).tolist()
    bad = run_cli("rerank", "train", tmp_path / "train.svm", "--model", tmp_path / "x.npz", "--kernel", "rbf")
    assert bad.returncode == 2 and "unknown kernel 'rbf'" in bad.stderr
    both = run_cli("rerank", "train", tmp_path / "train.svm", "--model", tmp_path / "x.npz", "--boost", "--voted")
    assert both.returncode == 2 and "--boost" in both.stderr


def test_collins_entity_features_of_a_hand_made_candidate():
    from structperc.rerank.pipeline import ENTITY_FEATURES, GLOBAL_FEATURES, candidate_feature_strings

    tokens = {"word": ["Toen", "zei", "Professor", "Cohen", "dat", "het"]}
    labels = ["O", "O", "B-PER", "I-PER", "O", "O"]
    assert not set(ENTITY_FEATURES) & set(GLOBAL_FEATURES)
    assert candidate_feature_strings(tokens, labels, ENTITY_FEATURES) == {
        "ew=PER:Professor_Cohen": 1, "es=PER:Xx_Xx": 1, "el=PER:Cohen": 1, "els=PER:Xx": 1,
        "eb2=PER:Toen_zei": 1, "eb2s=PER:Xx_x": 1, "eb3=PER:<s>_Toen_zei": 1, "eb3s=PER:<s>_Xx_x": 1,
        "ea2=PER:dat_het": 1, "ea2s=PER:x_x": 1, "ea3=PER:dat_het_</s>": 1, "ea3s=PER:x_x_</s>": 1,
    }


def test_entity_backoff_features_of_hand_made_candidates():
    from structperc.rerank.pipeline import ENTITY_BACKOFF, ENTITY_FEATURES, candidate_feature_strings

    backoff = list(ENTITY_BACKOFF)
    assert not set(backoff) & set(ENTITY_FEATURES)
    tokens = {"word": ["Toen", "zei", "Professor", "Cohen", "dat", "het"]}
    assert candidate_feature_strings(tokens, ["O", "O", "B-PER", "I-PER", "O", "O"], backoff) == {
        "ef=PER:Professor": 1, "efs=PER:Xx": 1, "eb1=PER:zei": 1, "ea1=PER:dat": 1,
        "ei=PER:Professor": 1, "ei=PER:Cohen": 1, "en=PER:2": 1,
    }
    # two entities of one word: counts add up, and the contexts reach the sentence's ends
    tokens = {"word": ["Cohen", "en", "Cohen"]}
    assert candidate_feature_strings(tokens, ["B-PER", "O", "B-ORG"], backoff) == {
        "ef=PER:Cohen": 1, "ef=ORG:Cohen": 1, "efs=PER:Xx": 1, "efs=ORG:Xx": 1,
        "eb1=PER:<s>": 1, "eb1=ORG:en": 1, "ea1=PER:en": 1, "ea1=ORG:</s>": 1,
        "ei=PER:Cohen": 1, "ei=ORG:Cohen": 1, "en=PER:1": 1, "en=ORG:1": 1,
    }
    assert candidate_feature_strings(tokens, ["B-PER", "O", "B-PER"], ["entity_word", "entity_length"]) == {
        "ei=PER:Cohen": 2, "en=PER:1": 2}
