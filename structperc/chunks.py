"""The chunk scheme: labels such as B-NP, I-NP, O (also E-, S-) and the chunks they spell.

A label is a one-letter tag, a hyphen and a chunk type (``B-NP``), or ``O`` outside every chunk.
Chunks are read the way conlleval and seqeval read them (IOB1 and IOB2 alike): a chunk starts at
B-/S-, at an I-/E- after O or after a chunk of another type, and ends before such a start, before
an O, or after E-/S-. ``chunk_spans`` gives the same list as seqeval's ``get_entities``.
"""
import functools
import warnings

import numpy as np

from structperc.errors import ConfigError, StructpercWarning

# tag letters of IOB, IOBES and BILOU schemes
CHUNK_PREFIXES = frozenset("BIESLU")


@functools.lru_cache(maxsize=1024)
def tag_and_type(label):
    """(tag letter, chunk type) of a label, split as seqeval splits it: the first character, and the
    text after the first hyphen ("_" when empty)."""
    return label[0], label[1:].split("-", maxsplit=1)[-1] or "_"


def chunk_spans(labels):
    """Chunks of one sentence as a list of (type, first token, last token), both ends inclusive.

    labels : sequence of label strings of one sentence.
    """
    spans = []
    prev_tag, prev_type, begin = "O", "", 0
    n = len(labels)
    for i in range(n + 1):
        tag, kind = tag_and_type(labels[i]) if i < n else ("O", "_")
        if (prev_tag == "E" or prev_tag == "S"
                or (prev_tag in ("B", "I") and tag in ("B", "S", "O"))
                or (prev_tag != "O" and prev_tag != "." and prev_type != kind)):
            spans.append((prev_type, begin, i - 1))
        if (tag == "B" or tag == "S"
                or (prev_tag in ("E", "S", "O") and tag in ("E", "I"))
                or (tag != "O" and tag != "." and prev_type != kind)):
            begin = i
        prev_tag, prev_type = tag, kind
    return spans


def is_bio(labels):
    """True when the label set is a chunk tagging (B-X, I-X, O, ...)."""
    prefixed = [label for label in labels if label != "O"]
    return bool(prefixed) and all(label[:2] in ("B-", "I-", "E-", "S-") and len(label) > 2 for label in prefixed)


# the chunk schemes a decoder can keep (the label pairs each forbids: ``allowed_transitions``), and what
# gold sequences that keep one look like (the reason ``features.presets`` gives for choosing it)
SCHEMES = {
    "bio": "every I-X after B-X or I-X",
    "iob1": "I-X starts chunks, B-X only right after a chunk of its type (IOB1)",
    "bioes": "E-/S- tags, I-X and E-X only inside a chunk (IOBES)",
}


def allowed_transitions(labels, scheme, wildcard=None):
    """bool (L + 1, L): ``allowed[p, c]`` when label c may follow label p in ``scheme`` (``SCHEMES``,
    or "none": every pair); row L stands for the start of a sentence, which is outside any chunk.

    labels : the L label strings; wildcard : None, or a label (the symbol of an unlabelled token)
        that may stand anywhere, before or after any label.
    """
    n = len(labels)
    allowed = np.ones((n + 1, n), dtype=bool)
    if scheme == "none":
        return allowed
    index = {label: i for i, label in enumerate(labels)}

    def rows(*names):
        """The rows of the labels ``names`` that are in the set: the previous labels allowed."""
        keep = np.zeros(n + 1, dtype=bool)
        keep[[index[name] for name in names if name in index]] = True
        return keep

    # in IOBES a chunk is still open after B-X or I-X (it ends at E-X)
    open_chunk = rows(*(label for label in labels if label[:2] in ("B-", "I-")))
    for c, label in enumerate(labels):
        if label == wildcard:
            continue
        inside = rows(f"B-{label[2:]}", f"I-{label[2:]}", wildcard)
        if scheme == "bio" and label.startswith("I-") or scheme == "iob1" and label.startswith("B-"):
            allowed[:, c] = inside
        elif scheme == "bioes":
            allowed[:, c] = inside if label[:2] in ("I-", "E-") else ~open_chunk | rows(wildcard)
    return allowed


def keeps_scheme(ids, labels, sentence_offsets, scheme, wildcard=None):
    """Whether the gold sequences keep ``scheme`` (``allowed_transitions``) in every sentence.

    ids : int (n_tokens,) label ids into ``labels``; sentence_offsets : int (n_sentences + 1,)
    """
    ids = np.asarray(ids, dtype=np.int64)
    previous = np.empty_like(ids)
    previous[1:] = ids[:-1]
    starts = np.asarray(sentence_offsets[:-1], dtype=np.int64)
    previous[starts[starts < len(ids)]] = len(labels)
    return bool(allowed_transitions(labels, scheme, wildcard)[previous, ids].all())


def kept_scheme(ids, distinct, sentence_offsets, missing_label=None):
    """The tightest chunk scheme (``chunks.SCHEMES``) the gold sequences keep, or None: IOBES when
    the labels have E- or S- tags, else BIO, else IOB1."""
    distinct = list(distinct)
    candidates = ["bio", "iob1"]
    if any(label[:2] in ("E-", "S-") for label in distinct if label != missing_label):
        candidates.insert(0, "bioes")
    return next((scheme for scheme in candidates
                 if keeps_scheme(ids, distinct, sentence_offsets, scheme, missing_label)), None)


def map_only_types(labels, types):
    """Map every chunk tag whose type is not in ``types`` to "O"; returns a new list.

    Tags look like B-X, I-X (also E-, S-, L-, U-); "O" and tags without such a prefix are kept.
    ``map_only_types(labels, {"NP"})`` turns CoNLL-2000 chunking into NP chunking.
    """
    types = set(types)
    mapping = {}
    for tag in set(labels):
        if len(tag) > 2 and tag[1] == "-" and tag[0] in CHUNK_PREFIXES and tag[2:] not in types:
            mapping[tag] = "O"
        else:
            mapping[tag] = tag
    return [mapping[tag] for tag in labels]


def chunk_types(labels):
    """The chunk types (the X of B-X, I-X, ...) of the distinct labels in ``labels``, as a set."""
    return {tag[2:] for tag in set(labels) if len(tag) > 2 and tag[1] == "-" and tag[0] in CHUNK_PREFIXES}


def check_only_types(types, present, path):
    """Check the chunk types to keep (``map_only_types``) against the types a corpus has.

    A ConfigError when it has none of them (every label would become O), listing the types it
    has; a StructpercWarning naming those it lacks when it has some.
    types : iterable of str; present : set of str (``chunk_types`` of the corpus's labels)."""
    types = set(types)
    missing = sorted(types - present)
    if not missing:
        return
    has = ", ".join(sorted(present)) or "none"
    if len(missing) == len(types):
        raise ConfigError(f"{path}: no chunk of type {', '.join(missing)} to keep; the types in the labels: {has}")
    warnings.warn(StructpercWarning(f"no chunk of type {', '.join(missing)} to keep; the types in the labels: {has}",
                                    path=path), stacklevel=3)
