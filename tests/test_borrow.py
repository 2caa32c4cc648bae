"""``_kernels.borrow.borrowed``: the arrays a kernel borrows lose their owner (so that numba counts no
references on them or their views) and keep their data, shape and strides; whatever else a tuple
holds is unchanged."""
from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from structperc._kernels.borrow import borrowed

Record = namedtuple("Record", "weights offsets size flag inner")


@intrinsic
def owner(typingctx, array):
    """The address of the block that owns ``array`` (0: none)."""
    def codegen(context, builder, signature, arguments):
        made = context.make_array(signature.args[0])(context, builder, arguments[0])
        return builder.ptrtoint(made.meminfo, context.get_value_type(types.intp))

    return types.intp(array), codegen


@njit
def owners(record):
    return owner(record.weights), owner(record.offsets), owner(record.inner[0]), owner(record.inner[1])


@njit
def borrowed_owners(record):
    return owners(borrowed(record))


@njit
def borrowed_fields(record):
    kept = borrowed(record)
    return kept.size, kept.flag is None, kept.inner[2]


@njit
def rows_and_slices(matrix, out):
    """out[t] = matrix[t] * 2 + the row's sum over views of borrowed arrays; and a new array the
    kernel allocates from them (it owns its block)."""
    matrix, out = borrowed((matrix, out))
    for t in range(matrix.shape[0]):
        row, target = matrix[t], out[t]
        total = 0.0
        for c in range(row.shape[0]):
            total += row[c]
        for c in range(row.shape[0]):
            target[c] = row[c] * 2.0 + total
    copy = matrix[1:, ::2].copy()
    return copy, owner(copy) != 0


def _record():
    return Record(np.arange(6.0), np.arange(3, dtype=np.int64), 7, None,
                  (np.ones((2, 3)), np.zeros(4, dtype=np.int32), 2.5))


def test_every_array_of_a_nested_record_loses_its_owner():
    record = _record()
    assert all(address != 0 for address in owners(record))
    assert borrowed_owners(record) == (0, 0, 0, 0)


def test_the_fields_that_are_not_arrays_are_kept():
    assert borrowed_fields(_record()) == (7, True, 2.5)


def test_views_of_borrowed_arrays_read_and_write_the_callers_memory():
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(5, 7))[:, 1:]  # a view with strides of its own, not contiguous
    out = np.zeros((5, 6))
    expected = matrix[1:, ::2].copy()
    copy, owned = rows_and_slices(matrix, out)
    np.testing.assert_allclose(out, matrix * 2.0 + matrix.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(copy, matrix[1:, ::2])
    assert owned
    del matrix
    np.testing.assert_array_equal(copy, expected)  # the copy outlives the borrowed array: its block is its own
