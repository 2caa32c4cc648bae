"""Learning rules behind one on-line loop; ``TRAINERS`` maps ``--trainer`` names to them."""
import inspect

from .base import EpochRecord, LearningRule, Problem, train_online
from .crf import CRFRule
from .hinge import HingeRule
from .memm import MEMMRule
from .perceptron import PerceptronRule

TRAINERS = {"perceptron": PerceptronRule, "crf": CRFRule, "hinge": HingeRule, "memm": MEMMRule}


def make_rule(name, **options):
    """The learning rule called ``name``, built from the options its constructor takes."""
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}: choose one of {', '.join(TRAINERS)}")
    cls = TRAINERS[name]
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted})


__all__ = ["TRAINERS", "EpochRecord", "LearningRule", "Problem", "make_rule", "train_online"]
