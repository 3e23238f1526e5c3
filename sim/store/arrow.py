"""Arrow columns to and from numpy arrays, through their buffers.

Why not ``pa.array`` and ``np.asarray``: pyarrow imports pandas the first time either
converts (0.3-0.4 s), which every ``sniff simulate`` then paid at start-up although nothing
in it uses pandas. Fixed-width columns share their buffers with numpy, so going through
them costs nothing and imports nothing. And whether a part's pages carry checksums
(``has_page_checksums``), read from its bytes, which pyarrow does not say.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa


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


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def has_page_checksums(path: Path) -> bool:
    """Whether a part's pages carry a CRC-32 (``write_page_checksum``, written since runs
    keep a ledger): the first page header of its first column, read as Parquet's compact
    Thrift ``PageHeader`` (fields 1-3 are its type and sizes, field 4 the ``crc``)."""
    import pyarrow.parquet as pq

    try:
        column = pq.ParquetFile(path).metadata.row_group(0).column(0)
        offset = (column.dictionary_page_offset if column.has_dictionary_page
                  else column.data_page_offset)
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(64)
        at = 0
        for _ in range(3):  # fields 1, 2, 3: i32, each one step on (compact header 0x15)
            if data[at] != 0x15:
                return False
            _, at = _varint(data, at + 1)
        return data[at] == 0x15  # field 4, the crc
    except (OSError, IndexError, ValueError, pa.ArrowException):
        return False
