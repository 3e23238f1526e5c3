"""Arrow columns to and from numpy arrays, through their buffers.

Why not ``pa.array`` and ``np.asarray``: pyarrow imports pandas the first time either
converts, which every ``sniff simulate`` then paid at start-up although nothing
in it uses pandas. Fixed-width columns share their buffers with numpy, so going through
them costs nothing and imports nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["to_numpy"]


def numeric(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """A column of fixed-width numbers holding ``values`` (cast to the column's type)."""
    values = np.ascontiguousarray(values, dtype=arrow_type.to_pandas_dtype())
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def bools(values: np.ndarray) -> pa.Array:
    packed = np.packbits(np.asarray(values, dtype=np.bool_), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])


def strings(values: Sequence[str]) -> pa.Array:
    data = [value.encode() for value in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(item) for item in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [
        None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data) or b"\0")])


def to_numpy(column, dtype=np.int64) -> np.ndarray:
    """A numeric column (pyarrow, or anything ``np.asarray`` takes) as a numpy array.

    A pyarrow column without nulls is read from its buffers; anything else goes through
    ``np.asarray``. ``dtype`` None keeps the column's own integer type (no copy).
    """
    if isinstance(column, pa.ChunkedArray | pa.Array):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        if all(chunk.null_count == 0 and pa.types.is_integer(chunk.type) for chunk in chunks):
            parts = [
                np.frombuffer(chunk.buffers()[1], dtype=chunk.type.to_pandas_dtype(),
                              count=len(chunk), offset=chunk.offset * chunk.type.byte_width)
                for chunk in chunks
            ]
            if not parts:
                return np.zeros(0, dtype=dtype)
            joined = np.concatenate(parts)
            return joined if dtype is None else joined.astype(dtype, copy=False)
    return np.asarray(column, dtype=dtype)
