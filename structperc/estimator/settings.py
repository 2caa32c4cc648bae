"""``Settings``: the estimator's constructor parameters, checked once, before any data is read.

A fit validates its tagger's parameters here and hands the result down (``fitting.Fitting``); from then
on nothing reads the estimator. The learning rule's options are checked by their own declarations
(``train.base.Param``, in ``make_rule``); the estimator's own (epochs, the engine, ``dense_count``) here.
"""
import numbers

from structperc.errors import ConfigError


class Settings:
    """The parameters of one fit, checked: every constructor parameter as an attribute (``order``,
    ``seed``, ...), and what follows from them:

    rule_options : the learning rule's options that are set (name -> value); the rest take the rule's defaults
    n_epochs : the passes over the training data (``epochs``, or the rule's default for None)
    mixing : whether training runs by parameter mixing (a client, a scheduler, or workers > 1)
    """

    def __init__(self, params, client=None, checkpoint=False, engine=True, defaults=None):
        """params : the estimator's ``get_params()``, and defaults : its ``param_defaults()`` (what a
        parameter left unset holds); client : a dask Client to train on, or None;
        checkpoint : whether the run writes or resumes a checkpoint; engine : check the engine options
        too (``check_engine``). ConfigError for anything invalid."""
        from structperc.train import RULE_OPTIONS, check_options

        self.params = dict(params)
        self.defaults = dict(defaults or {})
        for name, value in self.params.items():
            setattr(self, name, value)
        check_options(self.trainer, {})
        if self.dense_count is not None and (self.all_pairs or int(self.dense_count) != self.dense_count
                                             or self.dense_count < 1):
            raise ConfigError(f"dense_count applies to gold pairs (all_pairs=False) "
                              f"and is a positive integer, got {self.dense_count!r} with all_pairs={self.all_pairs}")
        self.rule_options = {name: params[name] for name in RULE_OPTIONS if params.get(name) is not None}
        self.make_rule()  # the rule's constructor checks its options by their declarations
        self.n_epochs = epochs_of(self.trainer, self.epochs, self.rule_options)
        self.client = client
        self.mixing = client is not None or self.scheduler is not None or self.workers != 1
        if engine:
            check_engine(self, checkpoint)

    def make_rule(self):
        """A new learning rule of these settings (``train.make_rule``)."""
        from structperc.train import make_rule

        return make_rule(self.trainer, **self.rule_options)

    @property
    def encoding_threads(self):
        """Threads that encode the training corpus: with --workers N, this machine's N cores are the run's."""
        return int(self.workers) if self.client is None and self.scheduler is None else 1


def epochs_of(trainer, epochs, rule_options):
    """The passes over the training data: ``epochs``, or for None the learning rule's default (the
    most, for a rule with a stopping rule: ``LearningRule.stopping``); ConfigError for anything but an
    integer >= 0 (0: the weights the model starts with)."""
    from structperc.train import TRAINERS
    from structperc.train.base import LearningRule

    if epochs is None:
        return TRAINERS.get(trainer, LearningRule).variant(rule_options).epochs
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Real) or epochs < 0 or not float(epochs).is_integer():
        raise ConfigError(f"epochs must be an integer >= 0, got {epochs!r}")
    return int(epochs)


def check_engine(settings, checkpoint=False):
    """ConfigError for engine options that are invalid or do not apply (mix without mixing), and,
    before any training, for what the learning rule cannot do (``LearningRule.check_run``): its
    order, parameter mixing, a ``checkpoint`` (writing or resuming one), l1."""
    from structperc.train import TRAINERS
    from structperc.train.mixing import MIXES, check_mix

    workers = settings.workers
    if isinstance(workers, bool) or not isinstance(workers, numbers.Real) or int(workers) != workers or workers < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    if settings.scheduler is not None and workers != 1:
        raise ConfigError("workers=N and scheduler=ADDRESS exclude each other (the scheduler's workers are used)")
    if settings.mix not in MIXES:
        raise ConfigError(f"unknown mix {settings.mix!r}: choose one of {', '.join(MIXES)}")
    if settings.mix != "uniform" and not settings.mixing:
        raise ConfigError(f"mix={settings.mix!r} applies only to parameter mixing (workers=N > 1 or scheduler=ADDRESS)")
    if settings.resumable and settings.mixing:
        raise ConfigError("resumable keeps the state of one serial run; parameter mixing has one per shard")
    check_mix(settings.mix, TRAINERS[settings.trainer])
    settings.make_rule().check_run(order=int(settings.order), mixing=settings.mixing, checkpoint=checkpoint)
