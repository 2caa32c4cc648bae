"""Documents of a corpus: a sentence's document is the number of ``-DOCSTART-`` (CoNLL) or ``# newdoc``
(CoNLL-U) lines before its first token, or ``document_size`` consecutive sentences, or the sentence
alone (``document_ids``); the document features of ``rerank.context`` count what a string gets in the
rest of its document."""
import functools
import os

import numpy as np

DOCUMENT_MARKERS = ("-DOCSTART-", "# newdoc")


@functools.lru_cache(maxsize=32)
def _marker_lines(path, mtime, size):
    """Sorted 1-based line numbers of the document markers of a file."""
    lines = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.startswith(DOCUMENT_MARKERS):
                lines.append(number)
    return np.asarray(lines, dtype=np.int64)


def marker_lines(path):
    """Line numbers of the document markers of ``path``, or None when it is not a readable file."""
    if not path or not os.path.isfile(path):
        return None
    stat = os.stat(path)
    return _marker_lines(os.path.abspath(path), stat.st_mtime_ns, stat.st_size)


def document_ids(corpus, document_size=None):
    """The document (int64 (n_sentences,), non-decreasing within a file) of every sentence.

    The file's markers when it has any; else blocks of ``document_size`` sentences; else each
    sentence is a document of its own."""
    n = corpus.n_sentences
    first_tokens = np.minimum(corpus.sentence_offsets[:-1], max(corpus.n_tokens - 1, 0))
    if n and corpus.n_tokens:
        paths = corpus.paths if corpus.paths is not None else [corpus.path]
        file_ids = (corpus.file_ids[first_tokens] if corpus.file_ids is not None
                    else np.zeros(n, dtype=np.int64))
        markers = [marker_lines(p) for p in paths]
        if any(m is not None and len(m) for m in markers):
            first_lines = corpus.line_numbers[first_tokens]
            out = np.zeros(n, dtype=np.int64)
            base = 0
            for f, m in enumerate(markers):
                here = file_ids == f
                m = np.zeros(0, dtype=np.int64) if m is None else m
                out[here] = base + np.searchsorted(m, first_lines[here])
                base += len(m) + 1
            return out
    if document_size:
        return np.arange(n, dtype=np.int64) // int(document_size)
    return np.arange(n, dtype=np.int64)
