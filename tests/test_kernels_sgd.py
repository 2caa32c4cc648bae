"""The SGD rules (crf, memm, hinge) against naive references: each kernel gradient against central
finite differences of its objective, and each rule's lazily scaled (and averaged) steps against
eager steps that decay every weight."""
import numpy as np
import pytest

import naive
from builders import add_expected_counts
from structperc._kernels.learn import crf as crf_kernels
from structperc._kernels.learn import memm as memm_kernels
from structperc._kernels.learn import sgd
from structperc.train import Problem
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule


def crf_gradient(model, enc, s, w):
    """log P(y | x) and Φ(x, y) - E[Φ] from the kernel's marginals and expected counts; the weights
    any labeling touches."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    ll, node, edge = crf_kernels.crf_sentence(w, 1.0, model.layout(), model.data(enc), a, b)
    grad = model.feature_vector(enc, s, enc.labels[a:b])
    add_expected_counts(grad, -1.0, model.layout(), model.data(enc), a, b, node, edge)
    touched = np.unique(np.concatenate([model.phi(enc, s, y) for y in naive.all_labelings(b - a, model.n_labels)]))
    return ll, grad, touched


def memm_gradient(model, enc, s, w):
    """sum_t log q_t(y_t) and its gradient from the kernels (checked against the naive gradient);
    the weights the gradient touches."""
    a, b = enc.sentence_offsets[s], enc.sentence_offsets[s + 1]
    q, gold_log_q = memm_kernels.memm_sentence(w, 1.0, model.layout(), model.data(enc), a, b)
    grad = np.zeros_like(w)
    memm_kernels.add_local_gradient(grad, 1.0, model.layout(), model.data(enc), a, b, q, gold_log_q)
    np.testing.assert_allclose(grad, naive.naive_local_gradient(model, enc, s, w), atol=1e-12)
    return gold_log_q.sum(), grad, np.flatnonzero(grad)


# (kernel, reference objective, seed offset of the sampled weights)
GRADIENTS = {
    "crf": (crf_gradient, naive.naive_log_likelihood, 100),
    "memm": (memm_gradient, naive.naive_local_log_likelihood, 200),
}


@pytest.mark.parametrize("rule", list(GRADIENTS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constrain", [None, "bio"])
def test_gradient_matches_central_finite_differences(rule, seed, constrain, small_model):
    kernel, objective, offset = GRADIENTS[rule]
    model, enc = small_model(seed, constrain)
    rng = np.random.default_rng(offset + seed)
    w = model.weights
    for s in range(3):
        value, grad, touched = kernel(model, enc, s, w)
        assert value == pytest.approx(objective(model, enc, s, w))
        checked = np.concatenate([rng.choice(touched, size=min(12, len(touched)), replace=False),
                                  rng.integers(0, len(w), 3)])
        for i in checked:
            numeric = naive.central_difference(lambda v: objective(model, enc, s, v), w, i)
            assert grad[i] == pytest.approx(numeric, abs=1e-6), i


def crf_case(batch_size):
    def case(model, enc, visits):
        eta0, l2 = 0.5, 0.3  # a strong decay: s drops well below 1
        history = naive.naive_eager_sgd(model, enc, visits, eta0, l2, batch_size)

        def rule(average):
            return CRFRule(l2=l2, eta0=eta0, batch_size=batch_size, average=average, average_start=0)

        def check(rule, counters):
            assert rule.state[sgd.SCALE] < 0.5

        return history, rule, 2 * batch_size, check  # two slices, as the on-line loop passes them
    return case


def memm_case(model, enc, visits):
    eta0, l2 = 0.5, 0.3
    end = model.layout().off_end
    model.weights[end: end + model.n_labels] = 0.0
    history = naive.eager_sgd(model.weights.copy(), visits, eta0, l2,
                              lambda s, w: naive.naive_local_gradient(model, enc, s, w))

    def check(rule, counters):
        assert not rule.weights()[end: end + model.n_labels].any()  # the end block stays zero

    return history, lambda average: MEMMRule(l2=l2, eta0=eta0, average=average), 4, check


def hinge_case(model, enc, visits):
    eta0, l2, cost = 0.8, 0.2, 1.0
    history = naive.naive_hinge_sgd(model, enc, visits, eta0, l2, cost)

    def check(rule, counters):
        assert counters["violations"] > 0

    return history, lambda average: HingeRule(l2=l2, eta0=eta0, cost=cost, average=average), 5, check


# rule -> (case, weight scale of the random model, passes over the sentences)
EAGER = {
    "crf": (crf_case(1), 0.1, 2),
    "crf-batch3": (crf_case(3), 0.1, 2),
    "memm": (memm_case, 0.1, 2),
    "hinge": (hinge_case, 0.05, 3),
}


@pytest.mark.parametrize("rule", list(EAGER))
@pytest.mark.parametrize("seed", range(3))
def test_lazy_steps_equal_eager_steps_and_their_average(rule, seed, small_model):
    case, scale, passes = EAGER[rule]
    model, enc = small_model(seed, "bio", scale=scale)
    rng = np.random.default_rng(seed)
    visits = np.concatenate([rng.permutation(enc.n_sentences) for _ in range(passes)]).astype(np.int64)
    history, make_rule, split, check = case(model, enc, visits)
    for average in (False, True):
        learner = make_rule(average)
        learner.begin(Problem(model, model.data(enc)))
        learner.run(visits[:split])
        counters = learner.run(visits[split:])
        expected = np.mean(history, axis=0) if average else history[-1]
        np.testing.assert_allclose(learner.weights(), expected, atol=1e-10)
        check(learner, counters)


def test_rescale_keeps_real_weights_and_average():
    rng = np.random.default_rng(0)
    v, u = rng.normal(size=20), rng.normal(size=20)
    state = np.array([3e-10, 5.0, 7.0, 4.0])
    current = sgd.real_weights(v, u, state, False)
    average = sgd.real_weights(v, u, state, True)
    sgd.decay(v, state, 0.5)  # s falls below the threshold: folded into v
    assert state[sgd.SCALE] == 1.0
    np.testing.assert_allclose(sgd.real_weights(v, u, state, False), 0.5 * current)
    np.testing.assert_allclose(sgd.real_weights(v, u, state, True), average)
