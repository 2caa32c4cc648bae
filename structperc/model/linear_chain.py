"""The linear-chain model: labels, the flat weight vector, Φ(x, y), decoding, and the model file."""
import numpy as np

from structperc._kernels.decode.decoders import DECODERS, decode_corpus
from structperc._kernels.score.emission import compact_labels, full_labels
from structperc._kernels.records import ALL_PAIRS, data_record, layout_record
from structperc._kernels.score.scoring import phi_dot, phi_indices, phi_values
from structperc.features.dicts import AttributeEncoder
from structperc.features.encode import FIRST_ID, FeatureEncoder
from structperc.features.encoded import EncodedCorpus
from structperc.chunks import SCHEMES, allowed_transitions
from structperc.errors import ConfigError, ModelFileError
from structperc.utils.npz import read_npz, write_npz

# version 2: the emission block holds only the feature-label pairs listed in emission_offsets and
# emission_labels; a model with every pair is still written as version 1
FORMAT_VERSION = 2
_READS = (1, 2)
_NO_CANDIDATES = np.zeros(0, dtype=np.int64)


def decoder_name(order, normalization):
    """The decoder of ``structperc._kernels.decode.decoders.DECODERS`` for a model of this order and normalization."""
    return ("memm" if normalization == "local" else "viterbi") + ("2" if order == 2 else "")


def layout_dims(layout):
    """The ``dims`` array of the model file: sizes and block offsets of w, and 1 for a locally
    normalized model."""
    local = layout.decoder in (DECODERS["memm"], DECODERS["memm2"])
    return np.array([layout.n_labels, layout.n_features, layout.n_pair, layout.order, layout.off_trans,
                     layout.off_end, layout.off_pair, layout.off_trans2, layout.size, int(local)], dtype=np.int64)


CONSTRAINTS = ("none", *SCHEMES)


def transition_penalty(labels, constrain):
    """(L + 1, L) additive transition mask: 0 allowed, -inf forbidden."""
    name = constrain or "none"
    if name not in CONSTRAINTS:
        raise ConfigError(f"unknown constraint {name!r}: choose one of {', '.join(CONSTRAINTS)}")
    return np.where(allowed_transitions(labels, name), 0.0, -np.inf)


def _grow_tag_dict(tag_dict, n_words, n_labels):
    """The tag dictionary CSR (offsets, labels) over n_words word ids: the word ids past its rows
    (words new to the encoder) may take every label (an empty row)."""
    offsets, allowed = tag_dict
    extra = n_words - (len(offsets) - 1)
    if extra <= 0:
        return tag_dict
    return np.concatenate([offsets, np.full(extra, offsets[-1], dtype=np.int64)]), allowed


def force_candidates(candidates, forced, n_labels):
    """Candidate CSR (cand_offsets, cand_labels) with token i restricted to the label forced[i]
    where forced[i] >= 0; the other tokens keep their candidates (every label when ``candidates``
    is empty, or at a token whose row is empty). Labels stay ascending within a token."""
    cand_offsets, cand_labels = candidates
    n = len(forced)
    if len(cand_offsets) == 0:
        allowed = np.ones((n, n_labels), dtype=bool)
    else:
        allowed = np.zeros((n, n_labels), dtype=bool)
        allowed[np.repeat(np.arange(n), np.diff(cand_offsets)), cand_labels] = True
        allowed[np.diff(cand_offsets) == 0] = True
    rows = np.flatnonzero(forced >= 0)
    allowed[rows] = False
    allowed[rows, forced[rows]] = True
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(allowed.sum(axis=1), out=offsets[1:])
    return offsets, np.nonzero(allowed)[1].astype(np.int64)


class LinearChainModel:
    """Weights of a linear-chain model over the features of a fitted ``FeatureEncoder``.

    Parameters
    ----------
    encoder : fitted FeatureEncoder
    order : 1 (bigram labels) or 2 (trigram labels)
    constrain : None, "none", or a chunk scheme to keep (``chunks.SCHEMES``: "bio", "iob1", "bioes")
    tag_dict : None, or (word_offsets, word_labels): allowed labels per word id (CSR over the word
        ids of the encoder; a word with no entry may take every label)
    normalization : "global" (perceptron, CRF, hinge: one score per labeling) or "local" (MEMM:
        a product of per-token distributions)
    emission_pairs : None (a weight for every feature and label), or (emission_offsets int64 (F + 1,),
        emission_labels int32 (E,)): the labels each feature has a weight for (see ``records.py``).
        The model keeps the label lists of the rows that lack some label only (``_pairs``); the
        attribute ``emission_pairs`` reads and sets one label per pair.
    """

    def __init__(self, encoder, order=1, constrain=None, tag_dict=None, normalization="global",
                 emission_pairs=None):
        self.encoder = encoder
        self.labels = list(encoder.labels_)
        self.order = order
        self.constrain = constrain
        self.tag_dict = tag_dict
        if normalization not in ("global", "local"):
            raise ConfigError(f"normalization must be 'global' or 'local', got {normalization!r}")
        self.normalization = normalization
        if order not in (1, 2):
            raise ConfigError(f"order must be 1 or 2, got {order!r}")
        self.decoder = decoder_name(order, normalization)
        self.n_features = encoder.n_features_
        self.n_pair_features = encoder.n_pair_features_
        self.mask_penalty = transition_penalty(self.labels, constrain)
        self.emission_pairs = emission_pairs
        self.weights = np.zeros(self.layout().size)
        self.metadata = {}
        # the learning rule's state beyond the weights (averaging sums, step counts), which a resumable
        # model file keeps for exact continued training (``save(resumable=True)``); None when not kept
        self.training_state = None

    @property
    def n_labels(self):
        return len(self.labels)

    @property
    def emission_pairs(self):
        """None, or (emission_offsets, the label of every pair int32 (E,)), built from ``_pairs``."""
        if self._pairs is None:
            return None
        offsets, listed = self._pairs
        return offsets, full_labels(offsets, listed, self.n_labels)

    @emission_pairs.setter
    def emission_pairs(self, pairs):
        """Set from (offsets, one label per pair); kept without the lists of rows with every label."""
        if pairs is None:
            self._pairs = None
            return
        offsets, labels = pairs
        offsets = np.asarray(offsets, dtype=np.int64)
        self._pairs = (offsets, compact_labels(offsets, np.asarray(labels, dtype=np.int32), self.n_labels))

    def label_names(self, ids):
        """The label strings of label ids (object ndarray of the shape of ``ids``)."""
        return np.asarray(self.labels, dtype=object)[ids]

    # ------------------------------------------------------------------ kernel records
    def layout(self):
        """The ``Layout`` record of the kernels: where each block of w starts, the decoder, the mask."""
        return layout_record(self.n_labels, self.n_features, self.n_pair_features, self.order,
                             DECODERS[self.decoder], self.mask_penalty, self._pairs or ALL_PAIRS)

    def data(self, encoded, forced=None):
        """The ``Data`` record of the kernels for an EncodedCorpus, with this model's tag dictionary.

        forced : None, or int64 (n_tokens,) label ids fixed at decoding, -1 where the label is free.
            A forced token's candidate set is its forced label alone (it replaces the tag
            dictionary's set), so every decoder, k-best and the marginals keep it. Without a tag
            dictionary, the kernels keep it by the -inf emission scores of the other labels and run
            over every label pair, as they do unforced: the kernels a model's forced and free
            passes call are the same ones (a request's span scores compile one set, not two).
        """
        candidates = self.candidates(encoded)
        if forced is None:
            return data_record(encoded, candidates)
        forced_candidates = force_candidates(candidates, np.asarray(forced, dtype=np.int64), self.n_labels)
        return data_record(encoded, forced_candidates, over_candidates=len(candidates[0]) > 0)

    # ------------------------------------------------------------------ views of w
    def emission_weights(self, weights=None):
        """(n_features, L) view of the emission block (a dense copy, zero off the pairs, when the
        model keeps only some feature-label pairs)."""
        w = self.weights if weights is None else weights
        block = w[: self.layout().off_trans]
        if self._pairs is None:
            return block.reshape(-1, self.n_labels)
        offsets, labels = self.emission_pairs
        dense = np.zeros((self.n_features, self.n_labels))
        dense[np.repeat(np.arange(self.n_features), np.diff(offsets)), labels] = block
        return dense

    def transition_weights(self, weights=None):
        """(L + 1, L) view; row L is the start state."""
        w = self.weights if weights is None else weights
        start = self.layout().off_trans
        return w[start: start + (self.n_labels + 1) * self.n_labels].reshape(self.n_labels + 1, self.n_labels)

    def prune(self):
        """Drop the emission and pair features whose weights are all zero.

        Decoding sums the weights of the features that fire, so leaving out zero rows changes no
        score and no prediction; it shrinks the model file and the rows a tagger has to read.
        """
        n_labels, layout = self.n_labels, self.layout()
        size = (n_labels + 1) * n_labels
        vectors = [self.weights] + list(self._state_vectors())
        keep_pair = np.zeros(self.n_pair_features, dtype=bool)
        for w in vectors:
            keep_pair |= np.any(w[layout.off_pair: layout.off_trans2].reshape(-1, size) != 0, axis=1)
        if self._pairs is None:
            keep = np.zeros(self.n_features, dtype=bool)
            for w in vectors:
                keep |= np.any(w[: layout.off_trans].reshape(-1, n_labels) != 0, axis=1)

            def select_emission(w, out):
                np.compress(keep, w[: layout.off_trans].reshape(-1, n_labels), axis=0, out=out.reshape(-1, n_labels))
        else:
            # only the pairs whose weight is not zero stay; a feature with none left is dropped
            offsets, labels = self.emission_pairs
            nonzero = np.zeros(layout.off_trans, dtype=bool)
            for w in vectors:
                nonzero |= w[: layout.off_trans] != 0
            # the nonzero pairs of each feature, from a running count (4 bytes a pair)
            running = np.zeros(layout.off_trans + 1, dtype=np.int32)
            np.cumsum(nonzero, dtype=np.int32, out=running[1:])
            per_feature = running[offsets[1:]] - running[offsets[:-1]]
            del running
            keep = per_feature > 0
            new_offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
            np.cumsum(per_feature[keep], out=new_offsets[1:])
            self.emission_pairs = (new_offsets, labels[nonzero])

            def select_emission(w, out):
                np.compress(nonzero, w[: layout.off_trans], out=out)

        n_emission = int(nonzero.sum()) if self._pairs is not None else int(keep.sum()) * n_labels
        n_trans, n_pair = layout.off_pair - layout.off_trans, int(keep_pair.sum()) * size

        def select(w):
            """The kept entries of ``w``, written straight into the smaller vector."""
            out = np.empty(n_emission + n_trans + n_pair + len(w) - layout.off_trans2, dtype=w.dtype)
            select_emission(w, out[:n_emission])
            at = n_emission + n_trans
            out[n_emission: at] = w[layout.off_trans: layout.off_pair]
            pair = w[layout.off_pair: layout.off_trans2].reshape(-1, size)
            np.compress(keep_pair, pair, axis=0, out=out[at: at + n_pair].reshape(-1, size))
            out[at + n_pair:] = w[layout.off_trans2:]
            return out

        self.weights = select(self.weights)
        self._map_state_vectors(select)
        self.encoder.drop_features(keep, keep_pair)
        self.n_features, self.n_pair_features = int(keep.sum()), int(keep_pair.sum())
        return self

    def _state_vectors(self):
        """The weight-shaped arrays of the training state (the perceptron's w and u)."""
        state = self.training_state or {}
        return [state[k] for k in ("w", "u") if k in state and len(state[k]) == len(self.weights)]

    def _map_state_vectors(self, fn):
        state = self.training_state or {}
        for k in ("w", "u"):
            if k in state and len(state[k]) > 0:
                state[k] = fn(state[k])

    def grow(self, n_features, labels, n_pair_features=None, pairs=None):
        """Add emission features (ids n_features_old .. n_features - 1), pair features (ids
        n_pair_features_old .. n_pair_features - 1; None: as many as now) and labels (appended after
        the known ones) with zero weights; the weights and the training state keep their values.

        pairs : for a model of gold feature-label pairs, None or (emission_offsets, emission_labels)
            over the grown features and labels (``emission.gold_pairs`` of the new training data):
            the pairs the model lacks are added, for new and existing features alike, as training
            on all the data at once would hold them. Ignored by a model of every pair.
        The tag dictionary, if any, lets a word new to the encoder take every label.
        """
        old = self.layout()
        old_labels = self.labels
        if list(labels[: len(old_labels)]) != list(old_labels):
            raise ConfigError("labels can only be appended to a model's labels")
        L0, L1 = len(old_labels), len(labels)
        P0 = self.n_pair_features
        old_pairs = self.emission_pairs  # one label per pair, read while the model has L0 labels
        self.labels = list(labels)
        place = None
        if old_pairs is not None:
            # a pair (f, c) as the code f * L1 + c: sorted codes are the layout's order
            offsets, pair_labels = old_pairs
            codes = np.repeat(np.arange(self.n_features, dtype=np.int64), np.diff(offsets)) * L1 + pair_labels
            merged = codes
            if pairs is not None:
                extra_offsets, extra_labels = pairs
                extra = np.repeat(np.arange(len(extra_offsets) - 1, dtype=np.int64), np.diff(extra_offsets))
                merged = np.union1d(codes, extra * L1 + extra_labels)
            place = np.searchsorted(merged, codes)
            grown_offsets = np.zeros(int(n_features) + 1, dtype=np.int64)
            np.cumsum(np.bincount(merged // L1, minlength=int(n_features)), out=grown_offsets[1:])
            self.emission_pairs = (grown_offsets, (merged % L1).astype(np.int32))
        self.n_features = int(n_features)
        self.n_pair_features = P0 if n_pair_features is None else int(n_pair_features)
        self.mask_penalty = transition_penalty(self.labels, self.constrain)
        if self.tag_dict is not None:
            self.tag_dict = _grow_tag_dict(self.tag_dict, len(self.encoder.vocabularies_["word"]) + FIRST_ID, L1)
        new = self.layout()
        # a state p of the old model (a label, or the start L0) is p, or the start L1, of the new one
        states = np.concatenate([np.arange(L0), [L1]])

        def expand(w):
            out = np.zeros(new.size)
            if place is None:
                emission = w[: old.off_trans].reshape(-1, L0)
                out[: new.off_trans].reshape(-1, L1)[: emission.shape[0], :L0] = emission
            else:
                # label ids do not change when labels are appended: a kept pair moves to its place
                out[: new.off_trans][place] = w[: old.off_trans]
            trans = w[old.off_trans: old.off_end].reshape(L0 + 1, L0)
            out[new.off_trans: new.off_end].reshape(L1 + 1, L1)[np.ix_(states, np.arange(L0))] = trans
            out[new.off_end: new.off_end + L0] = w[old.off_end: old.off_end + L0]
            pair = w[old.off_pair: old.off_trans2].reshape(-1, L0 + 1, L0)
            target = out[new.off_pair: new.off_trans2].reshape(-1, L1 + 1, L1)[:P0]
            target[:, states[:, None], np.arange(L0)] = pair
            if self.order == 2:
                trans2 = w[old.off_trans2: old.size].reshape(L0 + 1, L0 + 1, L0)
                target = out[new.off_trans2: new.size].reshape(L1 + 1, L1 + 1, L1)
                target[np.ix_(states, states, np.arange(L0))] = trans2
            return out

        self.weights = expand(self.weights)
        self._map_state_vectors(expand)
        return self

    # ------------------------------------------------------------------ decoding
    def candidates(self, encoded):
        """(cand_offsets, cand_labels) per token from the tag dictionary, or empty arrays."""
        if self.tag_dict is None or encoded.word_ids is None:
            return _NO_CANDIDATES, _NO_CANDIDATES
        from structperc._kernels.encode.csr import gather_rows

        return gather_rows(self.tag_dict[0], self.tag_dict[1], np.asarray(encoded.word_ids, dtype=np.int64))

    def decode(self, encoded, weights=None, forced=None):
        """Best label ids of every token (int64 (n_tokens,)) and each sentence's score; ``forced``
        as in ``data``."""
        w = self.weights if weights is None else weights
        return decode_corpus(w, self.layout(), self.data(encoded, forced))

    def prepare(self):
        """Load the compiled decoder (numba's first call reads its cache) by decoding one empty
        one-token sentence: the one kernel of every batch (large ones run it on threads)."""
        no_ids = np.zeros(0, dtype=np.int32)
        one = np.array([0, 1], dtype=np.int64)
        no_features = np.zeros(2, dtype=np.int64)
        data = data_record(EncodedCorpus(one, no_features, no_ids, no_features, no_ids, None))
        # the flag of the data this model tags (numba compiles the kernel for its type): a tag dictionary
        data = data._replace(dictionary=True if self.tag_dict is not None else None)
        decode_corpus(self.weights, self.layout(), data)

    def phi(self, encoded, sentence, y):
        """Φ(x, y) of one sentence as indices into w (repeats count twice); the amount at each index
        is given by ``phi_values`` (1 for a binary corpus)."""
        a, b = encoded.sentence_offsets[sentence], encoded.sentence_offsets[sentence + 1]
        y = np.ascontiguousarray(y, dtype=np.int64)
        if len(y) != b - a:
            raise ValueError(f"labeling has {len(y)} labels, sentence has {b - a} tokens")
        return phi_indices(self.layout(), data_record(encoded), a, b, y)

    def phi_values(self, encoded, sentence, y):
        """The value of each entry of ``phi`` of this sentence and labeling (float64; all 1 for a
        binary corpus)."""
        a, b = encoded.sentence_offsets[sentence], encoded.sentence_offsets[sentence + 1]
        y = np.ascontiguousarray(y, dtype=np.int64)
        data = data_record(encoded)
        values = phi_values(self.layout(), data, a, b, y)
        return values if len(values) else np.ones(len(self.phi(encoded, sentence, y)))

    def feature_vector(self, encoded, sentence, y):
        """Φ(x, y) as a dense vector the size of w."""
        return np.bincount(self.phi(encoded, sentence, y), weights=self.phi_values(encoded, sentence, y),
                           minlength=len(self.weights)).astype(float)

    def score(self, encoded, sentence, y, weights=None):
        """w · Φ(x, y)."""
        w = self.weights if weights is None else weights
        a, b = encoded.sentence_offsets[sentence], encoded.sentence_offsets[sentence + 1]
        y = np.ascontiguousarray(y, dtype=np.int64)
        values = phi_values(self.layout(), data_record(encoded), a, b, y)
        return float(phi_dot(w, self.phi(encoded, sentence, y), values))

    # ------------------------------------------------------------------ file
    def save(self, path, extra_arrays=None, resumable=False):
        """Write ``.npz`` arrays plus JSON metadata atomically (temp file, then rename).

        extra_arrays : more named arrays to store (``load`` ignores them).
        resumable : also write the training state (the perceptron's raw weights, averaging sums and
            example counter) so that continued training averages exactly as one longer run would; it
            triples the size of a perceptron model file."""
        arrays, meta = self.state(resumable)
        arrays.update(extra_arrays or {})
        return write_npz(path, arrays, meta)

    def state(self, resumable=False):
        """(arrays, metadata) of the model file (with the training state when ``resumable``)."""
        arrays, encoder_meta = self.encoder.state()
        arrays = {f"encoder__{k}": v for k, v in arrays.items()}
        arrays["weights"] = self.weights
        arrays["dims"] = layout_dims(self.layout())
        if resumable and self.training_state:
            for k, v in self.training_state.items():
                arrays[f"training__{k}"] = np.asarray(v, dtype=np.float64)
        if self.tag_dict is not None:
            arrays["tag_dict_offsets"], arrays["tag_dict_labels"] = self.tag_dict
        if self._pairs is not None:  # one label per pair, as files have always held them
            arrays["emission_offsets"], arrays["emission_labels"] = self.emission_pairs
        meta = {
            "format_version": 1 if self._pairs is None else FORMAT_VERSION,
            "labels": self.labels,
            "order": self.order,
            "constrain": self.constrain,
            "normalization": self.normalization,
            "encoder": encoder_meta,
            **self.metadata,
        }
        return arrays, meta

    @classmethod
    def load(cls, path):
        return cls.from_state(*read_npz(path, "model"), path)

    @classmethod
    def from_state(cls, arrays, meta, path):
        """The model of ``state()``'s arrays and metadata; `path` names the file in errors."""
        version = meta.get("format_version")
        if version not in _READS:
            raise ModelFileError(
                f"{path}: model format version {version!r}, this structperc reads version {FORMAT_VERSION}"
            )
        try:
            encoder_arrays = {k[len("encoder__"):]: v for k, v in arrays.items() if k.startswith("encoder__")}
            encoder_class = AttributeEncoder if meta["encoder"].get("kind") == "attributes" else FeatureEncoder
            encoder = encoder_class.from_state(encoder_arrays, meta["encoder"])
            tag_dict = None
            if "tag_dict_offsets" in arrays:
                tag_dict = (arrays["tag_dict_offsets"].astype(np.int64), arrays["tag_dict_labels"].astype(np.int64))
            emission_pairs = None
            if version >= 2:
                emission_pairs = (arrays["emission_offsets"].astype(np.int64),
                                  arrays["emission_labels"].astype(np.int32))
            model = cls(encoder, order=meta["order"], constrain=meta["constrain"], tag_dict=tag_dict,
                        normalization=meta.get("normalization", "global"), emission_pairs=emission_pairs)
            weights = arrays["weights"].astype(np.float64)
        except KeyError as exc:
            raise ModelFileError(f"{path}: model file lacks {exc}") from None
        if not np.array_equal(arrays["dims"], layout_dims(model.layout())) or weights.shape != model.weights.shape:
            raise ModelFileError(f"{path}: weights do not match the feature index (corrupt file)")
        model.weights = weights
        state = {k[len("training__"):]: v for k, v in arrays.items() if k.startswith("training__")}
        if state:
            state["counter"] = float(state["counter"])
            model.training_state = state
        model.metadata = {
            k: v for k, v in meta.items()
            if k not in ("format_version", "labels", "order", "constrain", "normalization", "encoder")
        }
        return model
