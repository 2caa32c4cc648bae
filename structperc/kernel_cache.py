"""Is numba's on-disk cache warm for the kernels a task calls?

The kernels are compiled on their first call and cached beside their source (``cache=True``). A
first run after installing or editing them compiles for many seconds; ``cold`` tells beforehand, so
that the command line can say so instead of looking hung. Only entry points are listed: the
kernels they call are compiled (and cached) with them.
"""
import importlib
import pickle

TAGGING = ("keys.lookup_template", "keys.columns_to_csr", "decoders.decode_corpus")
TRAINING = ("keys.intern_template", "keys.number_features", "keys.columns_to_csr", "decoders.decode_corpus")
EPOCH_KERNELS = {"perceptron": "perceptron.perceptron_epoch", "crf": "crf.crf_epoch",
                 "memm": "memm.memm_epoch", "hinge": "hinge.hinge_epoch",
                 "winnow": "winnow.winnow_epoch"}
MARGINALS = {"global": "marginals.corpus_marginals", "local": "marginals.corpus_marginals"}


L1_EPOCH_KERNELS = {"crf": "elastic.crf_l1_epoch", "memm": "elastic.memm_l1_epoch", "hinge": "elastic.hinge_l1_epoch"}


def training_kernels(trainer, l1=False):
    """Entry points that training with the rule ``trainer`` calls (with ``l1``: its L1 epoch too)."""
    kernels = TRAINING + ((EPOCH_KERNELS[trainer],) if trainer in EPOCH_KERNELS else ())
    return kernels + ((L1_EPOCH_KERNELS[trainer],) if l1 and trainer in L1_EPOCH_KERNELS else ())


def tagging_kernels(normalization=None):
    """Entry points that tagging calls; with ``normalization`` ("global", "local"), also the
    kernel of the label marginals of such a model."""
    return TAGGING + ((MARGINALS[normalization],) if normalization in MARGINALS else ())


def _has_cached_code(name):
    module_name, function_name = name.split(".")
    module = importlib.import_module(f"structperc._kernels.{module_name}")
    dispatcher = getattr(module, function_name)
    try:
        # the index lists the compiled signatures; numba returns none when the source changed since
        return bool(dispatcher._cache._cache_file._load_index())
    except (AttributeError, OSError, EOFError, pickle.UnpicklingError):
        return False


def cold(names):
    """True when any of the kernels ``names`` ("module.function" under structperc._kernels) has no
    cached machine code for its current source, so that calling it compiles."""
    return not all(_has_cached_code(name) for name in names)
