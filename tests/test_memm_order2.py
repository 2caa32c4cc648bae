"""Second-order MEMM (Ratnaparkhi's tagger): local distributions P(y_t | y_{t-2}, y_{t-1}, x) against
a naive softmax, decoding and marginals against enumeration, the gradient against finite
differences, lazy SGD against eager SGD, and training through the Tagger."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from strategies import trigram_chains
from structperc._kernels.learn import memm as kernels
from structperc._kernels.score import scoring
from structperc._kernels.decode.second_order import viterbi2, viterbi2_context
from structperc.features.encode import FIRST_ID, FeatureEncoder
from structperc.model.linear_chain import LinearChainModel
from structperc.estimator.marginals import check_probabilistic, marginals
from structperc.estimator.tagger import Tagger
from structperc.model.layouts import build_tag_dict
from structperc.corpus import as_corpus
from structperc.train import Problem
from structperc.train.memm import MEMMRule
from test_second_order_model import TEMPLATES, random_corpus


def memm2_model(seed, n_labels=3, threshold=None, masked=False, scale=1.0):
    """An order-2 local model over random sentences (emission and pair features), random weights,
    optionally a tag dictionary (words seen >= threshold times) and a random transition mask."""
    rng = np.random.default_rng(seed)
    corpus = random_corpus(rng, 12, n_labels)
    encoder = FeatureEncoder(TEMPLATES)
    enc = encoder.fit_transform(corpus, corpus.columns["label"])
    tag_dict = None
    if threshold is not None:
        n_words = len(encoder.vocabularies_["word"]) + FIRST_ID
        tag_dict = build_tag_dict(enc.word_ids, enc.labels, n_words, n_labels, threshold)
    model = LinearChainModel(encoder, order=2, tag_dict=tag_dict, normalization="local")
    model.weights = scale * rng.normal(size=model.weights.shape)
    if masked:
        model.mask_penalty[rng.random(model.mask_penalty.shape) < 0.25] = -np.inf
    model.metadata["training"] = {"trainer": "memm"}
    return model, enc


def allowed_labels(model, enc, token):
    cand_offsets, cand_labels = model.candidates(enc)
    if len(cand_offsets) == 0:
        return list(range(model.n_labels))
    return list(cand_labels[cand_offsets[token]: cand_offsets[token + 1]])


def history(y, t, start):
    """(y_{t-2}, y_{t-1}), the start symbol before the sentence."""
    return (y[t - 2] if t > 1 else start), (y[t - 1] if t > 0 else start)


def local_feature_vector2(model, enc, token, pp, p, c):
    """Indicator vector of the weights of label c after (pp, p) at a token: emission, transition,
    pair features with (p, c) and the second-order (pp, p, c)."""
    L, layout = model.n_labels, model.layout()
    vec = np.zeros_like(model.weights)
    for f in enc.feature_ids[enc.feature_offsets[token]: enc.feature_offsets[token + 1]]:
        vec[f * L + c] += 1
    vec[layout.off_trans + p * L + c] += 1
    for g in enc.pair_ids[enc.pair_offsets[token]: enc.pair_offsets[token + 1]]:
        vec[layout.off_pair + (g * (L + 1) + p) * L + c] += 1
    vec[layout.off_trans2 + (pp * (L + 1) + p) * L + c] += 1
    return vec


def naive_local_log_probs(model, enc, token, pp, p, w):
    """log P(c | pp, p, x) of every label c: softmax over the allowed labels of w · features plus
    the mask (all -inf for a history with no allowed continuation)."""
    scores = np.full(model.n_labels, -np.inf)
    for c in allowed_labels(model, enc, token):
        scores[c] = w @ local_feature_vector2(model, enc, token, pp, p, c) + model.mask_penalty[p, c]
    if np.all(scores == -np.inf):
        return scores
    return scores - np.logaddexp.reduce(scores)


def naive_table(model, enc, s, w):
    """(n, L + 1, L + 1, L) log P(c | pp, p, x) of sentence s for every history."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    L = model.n_labels
    table = np.full((b - a, L + 1, L + 1, L), -np.inf)
    for t in range(b - a):
        for pp in range(L + 1):
            for p in range(L + 1):
                table[t, pp, p] = naive_local_log_probs(model, enc, a + t, pp, p, w)
    return table


def sequence_log_prob(table, y):
    L = table.shape[-1]
    return sum(table[(t,) + history(y, t, L) + (y[t],)] for t in range(len(y)))


def naive_log_likelihood(model, enc, s, w):
    """sum over the tokens whose gold label is possible of log P(y_t | gold y_{t-2}, y_{t-1}, x)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    total = 0.0
    for t in range(b - a):
        lp = naive_local_log_probs(model, enc, a + t, *history(gold, t, model.n_labels), w)[gold[t]]
        if np.isfinite(lp):
            total += lp
    return total


def naive_gradient(model, enc, s, w):
    """sum over the usable tokens of sum_c ([c == y_t] - q_t(c)) * features(t, gold pp, gold p, c)."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    gold = enc.labels[a:b]
    grad = np.zeros_like(w)
    for t in range(b - a):
        pp, p = history(gold, t, model.n_labels)
        log_q = naive_local_log_probs(model, enc, a + t, pp, p, w)
        if not np.isfinite(log_q[gold[t]]):
            continue
        for c in range(model.n_labels):
            grad += ((c == gold[t]) - np.exp(log_q[c])) * local_feature_vector2(model, enc, a + t, pp, p, c)
    return grad


def sentence_arrays(model, enc, s, w):
    """emission, transition2, candidates and context scores of sentence s, as the decoder builds them."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    emission = scoring.emission_scores(w, model.layout(), model.data(enc), a, b)
    transition = scoring.transition_scores(w, model.layout(), model.data(enc), a, b)
    transition2 = scoring.second_order_transitions(w, model.layout(), transition)
    offsets, labels = scoring.sentence_candidates(model.layout(), model.data(enc), a, b)
    context = scoring.local_context_scores2(emission, transition2, offsets, labels)
    return emission, transition2, offsets, labels, context


def memm_sentence(model, enc, s, w, scale=1.0):
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    return kernels.memm_sentence(w, scale, model.layout(), model.data(enc), a, b)


CASES = [(seed, threshold, masked) for seed in range(3) for threshold in (None, 1, 2) for masked in (False, True)]


@pytest.mark.parametrize("seed, threshold, masked", CASES)
def test_local_probabilities_are_the_softmax_of_each_history(seed, threshold, masked):
    model, enc = memm2_model(seed, threshold=threshold, masked=masked)
    L, w = model.n_labels, model.weights
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        expected = naive_table(model, enc, s, w)
        emission, transition2, offsets, labels, context = sentence_arrays(model, enc, s, w)
        sets = naive.candidate_sets(offsets, labels)
        for t in range(b - a):
            histories = set(itertools.product(sets[t - 2] if t > 1 else [L], sets[t - 1] if t > 0 else [L]))
            for pp, p in itertools.product(range(L + 1), repeat=2):
                if (pp, p) not in histories or not np.isfinite(expected[t, pp, p]).any():
                    assert context[t, pp, p] == -np.inf  # outside the candidates, or a dead history
                    continue
                local = emission[t] + transition2[t if len(transition2) > 1 else 0, pp, p] + context[t, pp, p]
                np.testing.assert_allclose(local[sets[t]], expected[t, pp, p, sets[t]], atol=1e-12)
                np.testing.assert_allclose(np.exp(local[sets[t]]).sum(), 1.0)
        # training: the distribution after the gold history, under w = scale * v too
        q, gold_log_q = memm_sentence(model, enc, s, w)
        q_scaled, gold_log_q_scaled = memm_sentence(model, enc, s, w / 4.0, scale=4.0)
        gold = enc.labels[a:b]
        for t in range(b - a):
            row = expected[(t,) + history(gold, t, L)]
            if np.isfinite(row[gold[t]]):
                np.testing.assert_allclose(q[t], np.exp(row), atol=1e-12)
                assert gold_log_q[t] == pytest.approx(row[gold[t]])
            else:
                assert gold_log_q[t] == -np.inf
        np.testing.assert_allclose(q_scaled, q, atol=1e-12)
        np.testing.assert_allclose(gold_log_q_scaled, gold_log_q)


@pytest.mark.parametrize("seed, threshold, masked", CASES)
def test_decode_is_the_brute_force_argmax_of_the_local_log_likelihood(seed, threshold, masked):
    model, enc = memm2_model(seed, threshold=threshold, masked=masked, scale=2.0)
    predicted, scores = model.decode(enc)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        table = naive_table(model, enc, s, model.weights)
        sets = [allowed_labels(model, enc, a + t) for t in range(b - a)]
        scored = [(sequence_log_prob(table, y), y) for y in itertools.product(*sets)]
        best, best_y = max(scored, key=lambda item: item[0])
        if best == -np.inf:
            assert scores[s] == -np.inf
            continue
        assert scores[s] == pytest.approx(best)
        assert list(predicted[a:b]) == list(best_y)


@pytest.mark.parametrize("seed, threshold, masked", CASES)
def test_marginals_match_enumeration_of_the_product_of_local_distributions(seed, threshold, masked):
    model, enc = memm2_model(seed, threshold=threshold, masked=masked, scale=2.0)
    check_probabilistic(model)
    node, best = marginals(model, enc)
    predicted, _ = model.decode(enc)
    L = model.n_labels
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        table = naive_table(model, enc, s, model.weights)
        expected = np.zeros((b - a, L))
        for y in itertools.product(range(L), repeat=b - a):
            expected[np.arange(b - a), list(y)] += np.exp(sequence_log_prob(table, y))
        np.testing.assert_allclose(node[a:b], expected, atol=1e-12)
        assert best[s] == pytest.approx(sequence_log_prob(table, predicted[a:b]))
    if not masked:  # without a mask no history loses mass
        np.testing.assert_allclose(node.sum(axis=1), 1.0)


@pytest.mark.parametrize("seed, threshold, masked", CASES[::2] + CASES[1::4])
def test_gradient_matches_the_naive_gradient_and_finite_differences(seed, threshold, masked):
    model, enc = memm2_model(seed, threshold=threshold, masked=masked)
    rng = np.random.default_rng(100 + seed)
    w = model.weights
    off2 = model.layout().off_trans2
    for s in range(4):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        q, gold_log_q = memm_sentence(model, enc, s, w)
        usable = np.isfinite(gold_log_q)
        assert gold_log_q[usable].sum() == pytest.approx(naive_log_likelihood(model, enc, s, w))
        grad = np.zeros_like(w)
        kernels.add_local_gradient(grad, 1.0, model.layout(), model.data(enc), a, b, q, gold_log_q)
        np.testing.assert_allclose(grad, naive_gradient(model, enc, s, w), atol=1e-12)
        assert usable.sum() == 0 or np.any(grad[off2:])  # the second-order block is trained
        touched = np.flatnonzero(grad)
        checked = np.concatenate([rng.choice(touched, size=min(12, len(touched)), replace=False),
                                  off2 + np.flatnonzero(grad[off2:])[:4], rng.integers(0, len(w), 3)])
        for i in checked:
            numeric = naive.central_difference(lambda v: naive_log_likelihood(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), i


def test_skipped_tokens_are_the_tokens_whose_gold_label_is_impossible():
    model, enc = memm2_model(1, masked=True)
    expected = 0
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        gold = enc.labels[a:b]
        expected += sum(model.mask_penalty[history(gold, t, model.n_labels)[1], gold[t]] == -np.inf
                        for t in range(b - a))
    assert expected > 0
    rule = MEMMRule(l2=0.1, eta0=0.1)
    rule.begin(Problem(model, model.data(enc)))
    assert rule.run(np.arange(enc.n_sentences, dtype=np.int64)) == {"skipped_tokens": expected}


@pytest.mark.parametrize("seed, threshold", [(0, None), (1, 1), (2, 2)])
def test_lazy_steps_equal_eager_steps_and_their_average(seed, threshold):
    model, enc = memm2_model(seed, threshold=threshold, masked=seed == 2, scale=0.1)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(2)]).astype(np.int64)
    eta0, l2 = 0.5, 0.3
    end = model.layout().off_end
    model.weights[end: end + model.n_labels] = 0.0
    history_ = naive.eager_sgd(model.weights.copy(), visits, eta0, l2, lambda s, w: naive_gradient(model, enc, s, w))
    for average in (False, True):
        rule = MEMMRule(l2=l2, eta0=eta0, average=average, average_start=0)
        rule.begin(Problem(model, model.data(enc)))
        rule.run(visits[:5])
        rule.run(visits[5:])
        expected = np.mean(history_, axis=0) if average else history_[-1]
        np.testing.assert_allclose(rule.weights(), expected, atol=1e-10)
        assert not rule.weights()[end: end + model.n_labels].any()  # the end block stays zero


@settings(max_examples=150, deadline=None)
@given(trigram_chains(), st.integers(0, 2**32 - 1))
def test_viterbi2_context_is_the_brute_force_argmax(instance, seed):
    emission, transition2, end, cand_offsets, cand_labels = instance
    n, L = emission.shape
    rng = np.random.default_rng(seed)
    context = rng.integers(-2, 3, size=(n, L + 1, L + 1)).astype(np.float64)
    context[rng.random(context.shape) < 0.2] = -np.inf
    # with no context it is viterbi2, exactly
    path0, score0 = viterbi2_context(emission, transition2, np.zeros_like(context), end, cand_offsets, cand_labels)
    path, score = viterbi2(emission, transition2, end, cand_offsets, cand_labels)
    np.testing.assert_array_equal(path0, path)
    assert score0 == score

    def total(y):
        return naive.sequence_score2(emission, transition2, end, y) + sum(
            context[(t,) + history(y, t, L)] for t in range(n))

    scored = []
    for labels in itertools.product(*naive.candidate_sets(cand_offsets, cand_labels)):
        y = np.array(labels, dtype=np.int64)
        if np.isfinite(total(y)):
            scored.append((-total(y), tuple(y[::-1]), y))
    path, score = viterbi2_context(emission, transition2, context, end, cand_offsets, cand_labels)
    if not scored:
        assert score == -np.inf
        return
    scored.sort(key=lambda item: (item[0], item[1]))
    np.testing.assert_array_equal(path, scored[0][2])  # ties broken as in viterbi2
    assert score == -scored[0][0]


def skip_two_data(rng, n=80):
    """The label of the last word depends on the first through an uninformative middle "M": only
    the label two back tells X from Y."""
    X, y = [], []
    for _ in range(n):
        first = int(rng.integers(0, 2))
        X.append([["p", "q"][first], "m", "e"])
        y.append([["P", "Q"][first], "M", ["X", "Y"][first]])
    return X, y


@pytest.mark.parametrize("tag_dict", [None, 1])
def test_tagger_learns_a_second_order_dependency_and_round_trips(tmp_path, tag_dict):
    X, y = skip_two_data(np.random.default_rng(0))
    second = Tagger(templates=["w[0]"], trainer="memm", order=2, epochs=10, tag_dict=tag_dict).fit(X, y)
    assert second.model_.order == 2 and second.model_.normalization == "local"
    assert second.history_[-1].stats["skipped_tokens"] == 0
    assert second.predict(X) == y
    first = Tagger(templates=["w[0]"], trainer="memm", order=1, epochs=10, tag_dict=tag_dict).fit(X, y)
    assert first.predict(X) != y  # P(X | M, "e") cannot depend on the first label

    node, best = marginals(second.model_, second.model_.encoder.transform(as_corpus(X, y, None)))
    np.testing.assert_allclose(node.sum(axis=1), 1.0)
    assert np.all(best > np.log(0.5))  # the learnt chain is confident on its own training data
    second.save(tmp_path / "memm2.npz")
    loaded = Tagger.load(tmp_path / "memm2.npz")
    assert loaded.order == 2 and loaded.trainer == "memm"
    assert loaded.predict(X) == y
    loaded_node, loaded_best = marginals(loaded.model_, loaded.model_.encoder.transform(as_corpus(X, y, None)))
    np.testing.assert_array_equal(loaded_node, node)
    np.testing.assert_array_equal(loaded_best, best)


def test_tagger_trains_on_random_data_and_decodes_consistently():
    rng = np.random.default_rng(3)
    corpus = random_corpus(rng, 40, 4)
    tagger = Tagger(templates=TEMPLATES, trainer="memm", order=2, epochs=3, tag_dict=2).fit(corpus)
    objectives = [r.stats["objective"] for r in tagger.history_]
    assert objectives[-1] > objectives[0]
    model = tagger.model_
    enc = model.encoder.transform(corpus)
    predicted, scores = model.decode(enc)
    node, best = marginals(model, enc)
    np.testing.assert_allclose(best, scores)
    np.testing.assert_allclose(node.sum(axis=1), 1.0)
    for s in range(enc.n_sentences):
        a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
        assert scores[s] == pytest.approx(sequence_log_prob(naive_table(model, enc, s, model.weights), predicted[a:b]))
