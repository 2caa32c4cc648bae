"""structperc: structured prediction on sequences over one numba Viterbi decoder."""
from .corpus import Corpus
from .readers import iter_corpus, read_corpus, write_tagged
from .encode import FeatureEncoder
from .errors import StructpercError
from .model import LinearChainModel
from .tagger import Tagger

__version__ = "0.1.0"
__all__ = [
    "Corpus", "FeatureEncoder", "LinearChainModel", "StructpercError", "Tagger",
    "iter_corpus", "read_corpus", "write_tagged", "__version__",
]
