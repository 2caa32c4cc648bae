"""The chunks of every candidate of an n-best list, and the distinct chunks among a sentence's
candidates, which the feature families of ``rerank.context``, ``rerank.phrase`` and
``rerank.interned`` make their features once for."""
import numpy as np

from structperc._kernels.rank.candidates import OTHER_TAG, TAG_CODES, candidate_spans, distinct_in_blocks
from structperc.chunks import tag_and_type


class CandidateSpans:
    """The chunks of every candidate of an NBestList (``_kernels.rank.candidates.candidate_spans``),
    and the distinct (sentence, type, first, last) among them.

    offsets int64 (C + 1,); type, first, last, candidate, distinct_of int64 (S,): each chunk's type id
    (into ``type_names``), first and last token (in its sentence), candidate and distinct chunk;
    distinct_sentence, distinct_type, distinct_first, distinct_last int64 (D,); in_first bool (S,):
    the chunk belongs to its sentence's first candidate; first_candidate bool (C,); token_start int64
    (C,): the corpus index of each candidate's first token.
    """

    def __init__(self, nb):
        tags, types, self.type_names = label_tables(nb.label_names)
        end_type = self.type_names.index("_") if "_" in self.type_names else len(self.type_names)
        self.offsets, self.type, self.first, self.last = candidate_spans(nb.paths, nb.path_offsets, tags, types,
                                                                         end_type)
        n_candidates = nb.n_candidates
        self.candidate = np.repeat(np.arange(n_candidates, dtype=np.int64), np.diff(self.offsets))
        sentence_of_candidate = nb.sentence_of_candidate()
        self.first_candidate = np.zeros(n_candidates, dtype=bool)
        self.first_candidate[nb.candidate_offsets[:-1][np.diff(nb.candidate_offsets) > 0]] = True
        self.in_first = self.first_candidate[self.candidate]
        self.token_start = nb.corpus.sentence_offsets[sentence_of_candidate].astype(np.int64)
        sentence = sentence_of_candidate[self.candidate]
        width = int(np.diff(nb.corpus.sentence_offsets).max()) + 1 if nb.corpus.n_sentences else 1
        key = ((sentence * (len(self.type_names) + 1) + self.type) * width + self.first) * width + self.last
        # the chunks of one sentence are consecutive, and its keys below the next sentence's
        index, self.distinct_of = distinct_in_blocks(key, self.offsets[nb.candidate_offsets])
        self.distinct_sentence = sentence[index]
        self.distinct_type = self.type[index]
        self.distinct_first = self.first[index]
        self.distinct_last = self.last[index]

    @property
    def n_distinct(self):
        return len(self.distinct_sentence)


def label_tables(label_names):
    """(tags int64 (L,), types int64 (L,), type names): the tag code (``candidates.TAG_CODES``) and the
    chunk type id of every label."""
    tags, types, type_names = [], [], []
    index = {}
    for label in label_names:
        tag, kind = tag_and_type(label)
        tags.append(TAG_CODES.get(tag, OTHER_TAG))
        if kind not in index:
            index[kind] = len(type_names)
            type_names.append(kind)
        types.append(index[kind])
    return np.asarray(tags, dtype=np.int64), np.asarray(types, dtype=np.int64), type_names
