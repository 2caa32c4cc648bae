"""``utils.collector.collector_paused``: the cyclic collector is off inside the block and as it was
after it, whatever the block does; encoding feature dicts runs with it off and leaves it on."""
import gc

import pytest

from structperc.features.dicts import AttributeEncoder
from structperc.utils.collector import collector_paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_off_inside_and_on_again_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_again_after_an_exception(collector_on):
    with pytest.raises(ValueError):
        with collector_paused():
            raise ValueError("inside")
    assert gc.isenabled()


def test_a_caller_who_turned_it_off_keeps_it_off(collector_on):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_encoding_dicts_interns_with_the_collector_off(collector_on, monkeypatch):
    import structperc.features.dicts as dicts

    seen = []
    read = dicts.read_dicts

    def watched(X):
        seen.append(gc.isenabled())
        return read(X)

    monkeypatch.setattr(dicts, "read_dicts", watched)
    X = [[{"w": "a", "up": False}, {"w": "b", "n": 2.0}]]
    encoded = AttributeEncoder().fit_transform(X, ["A", "B"])
    assert seen == [False] and gc.isenabled()
    assert list(encoded.labels) == [0, 1]
