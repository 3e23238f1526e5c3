"""``sniff query``'s answers: the folder asked, and the answer printed or written.

Why apart from ``sim.store.query``: that module is the locked connection a ``Run`` asks
through (``Run.query``); this one opens what the command line names (a run folder, or an
openings folder and its recorded files) and writes the answer: an aligned table of its
first rows, or all of it as CSV on stdout or as a Parquet file, batch by batch, so an
answer of any size passes in bounded memory. It never writes into the folder it reads.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sim.errors import SniffError

__all__ = ["answer", "QueryLimits"]

if TYPE_CHECKING:
    import pyarrow as pa

from sim.store.query import (
    DEFAULT_MEMORY,
    DEFAULT_TIMEOUT,
    Limits,
    Progress,
    check_timeout,
    connect,
    relation,
    run_sources,
    threads_of,
)


def sources_of(path) -> tuple[dict[str, list[Path]], int]:
    """The tables a query of ``path`` (a run folder or a ``Run``) may name, and the threads
    its run was played with. An openings folder's tables come from the room that writes it
    (``sim.openings.folder.table_files``, which checks them): pass them as ``sources``."""
    from sim.store import io

    if isinstance(path, io.Run):
        return run_sources(path), threads_of(path.manifest)
    run = _open_run_folder(path)
    return run_sources(run), threads_of(run.manifest)


def _open_run_folder(path):
    """The run folder a query names, checked (``sim.store.io.open_run``)."""
    from sim.store import io

    folder = Path(path)
    if not folder.is_dir():
        raise SniffError(f"no such folder: {folder}" if not folder.exists()
                         else f"{folder} is a file; give a run folder or an openings folder")
    if (folder / "summary.json").is_file() and not (folder / io.MANIFEST).is_file():
        raise SniffError(f"{folder} is an openings folder: its tables are listed by "
                         "sim.openings.folder.table_files (sniff query does it)")
    if os.path.lexists(folder / "tournament.json"):  # a FIFO there: one line, below
        raise SniffError(f"{folder} is a tournament: query one of its pairings "
                         f"({folder}/pairs/NAME), each a run folder")
    return io.open_run(folder)


def batches(result, size: int = 100_000) -> pa.RecordBatchReader:
    """The relation's rows as a pyarrow RecordBatchReader, ``size`` rows at a time."""
    reader = getattr(result, "to_arrow_reader", None)  # DuckDB 1.4+; fetch_record_batch before
    return reader(size) if reader is not None else result.fetch_record_batch(size)


def _plain(batch):
    """A record batch with dictionary columns as plain strings (for CSV)."""
    import pyarrow as pa

    columns = [column.cast(column.type.value_type) if pa.types.is_dictionary(column.type)
               else column for column in batch.columns]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def check_output(out: Path, overwrite: bool, folder: Path | None) -> Path:
    """Where ``--parquet OUT`` may write: a new file (or ``--overwrite``), outside the
    folder queried, in a folder that exists."""
    from sim.store.folders import check_output_file

    if isinstance(out, str) and out.endswith(("/", os.sep)):  # Path() would drop the slash
        raise SniffError(f"{out} names a folder (it ends with a slash): give a file name")
    out = Path(out)
    if out.is_dir() and not out.is_symlink():
        raise SniffError(f"{out} exists (a folder); give a new file name")
    if folder is not None and out.resolve().is_relative_to(Path(folder).resolve()):
        raise SniffError(f"{out} is inside {folder}: a query never writes into the folder "
                         "it reads; write it elsewhere")
    return check_output_file(out, "{parquet}", "parquet", overwrite)  # the one output check


@dataclass(frozen=True)
class QueryLimits:
    """What a query may use: ``memory`` (bytes, DuckDB's limit), ``timeout`` (seconds; None:
    no limit) and ``hard_memory`` (cap the whole process at ``memory``: ``sniff query``).

    Attributes:
        memory: duckDB's memory limit, in bytes.
        timeout: seconds a query may run (None: no limit).
        hard_memory: cap the whole process at ``memory`` (``sniff query``).
    """

    memory: int = DEFAULT_MEMORY
    timeout: float | None = DEFAULT_TIMEOUT
    hard_memory: bool = False

    def __post_init__(self) -> None:
        check_timeout(self.timeout)  # NaN, infinity or a negative one would switch it off


def answer(path, sql: str, *, csv: bool = False, parquet: Path | None = None,
           overwrite: bool = False, max_rows: int = 1000, stream=None,
           sources: dict[str, list[Path]] | None = None, notice=None,
           limits: QueryLimits = QueryLimits()) -> int:
    """``sniff query``: print the answer as an aligned table (its first ``max_rows`` rows),
    or all of it as CSV, or write it to a Parquet file; returns the rows written or shown.

    CSV and Parquet are written batch by batch, so an answer of any size passes in bounded
    memory; the Parquet file appears whole or not at all. ``notice`` gets one line after
    the answer when the run folder was not verified since it last changed
    (``sim.checks.verified``: readers check sizes and footers, not the parts' sha256).
    ``limits`` (:class:`QueryLimits`): its ``timeout`` (seconds) stops a query that runs
    longer; ``hard_memory`` caps the whole process at its memory limit
    (``sim.store.query.Limits``: ``sniff query`` asks for it).
    Ctrl-C stops the query at once (``sim.errors.Stopped``).
    """
    import duckdb
    import pyarrow as pa

    stream = stream or sys.stdout
    folder = None if not isinstance(path, (str, os.PathLike)) else Path(path)
    if parquet is not None:
        check_output(parquet, overwrite, folder)
    note = None
    if sources is None and folder is not None:
        from sim.checks.verified import unverified_note

        run = _open_run_folder(folder)
        sources, threads = run_sources(run), threads_of(run.manifest)
        note = unverified_note(run.path, run.checked)
    elif sources is None:
        sources, threads = sources_of(path)
    else:  # an openings folder's checked tables (sim.openings.folder.table_files)
        threads = os.cpu_count() or 1
    session = connect(sources, threads, limits.memory)
    held = Limits(session, limits.timeout, limits.memory if limits.hard_memory else None)
    try:
        with held, Progress(session):
            result = relation(session, sql)  # bounded too: binding folds constants
            if parquet is not None:
                rows = _write_parquet(result, Path(parquet))
            elif csv:
                rows = _write_csv(result, stream)
            else:
                frame = result.limit(max_rows + 1).df()
    # RuntimeError: what some DuckDB releases raise for a query interrupted by Ctrl-C
    except (duckdb.Error, pa.ArrowException, OSError, MemoryError, RuntimeError) as error:
        raise held.error(error, session) from None
    if note is not None and notice is not None:
        notice(note)
    if parquet is not None or csv:
        return rows
    from sim.display.formatting import printable

    shown = frame.head(max_rows)  # its values are data, never commands to the terminal
    stream.write(printable(shown.to_string(index=False)) + "\n" if len(shown.columns)
                 else "\n")
    if len(frame) > max_rows:
        stream.write(f"(the first {max_rows:,} rows; --csv or --parquet OUT gives them all)\n")
    return len(shown)


def _write_csv(result, stream) -> int:
    import pyarrow.csv as pacsv

    from sim.display.formatting import printable

    reader = batches(result)
    binary = getattr(stream, "buffer", None)
    if binary is not None and stream.isatty():  # escaped for a terminal, raw for a pipe
        binary = None
    rows = 0
    first = True
    for batch in reader:
        batch = _plain(batch)
        if binary is not None:
            pacsv.write_csv(batch, binary, pacsv.WriteOptions(include_header=first))
            binary.flush()
        else:
            import io as _io

            buffer = _io.BytesIO()
            pacsv.write_csv(batch, buffer, pacsv.WriteOptions(include_header=first))
            stream.write(printable(buffer.getvalue().decode()) if stream.isatty()
                         else buffer.getvalue().decode())
        first = False
        rows += batch.num_rows
    if first:  # no rows: the header alone
        names = ",".join(f'"{name}"' for name in reader.schema.names)
        stream.write(names + "\n")
    return rows


def _write_parquet(result, out: Path) -> int:
    import pyarrow.parquet as pq

    from sim.files import write_atomic

    rows = 0

    def write(temporary: Path) -> None:
        nonlocal rows
        reader = batches(result)
        with pq.ParquetWriter(temporary, reader.schema, compression="zstd") as writer:
            for batch in reader:
                writer.write_batch(batch)
                rows += batch.num_rows

    write_atomic(out, write)
    return rows
