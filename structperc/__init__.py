"""structperc: structured prediction on sequences, with every per-token loop (decoding, training, encoding) in numba."""
import importlib

__version__ = "0.1.0"

# The public names are imported on first use, so that a command loads only the modules it needs.
_HOMES = {
    "Corpus": "corpus", "iter_corpus": "readers", "read_corpus": "readers", "write_tagged": "readers",
    "FeatureEncoder": "features.encode", "StructpercError": "errors", "LinearChainModel": "model.linear_chain",
    "Tagger": "estimator.tagger", "load_model": "ensembles.files", "CRF": "estimator.crf",
    "RerankedTagger": "rerank.tagger",
}
__all__ = [
    "CRF", "Corpus", "FeatureEncoder", "LinearChainModel", "RerankedTagger", "StructpercError", "Tagger",
    "load_model",
    "iter_corpus", "metrics", "read_corpus", "write_tagged", "__version__",
]
_MODULES = ("metrics",)  # public modules, imported on first use as well


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _HOMES:
        raise AttributeError(f"module 'structperc' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
