"""The chunk scheme (structperc.chunks) against seqeval, the reference conlleval reading."""
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics.sequence_labeling import get_entities

from structperc.chunks import chunk_spans, is_bio, map_only_types

TYPES = ["NP", "VP", "PP", "NP-SBJ"]


def labels_of(prefixes):
    return ["O"] + [f"{p}-{t}" for p in prefixes for t in TYPES]


def seqeval_spans(labels):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns on labels that are not B-/I-/E-/S- tags
        return get_entities(list(labels))


# IOB2 (every chunk opens with B-), IOB1 (B- only between chunks of one type) and stray I- tags
# (after O, at the start, after another type) all come out of free draws from B-/I-/O.
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(labels_of("BI")), max_size=12))
def test_spans_equal_seqeval_on_iob_labels(labels):
    assert chunk_spans(labels) == seqeval_spans(labels)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(labels_of("BIES")), max_size=12))
def test_spans_equal_seqeval_on_iobes_labels(labels):
    assert chunk_spans(labels) == seqeval_spans(labels)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("BIESO.-NPX", min_size=1, max_size=4), max_size=10))
def test_spans_equal_seqeval_on_any_label_text(labels):
    # labels that are not chunk tags ("." or "B-" or "NP") follow seqeval's reading as well
    assert chunk_spans(labels) == seqeval_spans(labels)


def test_spans_of_a_textbook_sentence():
    # IOB1: B- only separates two adjacent chunks of one type
    labels = ["I-NP", "I-NP", "B-NP", "O", "I-VP", "I-NP", "I-NP"]
    assert chunk_spans(labels) == [("NP", 0, 1), ("NP", 2, 2), ("VP", 4, 4), ("NP", 5, 6)]
    assert chunk_spans(tuple(labels)) == chunk_spans(labels) and chunk_spans([]) == []


@pytest.mark.parametrize("labels, expected", [
    (["O", "B-NP", "I-NP"], True), (["B-NP", "S-VP", "E-NP"], True), (["O"], False),
    (["NN", "VB"], False), (["B-NP", "NN"], False), (["B-", "O"], False),
])
def test_is_bio(labels, expected):
    assert is_bio(labels) is expected


def test_map_only_types_keeps_the_named_types():
    labels = ["B-NP", "I-NP", "B-VP", "U-PP", "L-NP", "O", "NN"]
    assert map_only_types(labels, {"NP"}) == ["B-NP", "I-NP", "O", "O", "L-NP", "O", "NN"]
