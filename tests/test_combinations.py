"""Every learning rule against every way of training: each cell trains and meets its reference, or is
refused with a ConfigError before the first epoch. The cells come from the registry
(``train.every_variant``) and the rules' declarations (``supports``, ``orders``), so a new rule or
solver is covered without new test code.

References: a resumed run gives the uninterrupted run's model file byte for byte; parameter mixing
with one worker gives the serial model; hashing without collisions gives the exact features' model;
every other cell fits a training set whose labels follow from the words (training accuracy >= 0.9).
"""
import numpy as np
import pytest

pytest.importorskip("dask.distributed")

from structperc.errors import ConfigError  # noqa: E402
from structperc.estimator.core import TaggerCore  # noqa: E402
import builders  # noqa: E402
from structperc.train import Problem, every_variant, make_rule, train_online  # noqa: E402
from structperc.train.mixing import dask_client, train_mixed  # noqa: E402

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "big", "red", "fast", "home"]
LABEL_OF = {w: ("B-NP", "I-NP", "O")[i % 3] for i, w in enumerate(WORDS)}
TEMPLATES = ["w[0]", "w[-1]", "suffix2[0]"]
VARIANTS = every_variant()
IDS = [name + "".join(f"-{v}" for v in options.values()) for name, options, _ in VARIANTS]


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(2, 7)))]
        X.append([(w, "P" + str(len(w) % 3)) for w in words])
        y.append([LABEL_OF[w] for w in words])
    return X, y


def _dicts(X):
    return [[{"w": w, "pos": p, "suf": w[-2:]} for w, p in s] for s in X]


class Epochs:
    """A callback that counts the epochs run: a refusal must come before the first."""

    def __init__(self):
        self.n = 0

    def __call__(self, record):
        self.n += 1


def _tagger(name, options, **more):
    return TaggerCore(trainer=name, templates=more.pop("templates", TEMPLATES), columns=["word", "pos"], seed=3,
                      epochs=more.pop("epochs", 4), **options, **more)


def _accuracy(tagger, X, y):
    predicted = tagger.predict(X)
    flat = [a == b for p, g in zip(predicted, y) for a, b in zip(p, g)]
    return sum(flat) / len(flat)


def _fits(tagger, X, y, **fit):
    tagger.fit(X, y, **fit)
    assert _accuracy(tagger, X, y) >= 0.9


def _refused(make, **fit):
    epochs = Epochs()
    with pytest.raises(ConfigError) as caught:
        make().fit(*_data(), callback=epochs, **fit)
    assert epochs.n == 0, "refused after training had started"
    return str(caught.value)


@pytest.fixture(scope="module")
def client():
    """Two single-threaded workers in this process, shut down at the end."""
    manager = dask_client(workers=2)
    try:
        yield manager.__enter__()
    finally:
        manager.__exit__(None, None, None)


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_serial(name, options, rule):
    _fits(_tagger(name, options), *_data())


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_parameter_mixing(name, options, rule, client):
    X, y = _data()
    if "mixing" not in rule.supports:
        message = _refused(lambda: _tagger(name, options), client=client)
        assert name in message and "mixing" in message
        return
    # one shard is the serial run, byte for byte
    model, enc = builders.small_model(3, n_sentences=12, max_len=5)
    start = model.weights.copy()
    train_online(make_rule(name, **options, **rule.warmup_options), Problem(model, model.data(enc)), 3, seed=4)
    serial = model.weights.copy()
    model.weights = start
    train_mixed(make_rule(name, **options, **rule.warmup_options), Problem(model, model.data(enc)), 3, client,
                seed=4, n_shards=1)
    assert model.weights.tobytes() == serial.tobytes()
    # two workers fit the data
    _fits(_tagger(name, options, epochs=6), X, y, client=client)


@pytest.mark.parametrize("l1", [False, True], ids=["", "l1"])
@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_checkpoint_and_resume(name, options, rule, l1, tmp_path):
    if l1:
        if "l1" not in rule.supports:
            pytest.skip("the l1 cell checks that this rule refuses l1")
        options = {**options, "l1": 0.01}
    X, y = _data()
    checkpoint = tmp_path / "run.checkpoint.npz"
    if "checkpoint" not in rule.supports:
        message = _refused(lambda: _tagger(name, options), checkpoint=checkpoint)
        assert name in message and "checkpoint" in message
        assert not checkpoint.exists()
        return
    _tagger(name, options, epochs=5).fit(X, y).model_.save(tmp_path / "whole.npz")
    _tagger(name, options, epochs=2).fit(X, y, checkpoint=checkpoint)
    _tagger(name, options, epochs=5).fit(X, y, resume=checkpoint).model_.save(tmp_path / "resumed.npz")
    assert (tmp_path / "resumed.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_l1(name, options, rule):
    if "l1" not in rule.params:
        with pytest.raises(ConfigError, match="does not take option 'l1'"):
            _tagger(name, {**options, "l1": 0.01}).fit(*_data())
        return
    if "l1" not in rule.supports:
        assert "l1" in _refused(lambda: _tagger(name, {**options, "l1": 0.01}))
        return
    _fits(_tagger(name, {**options, "l1": 0.001}, epochs=6), *_data())


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_partial_fit(name, options, rule):
    X, y = _data()
    tagger = _tagger(name, options, epochs=2).fit(X[:20], y[:20])
    tagger.partial_fit(X, y)
    assert _accuracy(tagger, X, y) >= 0.9


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_order_two(name, options, rule):
    if 2 not in rule.orders:
        assert "order" in _refused(lambda: _tagger(name, options, order=2))
        return
    _fits(_tagger(name, options, order=2), *_data())


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_hashing_without_collisions_is_the_exact_model(name, options, rule):
    X, y = _data()
    exact = _tagger(name, options).fit(X, y)
    hashed = _tagger(name, options, hash_bits=16).fit(X, y)
    assert hashed.predict(X) == exact.predict(X)
    # the same weights, up to the order of the features (the empty hash buckets keep 0)
    w, v = hashed.model_.weights, exact.model_.weights
    assert np.allclose(np.sort(w[w != 0]), np.sort(v[v != 0]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_feature_dicts(name, options, rule):
    X, y = _data()
    tagger = TaggerCore(trainer=name, seed=3, epochs=4, **options).fit(_dicts(X), y)
    assert _accuracy(tagger, _dicts(X), y) >= 0.9


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_gold_pairs_layout(name, options, rule):
    _fits(_tagger(name, options, all_pairs=False), *_data())


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_tag_dictionary(name, options, rule):
    _fits(_tagger(name, options, tag_dict=1), *_data())


@pytest.mark.parametrize("name, options, rule", VARIANTS, ids=IDS)
def test_partial_labels(name, options, rule):
    X, y = _data()
    rng = np.random.default_rng(1)
    partial = [[label if rng.random() > 0.2 else "?" for label in s] for s in y]
    tagger = _tagger(name, options, missing_label="?", epochs=6).fit(X, partial)
    assert _accuracy(tagger, X, y) >= 0.9
