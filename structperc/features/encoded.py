"""The encoded corpus: the flat integer arrays that every kernel reads (``EncodedCorpus``)."""
from dataclasses import dataclass

import numpy as np


@dataclass
class EncodedCorpus:
    """Integer view of a corpus.

    sentence_offsets : int64 (n_sentences + 1,)
    feature_offsets : int64 (n_tokens + 1,); feature_ids : int32 (nnz,)  emission features per token
    pair_offsets : int64 (n_tokens + 1,); pair_ids : int32 (nnz_pair,)   label-pair features per token
        (without pair templates, a read-only view of zeros that takes no memory)
    labels : int64 (n_tokens,) gold label ids (-1 for a label the model does not know) or None
    word_ids : int32 or int64 (n_tokens,) word value ids, or None
    """

    sentence_offsets: np.ndarray
    feature_offsets: np.ndarray
    feature_ids: np.ndarray
    pair_offsets: np.ndarray
    pair_ids: np.ndarray
    labels: np.ndarray | None
    word_ids: np.ndarray | None = None

    @property
    def n_sentences(self):
        return len(self.sentence_offsets) - 1

    @property
    def n_tokens(self):
        return int(self.sentence_offsets[-1])

    def release(self):
        """Drop the per-token arrays (the sentence offsets stay): a training run does so once its
        epochs are over, so that pruning and saving the model do not hold them too."""
        self.feature_offsets = self.feature_ids = self.pair_offsets = self.pair_ids = None
        self.labels = self.word_ids = None


def no_rows(sentence_offsets):
    """CSR offsets of a corpus where no feature fires: zeros (n_tokens + 1,) as a read-only view of one
    zero, so that a model without pair templates spends no memory on pair offsets."""
    return np.broadcast_to(np.zeros(1, dtype=np.int64), (int(sentence_offsets[-1]) + 1,))
