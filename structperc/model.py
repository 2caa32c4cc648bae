"""The linear-chain model: labels, the flat weight vector, Φ(x, y), decoding, and the model file."""
import numpy as np

from ._kernels import scoring
from .encode import FeatureEncoder
from .errors import ConfigError, ModelFileError
from .npzfile import read_npz, write_npz

FORMAT_VERSION = 1
_NO_CANDIDATES = np.zeros(0, dtype=np.int64)


def make_dims(n_labels, n_features, n_pair_features, order, local=False):
    """The ``dims`` array of ``structperc._kernels.scoring``: sizes and block offsets of w.

    local : True for a locally normalized model (MEMM): decoding uses log P(y_t | y_{t-1}, x), or
        log P(y_t | y_{t-2}, y_{t-1}, x) at order 2.
    """
    if order not in (1, 2):
        raise ConfigError(f"order must be 1 or 2, got {order!r}")
    transition_size = (n_labels + 1) * n_labels
    off_trans = n_features * n_labels
    off_end = off_trans + transition_size
    off_pair = off_end + n_labels
    off_trans2 = off_pair + n_pair_features * transition_size
    size = off_trans2 + ((n_labels + 1) * transition_size if order == 2 else 0)
    return np.array(
        [n_labels, n_features, n_pair_features, order, off_trans, off_end, off_pair, off_trans2, size, int(local)],
        dtype=np.int64,
    )


def _no_constraint(labels):
    return np.zeros((len(labels) + 1, len(labels)))


def _bio_constraint(labels):
    """I-X may only follow B-X or I-X (and never start a sentence)."""
    n = len(labels)
    penalty = np.zeros((n + 1, n))
    for c, label in enumerate(labels):
        if label.startswith("I-"):
            kind = label[2:]
            for p in range(n + 1):
                if p == n or labels[p] not in (f"B-{kind}", f"I-{kind}"):
                    penalty[p, c] = -np.inf
    return penalty


CONSTRAINTS = {"none": _no_constraint, "bio": _bio_constraint}


def transition_penalty(labels, constrain):
    """(L + 1, L) additive transition mask: 0 allowed, -inf forbidden."""
    name = constrain or "none"
    if name not in CONSTRAINTS:
        raise ConfigError(f"unknown constraint {name!r}: choose one of {', '.join(CONSTRAINTS)}")
    return CONSTRAINTS[name](labels)


class LinearChainModel:
    """Weights of a linear-chain model over the features of a fitted ``FeatureEncoder``.

    Parameters
    ----------
    encoder : fitted FeatureEncoder
    order : 1 (bigram labels) or 2 (trigram labels)
    constrain : None, "none" or "bio"
    tag_dict : None, or (word_offsets, word_labels): allowed labels per word id (CSR over the word
        ids of the encoder; a word with no entry may take every label)
    normalization : "global" (perceptron, CRF, hinge: one score per labeling) or "local" (MEMM:
        a product of per-token distributions)
    """

    def __init__(self, encoder, order=1, constrain=None, tag_dict=None, normalization="global"):
        self.encoder = encoder
        self.labels = list(encoder.labels_)
        self.order = order
        self.constrain = constrain
        self.tag_dict = tag_dict
        if normalization not in ("global", "local"):
            raise ConfigError(f"normalization must be 'global' or 'local', got {normalization!r}")
        self.normalization = normalization
        self.dims = make_dims(len(self.labels), encoder.n_features_, encoder.n_pair_features_, order,
                              local=normalization == "local")
        self.mask_penalty = transition_penalty(self.labels, constrain)
        self.weights = np.zeros(int(self.dims[scoring.SIZE]))
        self.metadata = {}

    @property
    def n_labels(self):
        return len(self.labels)

    # ------------------------------------------------------------------ views of w
    def emission_weights(self, weights=None):
        """(n_features, L) view of the emission block."""
        w = self.weights if weights is None else weights
        return w[: self.dims[scoring.OFF_TRANS]].reshape(-1, self.n_labels)

    def transition_weights(self, weights=None):
        """(L + 1, L) view; row L is the start state."""
        w = self.weights if weights is None else weights
        start = self.dims[scoring.OFF_TRANS]
        return w[start: start + (self.n_labels + 1) * self.n_labels].reshape(self.n_labels + 1, self.n_labels)

    def prune(self):
        """Drop the emission and pair features whose weights are all zero.

        Decoding sums the weights of the features that fire, so leaving out zero rows changes no
        score and no prediction; it shrinks the model file and the rows a tagger has to read.
        """
        n_labels, dims, w = self.n_labels, self.dims, self.weights
        size = (n_labels + 1) * n_labels
        emission = self.emission_weights()
        pair = w[dims[scoring.OFF_PAIR]: dims[scoring.OFF_TRANS2]].reshape(-1, size)
        keep = np.any(emission != 0, axis=1)
        keep_pair = np.any(pair != 0, axis=1)
        self.weights = np.concatenate([
            emission[keep].ravel(), w[dims[scoring.OFF_TRANS]: dims[scoring.OFF_PAIR]],
            pair[keep_pair].ravel(), w[dims[scoring.OFF_TRANS2]:],
        ])
        self.encoder.drop_features(keep, keep_pair)
        self.dims = make_dims(n_labels, int(keep.sum()), int(keep_pair.sum()), self.order,
                              local=self.normalization == "local")
        return self

    # ------------------------------------------------------------------ decoding
    def candidates(self, encoded):
        """(cand_offsets, cand_labels) per token from the tag dictionary, or empty arrays."""
        if self.tag_dict is None or encoded.word_ids is None:
            return _NO_CANDIDATES, _NO_CANDIDATES
        from ._kernels.csr import gather_rows

        return gather_rows(self.tag_dict[0], self.tag_dict[1], encoded.word_ids)

    def decode(self, encoded, weights=None):
        """Best label ids of every token (int64 (n_tokens,)) and each sentence's score."""
        w = self.weights if weights is None else weights
        cand_offsets, cand_labels = self.candidates(encoded)
        return scoring.decode_corpus(
            w, self.dims, encoded.sentence_offsets, encoded.feature_offsets, encoded.feature_ids,
            encoded.pair_offsets, encoded.pair_ids, self.mask_penalty, cand_offsets, cand_labels,
        )

    def prepare(self):
        """Load the compiled decoder (numba's first call reads its cache) and start its threads by
        decoding one empty one-token sentence."""
        empty = np.zeros(0, dtype=np.int64)
        one = np.array([0, 1], dtype=np.int64)
        scoring.decode_corpus(self.weights, self.dims, one, np.zeros(2, dtype=np.int64), empty,
                              np.zeros(2, dtype=np.int64), empty, self.mask_penalty, empty, empty)

    def phi(self, encoded, sentence, y):
        """Φ(x, y) of one sentence as indices into w (repeats count twice)."""
        a, b = encoded.sentence_offsets[sentence], encoded.sentence_offsets[sentence + 1]
        y = np.ascontiguousarray(y, dtype=np.int64)
        if len(y) != b - a:
            raise ValueError(f"labeling has {len(y)} labels, sentence has {b - a} tokens")
        return scoring.phi_indices(
            self.dims, encoded.feature_offsets, encoded.feature_ids, encoded.pair_offsets,
            encoded.pair_ids, a, b, y,
        )

    def feature_vector(self, encoded, sentence, y):
        """Φ(x, y) as a dense vector the size of w."""
        return np.bincount(self.phi(encoded, sentence, y), minlength=len(self.weights)).astype(float)

    def score(self, encoded, sentence, y, weights=None):
        """w · Φ(x, y)."""
        w = self.weights if weights is None else weights
        return float(w[self.phi(encoded, sentence, y)].sum())

    # ------------------------------------------------------------------ file
    def save(self, path):
        """Write ``.npz`` arrays plus JSON metadata atomically (temp file, then rename)."""
        arrays, encoder_meta = self.encoder.state()
        arrays = {f"encoder__{k}": v for k, v in arrays.items()}
        arrays["weights"] = self.weights
        arrays["dims"] = self.dims
        if self.tag_dict is not None:
            arrays["tag_dict_offsets"], arrays["tag_dict_labels"] = self.tag_dict
        meta = {
            "format_version": FORMAT_VERSION,
            "labels": self.labels,
            "order": self.order,
            "constrain": self.constrain,
            "normalization": self.normalization,
            "encoder": encoder_meta,
            **self.metadata,
        }
        return write_npz(path, arrays, meta)

    @classmethod
    def load(cls, path):
        arrays, meta = read_npz(path, "model")
        version = meta.get("format_version")
        if version != FORMAT_VERSION:
            raise ModelFileError(
                f"{path}: model format version {version!r}, this structperc reads version {FORMAT_VERSION}"
            )
        try:
            encoder_arrays = {k[len("encoder__"):]: v for k, v in arrays.items() if k.startswith("encoder__")}
            encoder = FeatureEncoder.from_state(encoder_arrays, meta["encoder"])
            tag_dict = None
            if "tag_dict_offsets" in arrays:
                tag_dict = (arrays["tag_dict_offsets"].astype(np.int64), arrays["tag_dict_labels"].astype(np.int64))
            model = cls(encoder, order=meta["order"], constrain=meta["constrain"], tag_dict=tag_dict,
                        normalization=meta.get("normalization", "global"))
            weights = arrays["weights"].astype(np.float64)
        except KeyError as exc:
            raise ModelFileError(f"{path}: model file lacks {exc}") from None
        if not np.array_equal(arrays["dims"], model.dims) or weights.shape != model.weights.shape:
            raise ModelFileError(f"{path}: weights do not match the feature index (corrupt file)")
        model.weights = weights
        model.metadata = {
            k: v for k, v in meta.items() if k not in ("format_version", "labels", "order", "constrain", "normalization", "encoder")
        }
        return model
