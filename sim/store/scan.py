"""A run's tables read chunk by chunk, checked part by part: every streaming reader's source.

Why: a run of 10 million games is 75 million round rows, 8.5 GB as one pandas table; the
figures of a report, a summary or a tournament's matrix are sums over games and rounds,
so they are computed a chunk at a time (a chunk's games part and its rounds part, the
same games) and memory stays at one chunk whatever the run's size. Every part read here
is one that ``sim.checks.integrity`` checked against the run's ledger (its size, footer,
rows and identity) and is decoded with its Parquet page checksums verified
(:func:`read_part`): a damaged part is one ``SniffError`` line naming it, as for
any other reader. pyarrow rather than DuckDB here because DuckDB does not verify Parquet
page checksums (a flipped byte in an uncompressed page reads there as a wrong number).

Also here: what a whole table would cost in pandas (:func:`frame_bytes`), so that
``Run.games`` and ``Run.rounds`` can refuse a run that would not fit in memory, in one line,
instead of swapping or dying.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sim.checks.footers import error_text
from sim.errors import SniffError

__all__ = [
    "available_memory", "chunk_parts", "frame_bytes", "PEAK_FACTOR", "read_chunk", "read_part",
    "scan"
]

# pandas bytes per value of an Arrow type (a dictionary column becomes int8 codes)
_WIDTH = {pa.int8(): 1, pa.int16(): 2, pa.int32(): 4, pa.int64(): 8, pa.bool_(): 1,
          pa.float64(): 8, pa.float32(): 4}
# Peak memory of reading a table into pandas over the frame's own size: the Arrow table
# and the frame are both alive during the conversion (measured in docs/query.md).
PEAK_FACTOR = 2.3


def _schema_problem(path: Path, table: str, columns: list[str]) -> str | None:
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as error:
        return f"cannot read {path}: not a readable Parquet file ({error_text(error)})"
    missing = [c for c in columns if c not in schema.names]
    if missing:
        return (f"{path} lacks column(s) {', '.join(missing)}: not a sniff-simulate {table} "
                "table (or written by an incompatible version)")
    return None


def chunk_parts(run) -> list[dict[str, Path]]:
    """Per checked chunk, in game id order: its part of each table of the run."""
    from sim.checks.integrity import tables_of

    checked = run.checked
    tables = tables_of(run.config)
    return [{table: checked.folder / table / checked.good[chunk]["parts"][table]["file"]
             for table in tables} for chunk in sorted(checked.good)]


def scan(run, columns: dict[str, list[str]],
         progress: Callable[[int, int], None] | None = None) -> Iterator[dict[str, pa.Table]]:
    """Yield each chunk of ``run`` (``sim.store.io.Run``) as ``{table: columns}``.

    ``columns`` names the columns to read per table (only those tables are read).
    ``progress(done, total)`` hears each chunk read. An in-memory run is one chunk.
    """
    if run.path is None:
        yield {name: _select(run.table(name), cols, name) for name, cols in columns.items()}
        if progress is not None:
            progress(1, 1)
        return
    chunks = chunk_parts(run)
    for index, parts in enumerate(chunks):
        yield read_chunk(parts, columns)
        if progress is not None:
            progress(index + 1, len(chunks))


def read_chunk(parts: dict[str, Path], columns: dict[str, list[str]]) -> dict[str, pa.Table]:
    """One chunk's parts (``chunk_parts``): the ``columns`` of each table, checked."""
    out = {}
    for name, cols in columns.items():
        path = parts[name]
        problem = _schema_problem(path, name, cols)
        if problem:
            raise SniffError(problem)
        out[name] = read_part(path, cols)
    return out


def read_part(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One checked part, every page's checksum verified: a part that does not decode is one
    line naming it, never a raw "OSError: Corrupt Lz4 compressed data"."""
    try:
        return pq.read_table(path, columns=columns, page_checksum_verification=True)
    except (OSError, pa.ArrowException) as error:
        raise SniffError(f"{path}: its content cannot be decoded ({error_text(error)}); "
                         "`sniff verify` checks the run, `--resume` replays a bad chunk") from None


def _select(table: pa.Table, columns: list[str], name: str) -> pa.Table:
    missing = [c for c in columns if c not in table.column_names]
    if missing and table.num_rows:
        raise SniffError(f"in-memory run: the {name} table lacks column(s) "
                         f"{', '.join(missing)}")
    return table.select([c for c in columns if c in table.column_names])


def table_rows(run, name: str) -> int:
    """Rows of a table over the checked parts (from the ledger)."""
    if run.path is None:
        return run.table(name).num_rows
    total = 0
    for record in run.checked.good.values():
        total += int(record["parts"][name]["rows"])
    return total


def frame_bytes(run, name: str) -> int:
    """What the whole table would take as a pandas DataFrame (bytes, estimated)."""
    parts = run.parts(name)
    if not parts:
        return 0
    schema = pq.read_schema(parts[0])
    width = sum(1 if pa.types.is_dictionary(f.type) else _WIDTH.get(f.type, 8)
                for f in schema)
    return table_rows(run, name) * width


def available_memory() -> int:
    """Memory the system can give this process now (Linux ``MemAvailable``; else 3/4 of
    the physical memory)."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4
    except (ValueError, OSError):
        return 1 << 62


def require_memory(run, name: str, peak: bool = True) -> None:
    """Refuse, in one line, to read a whole table the memory available now cannot hold
    (``peak``: into pandas, whose conversion holds the Arrow table too), naming the ways
    to read it in parts."""
    from sim.store.folders import size_text

    need = frame_bytes(run, name) * (PEAK_FACTOR if peak else 1.0)
    free = available_memory()
    if need > free:
        raise SniffError(
            f"{run.path}: its {name} table ({table_rows(run, name):,} rows) needs about "
            f"{size_text(need)} of memory to read whole, more than the {size_text(free)} "
            f"available; read it in parts instead: run.query(\"SELECT ... FROM {name}\") "
            f"(DuckDB), run.dataset(\"{name}\") (pyarrow: filter and project first), "
            f"or `sniff query {run.path} \"SQL\"`")
