"""Learning rules behind one on-line loop; ``TRAINERS`` maps ``--trainer`` names to them.

Each rule class declares ``params`` (its options and their defaults) and ``probabilistic``.
"""
from structperc.errors import ConfigError
from structperc.train.base import EpochRecord, LearningRule, LoopState, Problem, train_online
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule
from structperc.train.perceptron import PerceptronRule
from structperc.train.winnow import WinnowRule

TRAINERS = {"perceptron": PerceptronRule, "crf": CRFRule, "hinge": HingeRule, "memm": MEMMRule,
            "winnow": WinnowRule}


def check_options(name, options):
    """The rule class called ``name``; ValueError for an unknown name, ConfigError for an option
    (a key of ``options``) that the rule does not take."""
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}: choose one of {', '.join(TRAINERS)}")
    cls = TRAINERS[name]
    for option in options:
        if option not in cls.params:
            raise ConfigError(f"trainer {name!r} does not take option {option!r} (it takes: {', '.join(cls.params)})")
    return cls


def make_rule(name, **options):
    """The learning rule called ``name`` with ``options``; an option it does not take is a ConfigError."""
    return check_options(name, options)(**options)


__all__ = ["TRAINERS", "EpochRecord", "LearningRule", "LoopState", "Problem", "check_options", "make_rule",
           "train_online"]
