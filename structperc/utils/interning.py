"""Interning strings: each distinct value gets one integer id, in first-seen order, and a column of
strings is held as int32 ids into its distinct values (``InternedColumn``)."""
from collections.abc import Sequence

import numpy as np


class Index(dict):
    """value -> id, with -1 for a value it does not hold (``__missing__`` keeps lookups in C)."""

    def __missing__(self, key):
        return -1


class Interner(dict):
    """value -> id, numbering a new value on first sight (insertion order is first-seen order)."""

    def __missing__(self, key):
        value = self[key] = len(self)
        return value


def intern_column(values):
    """(ids int32 (n,), distinct values in first-seen order), in one pass over the values (none for
    an InternedColumn, which holds them already)."""
    if isinstance(values, InternedColumn):
        return values.ids, list(values.distinct)
    index = Interner()
    ids = np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))
    return ids, list(index)


class InternedColumn(Sequence):
    """A column of strings held as int32 ids into its distinct values in first-seen order: what
    ``intern_column`` returns, kept (``readers.parallel.read_training_columns``). Reads as a sequence
    of strings, so code that wants the strings gets them."""

    def __init__(self, ids, distinct):
        self.ids = ids
        self.distinct = distinct

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.distinct[k] for k in self.ids[i].tolist()]
        return self.distinct[self.ids[i]]

    def __iter__(self):
        return map(self.distinct.__getitem__, self.ids.tolist())
