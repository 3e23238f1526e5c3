"""Playing a run's chunks: the local executor, a chunk's tables and parts, stopping.

``execute`` (``sim.run.simulation``) asks an executor for the chunks it lacks, in order: here
:class:`LocalChunks`, or ``sim.run.cluster_chunks.DaskChunks`` on a Dask cluster; both hand back
:class:`PlayedChunk` objects. Ctrl-C and SIGTERM stop a run at the next batch
(:class:`StopOnInterrupt`) and surface as :class:`RunInterrupted`.
"""

from __future__ import annotations

import shlex
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.errors import Stopped
from sim.run.plan import Plan, rotation_for
from sim.run.precision import PRECISION_STEP

__all__ = ["ChunkSizes", "MissingChunks", "RunInterrupted", "StopOnInterrupt"]

if TYPE_CHECKING:  # imported where a run plays
    from concurrent.futures import ThreadPoolExecutor

BATCH_GAMES = 8192  # games per kernel call: a few MB of round rows (greedy), ~100 MB at worst
PRECISION_BATCH_SECONDS = 1.0  # a --precision run's batches: about this long, to check often


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RunInterrupted(Stopped):
    """A signal stopped a run; the finished chunks are on disk and ``--resume`` completes it."""

    def __init__(self, folder: Path | None, chunks_done: int, chunks: int, games_done: int,
                 signum: int = signal.SIGINT):
        super().__init__(signum)
        self.folder = folder
        self.chunks_done = chunks_done
        self.chunks = chunks
        self.games_done = games_done

    def hint(self, command: str = "sniff simulate") -> str:
        if self.folder is None:
            return "stopped; nothing was kept (an in-memory run)"
        return (f"stopped after {self.chunks_done} of {self.chunks} chunks "
                f"({self.games_done:,} games) in {self.folder}; complete the run with: "
                f"{command} --out {shlex.quote(str(self.folder))} --resume")


class StopOnInterrupt:
    """First Ctrl-C or SIGTERM: stop at the next safe point (between batches); a second
    signal: stop at once. SIGTERM is what ``timeout`` and batch schedulers send before
    they kill, so it keeps the finished chunks exactly as Ctrl-C does.

    ``at_once``: every signal raises ``Stopped`` where the program is (for work without
    safe points to check, such as a tuning generation; it keeps what it finished)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, notice=None, at_once: bool = False) -> None:
        self.notice = notice
        self.at_once = at_once
        self.signum: int | None = None
        self._previous: dict = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> StopOnInterrupt:
        # Only the main thread may set handlers; a signal the process ignores (SIGINT in a
        # script's background job) stays ignored: there is nothing to catch.
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.getsignal(signum)
                    signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.requested or self.at_once:
            raise Stopped(signum)
        self.signum = signum
        again = "Ctrl-C" if signum == signal.SIGINT else "the signal"
        self.notice(f"stopping: the finished chunks are kept ({again} again to stop at once)")

    def check(self) -> None:
        if self.signum is not None:  # requested
            raise Stopped(self.signum)

    def __exit__(self, *exc) -> None:
        for signum, previous in self._previous.items():
            fallback = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, previous if previous is not None else fallback)


def play_chunk(plan: Plan, run_id: str, lo: int, hi: int, batch: int, on_batch,
               enough=None) -> dict:
    """The games ``lo..hi-1`` as pyarrow tables, played ``batch`` games per kernel call.

    Each batch becomes table rows at once, so a chunk's raw engine output is never held
    whole. ``enough(lo, winner_sides)``, given for a ``--precision`` run, is asked after
    every batch whether the games so far already hold the stop; the chunk then ends there
    (the caller cuts it at the exact stop). Batches are then sized to about a second of
    play, so a slow pairing is checked often and a fast one keeps large batches; how games
    are batched never changes them.
    """
    import pyarrow as pa

    from sim.kernels.runner import play_batch, winning_side
    from sim.store import io

    labels = [spec.label for spec in plan.lineup.specs]
    parts: dict[str, list] = {name: [] for name in io.tables_for(plan.rounds)}
    sides: list[np.ndarray] = []
    size = batch if enough is None else PRECISION_STEP
    first = lo
    while first < hi:
        ids = np.arange(first, min(hi, first + size), dtype=np.int64)
        started = time.perf_counter()
        result = play_batch(
            plan.lineup, plan.seed, ids, deal_ids=ids // plan.group,
            rotations=rotation_for(ids, plan.players), round_cap=plan.round_cap,
        )
        seconds = time.perf_counter() - started
        side = winning_side(result, plan.players)
        parts["games"].append(io.games_table(result, plan.players, labels, run_id, plan.seed,
                                             side, round_points=not plan.rounds))
        if plan.rounds:
            parts["rounds"].append(io.rounds_table(result, plan.players, run_id))
        on_batch(ids.size)
        first += ids.size
        if enough is not None:
            sides.append(side)
            if enough(lo, np.concatenate(sides)):
                break
            per_second = ids.size / max(seconds, 1e-6)
            size = int(min(batch, max(PRECISION_STEP, per_second * PRECISION_BATCH_SECONDS)))
    return {name: pa.concat_tables(tables) for name, tables in parts.items()}


def batch_games(threads: int) -> int:
    """Games per kernel call: enough blocks for every thread, a bounded round buffer."""
    from sim.kernels.runner import BLOCK_SIZE

    return max(BATCH_GAMES, BLOCK_SIZE * 4 * threads)


def write_parts(folder: Path, chunk: int, lo: int, hi: int, seconds: float, tables: dict,
                 metadata: dict, exclusive: bool = False) -> dict:
    """Write a chunk's parts (atomically), with the run's and the chunk's metadata; return
    the chunk's ledger record (``sim.checks.integrity``), which ``execute`` appends in chunk
    order."""
    from sim.checks.integrity import chunk_record
    from sim.store import io

    info = {
        "index": chunk, "first_game": lo, "end_game": hi, "games": hi - lo,
        "seconds": round(seconds, 3),
        "games_per_second": round((hi - lo) / seconds, 1) if seconds > 0 else None,
        "written_at": utc_now(),
    }
    parts = io.write_chunk(folder, chunk, {
        name: io.with_metadata(table, {**metadata, "table": name, "chunk": info})
        for name, table in tables.items()
    }, exclusive)
    return chunk_record(chunk, lo, hi, metadata["run_id"], parts)


@dataclass
class PlayedChunk:
    """One played chunk, as a chunk executor hands it to ``execute`` (in chunk order)."""

    chunk: int
    tables: dict  # both tables; only the summary's columns when ``written``
    kernel: str  # the kernel it was played with (another name: the code was edited)
    written: bool = False  # its parts are already in the run folder (a Dask worker wrote them)
    record: dict | None = None  # then: their ledger record (sim.checks.integrity.chunk_record)


class LocalChunks:
    """The default executor: plays the chunks in this process, one chunk ahead.

    While ``execute`` builds the summary of chunk c and writes its Parquet parts, chunk c+1
    already plays in a worker thread (the kernel releases the GIL), so the cores that the
    writing leaves idle keep playing. A chunk counts as done only once its parts are
    written, so playing ahead never changes what an interrupted run keeps.
    """

    def __init__(self, plan: Plan, kernel: str) -> None:
        self.plan = plan
        self.kernel = kernel
        self._cancel = threading.Event()
        self._pool: ThreadPoolExecutor | None = None

    @property
    def threads(self) -> int:
        import numba

        return numba.get_num_threads()

    def describe(self) -> dict | None:
        return None  # nothing beyond the session's threads

    def warm_up(self) -> None:
        """Load (or, the first time, compile) the kernel now, so games/s measures play only."""
        from sim.kernels.runner import play_batch

        plan = self.plan
        play_batch(plan.lineup, plan.seed, np.zeros(1, dtype=np.int64), round_cap=plan.round_cap)

    def play(self, todo: list[int], bounds, run_id: str, folder: Path | None, metadata: dict,
             on_games, check, enough=None):
        """Yield a ``PlayedChunk`` per chunk of ``todo``, in order.

        ``on_games(n)`` reports progress (and raises on Ctrl-C, which then reaches the
        caller from the chunk it was playing); ``execute`` writes the parts. ``enough``
        (a ``--precision`` run, see :func:`play_chunk`) asks about the run's counts
        before the chunk, so a chunk then starts only once the one before is counted:
        no chunk plays ahead.
        """
        from concurrent.futures import ThreadPoolExecutor

        import numba

        from sim.kernels.runner import lineup_code

        batch = batch_games(self.threads)
        threads = numba.get_num_threads()  # numba's thread count is per calling thread

        def on_batch(games: int) -> None:
            if self._cancel.is_set():
                raise KeyboardInterrupt
            on_games(games)

        def play_one(chunk: int, kernel: str) -> PlayedChunk:
            numba.set_num_threads(threads)
            lo, hi = bounds(chunk)
            tables = play_chunk(self.plan, run_id, lo, hi, batch, on_batch, enough)
            return PlayedChunk(chunk, tables, kernel)

        def start(chunk: int):
            # play_batch picks its kernel by hashing the source files on every call: an edit
            # to sim/ or strategies/ during the run would switch code mid-run. The kernel a
            # chunk starts with goes with it, for execute to compare with the run's.
            kernel = lineup_code(self.plan.lineup)
            return pool.submit(play_one, chunk, kernel)

        self._cancel.clear()
        pool = self._pool = ThreadPoolExecutor(1, thread_name_prefix="sniff-play")
        try:
            chunks = iter(todo)
            following = next(chunks, None)
            pending = None if following is None else start(following)
            ahead = enough is None  # a --precision chunk needs the count of the one before
            while pending is not None:
                played = pending.result()
                following = next(chunks, None)
                pending = start(following) if ahead and following is not None else None
                yield played
                if not ahead and following is not None:
                    pending = start(following)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the chunk playing ahead (at its next batch) and wait for its thread."""
        if self._pool is not None:
            self._cancel.set()
            self._pool.shutdown(wait=True)
            self._pool = None


class ChunkSizes(Sequence):
    """Games of each chunk of a run, computed on demand: memory must not grow with the
    number of chunks (a list of them was one Python object per chunk)."""

    def __init__(self, total: int, chunk_size: int) -> None:
        self.total = total
        self.chunk_size = chunk_size

    def __len__(self) -> int:
        return -(-self.total // self.chunk_size)

    def __getitem__(self, chunk):
        if not 0 <= chunk < len(self):
            raise IndexError(chunk)
        return min(self.total, (chunk + 1) * self.chunk_size) - chunk * self.chunk_size


class MissingChunks:
    """The chunks ``0..n_chunks-1`` not in ``done``, in order; iterable again and again,
    never materialised."""

    def __init__(self, n_chunks: int, done: set[int]) -> None:
        self.n_chunks = n_chunks
        self.done = done

    def __iter__(self) -> Iterator[int]:
        return (chunk for chunk in range(self.n_chunks) if chunk not in self.done)
