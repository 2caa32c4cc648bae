"""The CRF's objective over the whole corpus for the batch solvers (``lbfgs.py``): w -> (f, g) of

    f(w) = -sum_i log P(y_i | x_i) + c2 ||w||²

(the smooth part of CRFsuite's objective; the L1 term is the solver's), evaluated by a numba kernel
of ``_kernels/learn/``, with the weights a run holds at zero. ``crf_scaled.scaled_objective``, in
probability space, takes the common case (every label allowed at every token, no pair features,
every label known) when its per-token marginals fit in ``NODE_BYTES``; ``crf_batch.crf_objective``
the others. Both sum in an order fixed by the data: f and g are the same whatever the number of threads.
"""
import numpy as np

from structperc._kernels.records import with_partial_labels
from structperc._kernels.threads import token_blocks

NODE_BYTES = 1 << 29  # the largest node-marginal table (tokens x labels float64) of scaled_objective
GENERAL_BLOCKS = 4  # sentence blocks of crf_objective: each holds a gradient the size of w


class CRFObjective:
    """w -> (f, g) of f(w) = -sum_i log P(y_i | x_i) + c2 ||w||² (the smooth part), with the
    entries of ``frozen`` held at zero (their gradient is zeroed).

    layout, data : the kernels' records (``model.layout()``, ``model.data(encoded)``)
    frozen : int64 indices of w, or None
    n_blocks : sentence blocks of ``crf_objective`` when it is the kernel; None: ``GENERAL_BLOCKS``
    """

    def __init__(self, layout, data, c2, frozen=None, n_blocks=None):
        # here, not at import: `tag` needs none
        from structperc._kernels.learn import crf_scaled, crf_tables

        self.layout, self.data, self.c2 = layout, with_partial_labels(data), float(c2)
        self.frozen = frozen if frozen is not None and len(frozen) else None
        n_tokens = int(data.sentence_offsets[-1])
        self.scaled = bool(crf_tables.scaled_applies(layout, data)) and n_tokens * layout.n_labels * 8 <= NODE_BYTES
        if self.scaled:
            usable, observed = crf_tables.scaled_tables(layout, data)
            self.tables = crf_tables.scaled_tables_for(layout, data, usable, observed)
            self.skipped = int((~usable & (np.diff(data.sentence_offsets) > 0)).sum())
            self.kernel = crf_scaled.scaled_objective
        else:
            from structperc._kernels.learn import crf_batch, quasi_newton  # the general case only

            self.blocks = token_blocks(data.sentence_offsets, GENERAL_BLOCKS if n_blocks is None else n_blocks)
            self.gradients = np.empty((len(self.blocks) - 1, layout.size))
            self.skipped = 0
            self.kernel = crf_batch.crf_objective
            self.norm = quasi_newton.norm
        self.evaluations = 0
        self.initial_loss = None  # f at the first point evaluated
        self.last = (None, None, None)  # (w, f, g) of the last evaluation

    def at(self, w):
        """(f, g) at w, reusing the last evaluation when w is its point."""
        last_w, loss, gradient = self.last
        if last_w is not None and np.array_equal(last_w, w):
            return loss, gradient
        return self(w)

    def __call__(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self.scaled:
            gradient = np.empty(self.layout.size)
            loss = self.kernel(w, self.c2, self.layout, self.data, self.tables, gradient)
        else:
            loss, self.skipped = self.kernel(w, self.layout, self.data, self.blocks, self.gradients)
            gradient = self.gradients[0].copy()
            if self.c2 > 0:
                loss += self.c2 * self.norm(w) ** 2
                gradient += 2.0 * self.c2 * w
        if self.frozen is not None:
            gradient[self.frozen] = 0.0
        self.evaluations += 1
        loss = float(loss)
        if self.initial_loss is None:
            self.initial_loss = loss
        self.last = (w.copy(), loss, gradient)
        return loss, gradient


def frozen_entries(layout, gold, sentence_offsets, boundary, unseen_transitions):
    """int64 indices of w held at 0: the start row of the transitions and the end block unless
    ``boundary``; unless ``unseen_transitions``, the label transitions p -> c never seen in ``gold``
    (int64 (n_tokens,), -1 for an unknown label), as consecutive known labels of one sentence.
    CRFsuite's model has neither start nor end weights, and without all_possible_transitions only
    the transitions of the training labels."""
    n_labels = layout.n_labels
    frozen = []
    if not boundary:
        frozen.append(layout.off_trans + n_labels * n_labels + np.arange(n_labels))
        frozen.append(layout.off_end + np.arange(n_labels))
    if not unseen_transitions:
        seen = np.zeros((n_labels, n_labels), dtype=bool)
        # pair t holds (gold[t], gold[t + 1]); the pair before a sentence's first token spans two
        within = np.ones(max(len(gold) - 1, 0), dtype=bool)
        starts = np.asarray(sentence_offsets[1:-1], dtype=np.int64)
        within[starts[(starts > 0) & (starts < len(gold))] - 1] = False
        both = within & (gold[:-1] >= 0) & (gold[1:] >= 0)
        seen[gold[:-1][both], gold[1:][both]] = True
        frozen.append(layout.off_trans + np.flatnonzero(~seen))
    return np.unique(np.concatenate(frozen)).astype(np.int64) if frozen else np.zeros(0, dtype=np.int64)
