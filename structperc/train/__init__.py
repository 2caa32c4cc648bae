"""Learning rules behind one on-line loop, and the registry ``TRAINERS`` of them by name.

A rule is one module here: a ``LearningRule`` subclass that declares its name, options
(``Param``), kernels and mistake counter (see ``base.LearningRule``), plus one line in
``TRAINERS``. Everything else (``Tagger``'s options and checks, the command line's options, the
warm-up and the "compiling kernels" notice) is derived from the registry. Imports kernels, model
and features; nothing above.
"""
from structperc.errors import ConfigError
from structperc.train.arow import ArowRule
from structperc.train.base import EpochRecord, LearningRule, LoopState, Param, Problem, train_online
from structperc.train.crf import CRFRule
from structperc.train.hinge import HingeRule
from structperc.train.memm import MEMMRule
from structperc.train.passive_aggressive import PassiveAggressiveRule
from structperc.train.perceptron import PerceptronRule
from structperc.train.winnow import WinnowRule

TRAINERS = {rule.name: rule for rule in (PerceptronRule, CRFRule, HingeRule, MEMMRule, WinnowRule, ArowRule,
                                         PassiveAggressiveRule)}

# every option of any rule, name -> Param (the first rule's declaration where several share it)
RULE_OPTIONS = {}
for _rule in TRAINERS.values():
    for _name, _param in _rule.params.items():
        RULE_OPTIONS.setdefault(_name, _param)
del _rule, _name, _param


def check_options(name, options):
    """The rule class called ``name``; ConfigError for an unknown name, ConfigError for an option
    (a key of ``options``) that the rule does not take."""
    if name not in TRAINERS:
        raise ConfigError(f"unknown trainer {name!r}: choose one of {', '.join(TRAINERS)}")
    cls = TRAINERS[name]
    for option in options:
        if option not in cls.params:
            raise ConfigError(f"trainer {name!r} does not take option {option!r} (it takes: {', '.join(cls.params)})")
    return cls


def make_rule(name, **options):
    """The learning rule called ``name`` with ``options`` (the class its ``variant`` names for them);
    an option it does not take is a ConfigError."""
    return check_options(name, options).variant(options)(**options)


def epoch_kernels(name, options=None):
    """The kernel entry points of one epoch of the rule ``name`` run with ``options`` (its L1 epoch's
    when they set l1 > 0)."""
    options = options or {}
    rule = check_options(name, options).variant(options)
    return rule.kernels + (rule.l1_kernels if float(options.get("l1") or 0) > 0 else ())


def every_variant():
    """(name, options, class) of every way a registered rule runs: the rule itself, and each
    solver of a rule that has several (the warm-up compiles them all)."""
    ways = []
    for name, rule in TRAINERS.items():
        for solver in rule.params["solver"].choices if "solver" in rule.params else (None,):
            options = {} if solver is None else {"solver": solver}
            ways.append((name, options, rule.variant(options)))
    return ways


__all__ = ["RULE_OPTIONS", "TRAINERS", "EpochRecord", "LearningRule", "LoopState", "Param", "Problem",
           "check_options", "epoch_kernels", "every_variant", "make_rule", "train_online"]
