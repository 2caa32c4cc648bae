"""Small CSR helpers."""
import numpy as np
from numba import njit


@njit(cache=True)
def gather_rows(row_offsets, row_values, rows):
    """Concatenate rows ``rows`` of a CSR matrix: returns (offsets (len(rows) + 1,), values)."""
    offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        offsets[i + 1] = offsets[i] + row_offsets[r + 1] - row_offsets[r]
    values = np.empty(offsets[-1], dtype=row_values.dtype)
    for i in range(rows.shape[0]):
        r = rows[i]
        start = row_offsets[r]
        for k in range(offsets[i + 1] - offsets[i]):
            values[offsets[i] + k] = row_values[start + k]
    return offsets, values
