"""An L-BFGS fit runs scipy in a thread of its own (``train.lbfgs.SteppedLBFGSB``): however the fit
ends, an error or an interrupt in the middle included, no such thread is left holding its data."""
import threading

import pytest

from structperc import Tagger

SENTENCES = [["the", "dog", "barks"], ["a", "cat", "sleeps"], ["the", "cat", "barks"]] * 10
LABELS = [["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"]] * 10


def _scipy_threads():
    return [t for t in threading.enumerate() if t.is_alive() and getattr(t, "_target", None) is not None
            and getattr(t._target, "__name__", "") == "_run"]


class Interrupt(BaseException):
    """Stands for Ctrl-C inside the fit (a BaseException, as KeyboardInterrupt is)."""


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Interrupt, RuntimeError])
def test_an_interrupted_lbfgs_fit_leaves_no_thread(stop):
    before = len(_scipy_threads())

    def interrupt(record):
        if record.epoch == 2:
            raise stop("stopped in the middle of the fit")

    with pytest.raises(stop):
        Tagger(trainer="crf", solver="lbfgs", epochs=20).fit(SENTENCES, LABELS, callback=interrupt)
    for thread in _scipy_threads():
        thread.join(timeout=5)
    assert len(_scipy_threads()) == before


def test_a_finished_lbfgs_fit_leaves_no_thread():
    before = len(_scipy_threads())
    Tagger(trainer="crf", solver="lbfgs", epochs=3).fit(SENTENCES, LABELS)
    assert len(_scipy_threads()) == before
