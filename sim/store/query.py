"""Your own questions of a run, in SQL: ``sniff query RUN "SQL"`` and ``Run.query``.

Why DuckDB: a question such as "points per round by end reason" over 75 million round rows
is an aggregation a columnar engine answers from the parts in seconds and in bounded
memory (``memory_limit``), where pandas would first need the whole table (8.5 GB). It is a
core dependency for that reason: every run's data is meant to be asked about.

What a query sees: views named ``games`` and ``rounds`` (a run folder; ``--no-rounds``:
``games`` only) or an openings folder's tables (``openings``, ``games``, ...), each over the
parts the folder's checks passed (``sim.checks.integrity``: ledger, sizes, footers; an openings
folder's files against the sha256 in its ``summary.json``). The views scan the parts through
pyarrow with every Parquet page checksum verified (DuckDB's own reader does not verify
them); a damaged part met during a scan is one line naming it.

Read-only, by three locks: the SQL must be one ``SELECT`` statement (so no ``COPY``,
``ATTACH``, ``INSTALL``/``LOAD``, ``CREATE``, ``SET``, ``PRAGMA``...); the connection is
made with external access off once the views exist (so ``read_csv``, ``read_parquet``,
``glob`` and the like of any path are refused) and its configuration locked; and the
database is in memory, so nothing a query does can touch the folder.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sim.checks.footers import error_text
from sim.errors import SettingError, SniffError

__all__: list[str] = []  # nothing here is used outside its room

if TYPE_CHECKING:  # imported where used: ``import sim.store.query`` stays cheap
    import socket

    import duckdb
    import pandas as pd

DEFAULT_MEMORY = 1 << 30  # DuckDB's memory limit for a query (it spills nothing: no disk)
DEFAULT_TIMEOUT = 600.0  # seconds: sniff query's --timeout default
MAX_TIMEOUT = 7 * 24 * 3600  # seconds (a week): the longest time limit a query takes
HEADROOM = 512 << 20  # the process's own allocations beside the query's (Arrow's batches)
ARENA = 64 << 20  # address space glibc reserves for each thread's malloc arena (unbacked)
_STREAM_FAILED = re.compile(r"reading the stream registered as '([^']+)' failed")


def _checked_dataset(paths: list[Path]):
    import pyarrow.dataset as ds

    options = ds.ParquetFragmentScanOptions(page_checksum_verification=True)
    return ds.dataset([str(p) for p in paths],
                      format=ds.ParquetFileFormat(default_fragment_scan_options=options))


def run_sources(run) -> dict[str, list[Path]]:
    """The tables of a run (``sim.store.io.Run``) and their checked parts."""
    from sim.checks.integrity import tables_of

    return {name: run.parts(name) for name in tables_of(run.config)}


def threads_of(manifest: dict) -> int:
    """The threads the run's last session played with, at most the machine's cores (all of
    them if unknown)."""
    sessions = manifest.get("sessions") or [{}]
    threads = sessions[-1].get("threads")
    cores = os.cpu_count() or 1
    return min(int(threads), cores) if isinstance(threads, int) and threads > 0 else cores


class Session:
    """A locked DuckDB connection (``db``), the tables its views stand for and its threads."""

    def __init__(self, db, sources: dict[str, list[Path]], threads: int = 1) -> None:
        self.db, self.sources, self.threads = db, sources, threads


def connect(sources: dict[str, list[Path]], threads: int = 1,
            memory_limit: int = DEFAULT_MEMORY) -> Session:
    """An in-memory DuckDB connection with one read-only view per table, locked."""
    import duckdb

    if sources and not any(sources.values()):  # views need parts: say why there are none
        raise SniffError(f"no finished chunk yet: the tables ({', '.join(sources)}) hold no "
                         "part to query (a run whose first chunk is still being played, or "
                         "was stopped before it ended)")

    threads = max(1, int(threads))
    connection = duckdb.connect(":memory:", config={
        "threads": threads, "memory_limit": f"{max(memory_limit, 1 << 26)}B",
        "autoinstall_known_extensions": False, "autoload_known_extensions": False})
    for name, paths in sources.items():
        if paths:
            connection.register(name, _checked_dataset(paths))
    connection.execute("SET enable_progress_bar = false")  # DuckDB's own, on stdout
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")
    return Session(connection, sources, threads)


def check_sql(sql: str, tables) -> None:
    """Refuse, in one line, SQL that does not parse or is not one read-only SELECT."""
    import duckdb

    if not sql.strip():
        raise SniffError("give a query, e.g. \"SELECT end_reason, count(*) FROM rounds "
                         "GROUP BY ALL\"")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise SniffError(f"the query does not parse: {error_text(error)}") from None
    if len(statements) != 1:
        raise SniffError(f"give one SELECT statement, not {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise SniffError(f"queries are read-only: only a SELECT is run, not "
                         f"{kind.name.replace('_', ' ')} (tables: {', '.join(tables)})")


def relation(session: Session, sql: str) -> duckdb.DuckDBPyRelation:
    """The query as a lazy DuckDB relation (checked by :func:`check_sql` first)."""
    check_sql(sql, list(session.sources))
    try:
        return session.db.sql(sql)
    except Exception as error:  # duckdb raises its own classes, all of one base
        raise query_error(session, error) from None


def query_error(session: Session, error: BaseException) -> SniffError:
    """A DuckDB error as one line: a damaged part named, an unknown table listed."""
    import duckdb

    text = error_text(error)
    sources = session.sources
    tables = ", ".join(sources)
    failed = _STREAM_FAILED.search(text)
    if failed and failed.group(1) in sources:
        return SniffError(_bad_part(sources[failed.group(1)], text))
    if isinstance(error, duckdb.CatalogException):
        return SniffError(f"the query names no table of this folder ({text}); tables: "
                          f"{tables}")
    if isinstance(error, duckdb.PermissionException):
        return SniffError(f"queries read only the folder's tables ({tables}), no other "
                          f"file: {text}")
    if isinstance(error, duckdb.ParserException):
        return SniffError(f"the query does not parse: {text}")
    if isinstance(error, duckdb.OutOfMemoryException):
        return SettingError(f"the query needs more than its memory limit: {text}; aggregate "
                            "more (GROUP BY) or write the rows with {parquet=OUT}")
    if isinstance(error, duckdb.Error):
        return SniffError(f"the query failed: {text}")
    return SniffError(f"the query failed: {type(error).__name__}: {text}")


def _bad_part(paths: list[Path], text: str) -> str:
    """The part a failed scan met: every part decoded until one fails its checks."""
    from sim.store.scan import read_part

    for path in paths:
        try:
            read_part(path)
        except SniffError as error:
            return str(error)
    return f"a part could not be read ({text})"


def _status_size(field: str) -> int | None:
    """A size of this process now from ``/proc/self/status`` (``VmRSS``; Linux)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class Limits:
    """A query's bounds while it runs: ``timeout`` seconds (then DuckDB is interrupted and the
    query is one line), Ctrl-C (interrupts it at once: DuckDB holds the main thread, so the
    signal is taken from Python's wakeup descriptor by a watcher thread), and with
    ``memory_limit`` the whole process, twice over, because DuckDB's own limit does not
    count every allocation (a string function's result):

    * a hard cap on the process's address space (``RLIMIT_AS``) for the query's duration:
      what it held before plus the limit, ``HEADROOM`` and an ``ARENA`` per thread. An
      allocation past it fails at once, whatever its size (``repeat('x', 3000000000)``: one
      line at once, where the watch alone let it reach 6 GB for a minute; docs/query.md);
      ``RLIMIT_DATA`` was tried and does not see allocations into address space already
      reserved, which the address space does count.
    * a watch of its resident memory every ``POLL`` seconds, the query stopped once it grows
      past what it held before plus the limit and ``HEADROOM``: the address space a process
      reserved earlier without using it (numba's, glibc's arenas) is not under the cap.

    Both are process-wide, so only a process that runs nothing else at the time asks for
    them (``sniff query``); the cap is lifted when the query ends."""

    POLL = 0.05

    def __init__(self, session: Session, timeout: float | None = None,
                 memory_limit: int | None = None) -> None:
        self.connection, self.timeout, self.memory_limit = session.db, timeout, memory_limit
        self.threads = session.threads
        self.timed_out = self.over_memory = False
        self.signalled: int | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        # the wake-up socket pair, the signal file descriptor it replaced, the thread reading it
        self._wakeup: tuple[socket.socket, socket.socket, int, threading.Thread] | None = None
        self._capped: tuple[int, int] | None = None  # the address-space limit to restore

    def __enter__(self) -> Limits:
        if threading.current_thread() is threading.main_thread():
            self._watch_signals()
        resident = None
        if self.memory_limit is not None:
            if (now := _status_size("VmRSS")) is not None:
                resident = now + self.memory_limit + HEADROOM
        if self.timeout is not None or resident is not None:
            self._watcher = threading.Thread(target=self._watch, args=(resident,), daemon=True)
            self._watcher.start()
        if self.memory_limit is not None:  # last: the watchers' stacks are already mapped
            self._cap_address_space()
        return self

    def _cap_address_space(self) -> None:
        """Cap the address space at what the process has mapped now plus the query's share
        (Linux; elsewhere the watch alone bounds it)."""
        import resource

        mapped, limit = _status_size("VmSize"), self.memory_limit
        if mapped is None or limit is None:
            return
        previous = resource.getrlimit(resource.RLIMIT_AS)
        cap = mapped + limit + HEADROOM + ARENA * self.threads
        if previous[1] != resource.RLIM_INFINITY:
            cap = min(cap, previous[1])
        if previous[0] != resource.RLIM_INFINITY and previous[0] <= cap:
            return  # the user's own limit is lower: it stands
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, previous[1]))
        except (ValueError, OSError):
            return
        self._capped = previous

    def _watch(self, resident: int | None) -> None:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while not self._stop.wait(self.POLL):
            if deadline is not None and time.monotonic() > deadline:
                self.timed_out = True
            elif resident is not None and (_status_size("VmRSS") or 0) > resident:
                self.over_memory = True
            else:
                continue
            self.connection.interrupt()
            return

    def _watch_signals(self) -> None:
        import signal
        import socket

        reader, writer = socket.socketpair()
        writer.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main thread of the main interpreter
            reader.close()
            writer.close()
            return

        def watch() -> None:
            while data := reader.recv(16):
                if signal.SIGINT in data:
                    self.signalled = signal.SIGINT
                    self.connection.interrupt()

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        self._wakeup = (reader, writer, previous, thread)

    def __exit__(self, *exc) -> None:
        if self._capped is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, self._capped)
            self._capped = None
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        if self._wakeup is not None:
            import signal

            reader, writer, previous, thread = self._wakeup
            signal.set_wakeup_fd(previous)
            writer.close()
            thread.join(timeout=1)
            reader.close()

    def error(self, error: BaseException, session: Session) -> BaseException:
        """What an error of the query means here: Ctrl-C (``Stopped``, "sniff: interrupted"
        and 130), the time limit (one line), a closed pipe (as it is: the command line
        ends quietly, as every command does), or ``query_error``'s line."""
        from sim.errors import Stopped

        if self.signalled is not None:
            return Stopped(self.signalled)
        if isinstance(error, BrokenPipeError):  # the reader went away (| head): as it is
            return error
        if self.timed_out:
            return SettingError(f"the query ran past its time limit of {self.timeout:g} s and "
                                "was stopped: aggregate more, or give a longer {timeout}")
        if self.over_memory or isinstance(error, MemoryError) or (
                self.memory_limit is not None and _out_of_memory(error)):
            limit = (f" of {self.memory_limit / 2**20:,.0f} MB"
                     if self.memory_limit is not None else "")
            return SettingError(f"the query needs more than its memory limit{limit} and was "
                                "stopped; aggregate more (GROUP BY) or write the rows with "
                                "{parquet=OUT}")
        return query_error(session, error)


def _out_of_memory(error: BaseException) -> bool:
    """DuckDB's own limit reached, or an allocation refused by the address-space cap."""
    import duckdb

    return isinstance(error, duckdb.OutOfMemoryException)


class Progress:
    """A line on stderr while a query runs longer than ``delay`` seconds (a terminal only):
    DuckDB's estimate of how far it is, or the time it has taken."""

    def __init__(self, session: Session, delay: float = 2.0, stream=None,
                 enabled: bool = True) -> None:
        self.connection, self.delay, self.enabled = session.db, delay, enabled
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._shown = False

    def __enter__(self) -> Progress:
        if self.enabled and self.stream.isatty():
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _watch(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(0.5):
            elapsed = time.monotonic() - start
            if elapsed < self.delay:
                continue
            try:
                done = self.connection.query_progress()
            except Exception:  # noqa: BLE001 (a progress line must never fail a query)
                done = -1
            where = f"{done:.0f}%, " if done is not None and done >= 0 else ""
            self.stream.write(f"\rsniff: query running ({where}{elapsed:.0f} s)")
            self.stream.flush()
            self._shown = True




def check_timeout(timeout: float | None) -> None:
    """Refuse a time limit that is not a number of seconds above 0 and at most
    ``MAX_TIMEOUT``: NaN, infinity or a negative one would switch the limit off."""
    import math

    if timeout is not None and (isinstance(timeout, bool) or not isinstance(
            timeout, (int, float)) or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_TIMEOUT):
        raise SettingError(f"{{timeout}} must be a number of seconds above 0, at most "
                           f"{MAX_TIMEOUT:,} (a week), got {timeout}")


def query(run, sql: str, lazy: bool = False, memory_limit: int = DEFAULT_MEMORY,
          sources: dict[str, list[Path]] | None = None, progress: bool = False,
          timeout: float | None = None) -> pd.DataFrame | duckdb.DuckDBPyRelation:
    """The answer to ``sql`` over a run (``sim.store.io.Run``: its checked parts) or over
    ``sources``: a pandas DataFrame, or with ``lazy`` the DuckDB relation (fetch it in
    pieces with ``to_arrow_reader``; its errors are then DuckDB's own). ``progress`` shows
    a line on stderr while it runs (none unless asked: a notebook's output stays clean);
    ``timeout`` stops it after that many seconds (one ``SniffError`` line)."""
    import duckdb

    check_timeout(timeout)
    if not isinstance(sql, str):  # a caller's None or bytes: one line, not AttributeError
        raise SettingError(f"{{sql}} must be the text of one SELECT statement, got "
                           f"{type(sql).__name__}")
    if sources is None:
        sources, threads = run_sources(run), threads_of(run.manifest)
    else:
        threads = os.cpu_count() or 1
    session = connect(sources, threads, memory_limit)
    if lazy:
        return relation(session, sql)
    limits = Limits(session, timeout)
    try:
        with limits, Progress(session, enabled=progress):
            return relation(session, sql).df()  # binding folds constants: bounded too
    except (duckdb.Error, MemoryError, RuntimeError) as error:  # RuntimeError: as in answer
        raise limits.error(error, session) from None
