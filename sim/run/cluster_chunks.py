"""A run's chunks as tasks on a Dask cluster (``sim.cluster.dask``): ``simulate``,
``tournament`` and ``compare`` with ``--scheduler``.

A task is (the run's plan, one chunk): the worker plays the chunk's games in its own
compiled kernel and writes the chunk's two parts into the run folder itself, through the
same atomic write as a local run (a uniquely named temporary file in ``NAME/.partial/``,
renamed to the fixed part name). A game depends only on (seed, game id), so a part's
content does not depend on which worker played it, how often, or in which order: a task
that Dask runs again after its worker was lost rewrites the same part with the same rows
(only the timing in its metadata differs), and the dataset never holds a chunk twice.
The task hands back only the columns the summary needs; ``sim.run.simulation.execute`` takes
the chunks in chunk order from ``DaskChunks.play`` (as from the local executor) for the
progress bar, the summary and the manifest, so they are the same as a local run's.

A run that decides where to stop in game order (``--precision``, and ``compare``'s
sequential test) has its workers hand the played tables back and ``execute`` writes them,
as locally: chunks played past the stop are dropped, never written, so the folder holds
what a local run's holds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.cluster.dask import DaskCluster, worker_report, worker_threads
from sim.errors import SettingError

__all__ = ["ChunkJob", "DaskChunks", "play_chunk_task"]


@dataclass(frozen=True)
class ChunkJob:
    """What a task needs besides its chunk: small, pickled with every task.

    Attributes:
        config: plan.config(): the plan is rebuilt from it on the worker.
        kernel: the kernel name the run was started with (same code everywhere).
        run_id: the run's id, recorded in every part.
        folder: absolute run folder; None: hand the tables back (in-memory run).
        metadata: the parts' run metadata (sim.run.simulation.execute).
        write: the worker writes the parts (not for a run that stops in game order).
        threads_by_host: host -> numba threads per task (cores / Dask threads there).
        threads: --threads: numba threads per task, instead of the above.
    """

    config: dict  # Plan.config(): the plan is rebuilt from it on the worker
    kernel: str  # the kernel name the run was started with (same code everywhere)
    run_id: str
    folder: str | None  # absolute run folder; None: hand the tables back (in-memory run)
    metadata: dict | None  # the parts' run metadata (sim.run.simulation.execute)
    write: bool  # the worker writes the parts (not for a run that stops in game order)
    threads_by_host: dict  # host -> numba threads per task (cores / Dask threads there)
    threads: int | None  # --threads: numba threads per task, instead of the above


_plans: dict = {}  # per worker process: the plan of a job, built once


def _job_plan(job: ChunkJob):
    key = (job.run_id, job.kernel)
    if key not in _plans:
        from sim.run.plan import Plan

        # the job comes from the user's own client (not a folder): import its plugins
        _plans[key] = Plan.from_config(job.config, import_plugins=True)
    return _plans[key]


def warm_up_task(job: ChunkJob) -> dict:
    """Load (or compile) the kernel on this worker; report what it runs with."""
    from sim.kernels.runner import lineup_code, play_batch

    plan = _job_plan(job)

    def load() -> None:
        play_batch(plan.lineup, plan.seed, np.zeros(1, dtype=np.int64),
                   round_cap=plan.round_cap)

    return worker_report(lineup_code(plan.lineup), job.threads_by_host,
                         job.threads, load)


def play_chunk_task(job: ChunkJob, chunk: int, lo: int, hi: int):
    """Play games ``lo..hi-1``; write the chunk's parts (when ``job.write``); report back."""
    from sim.kernels.runner import lineup_code
    from sim.run.chunks import PlayedChunk, batch_games, play_chunk, write_parts
    from sim.store.summary import summary_columns

    started = time.perf_counter()
    threads, address, _ = worker_threads(job.threads_by_host, job.threads)
    plan = _job_plan(job)
    folder = None if job.folder is None else Path(job.folder)  # given whenever job.write
    if job.write and folder is not None and not (folder / "games").is_dir():
        raise SettingError(
            f"the Dask worker {address} cannot see the run folder {job.folder}: on a cluster "
            "of several machines, {out} must be on storage that every machine mounts at the "
            "same path")
    tables = play_chunk(plan, job.run_id, lo, hi, batch_games(threads), lambda games: None)
    kernel = lineup_code(plan.lineup)
    if kernel != job.kernel:  # edited while playing: write nothing, execute says so
        return PlayedChunk(chunk, {}, kernel)
    if not job.write:
        return PlayedChunk(chunk, tables, kernel)
    assert folder is not None and job.metadata is not None  # a job that writes names both
    record = write_parts(folder, chunk, lo, hi, time.perf_counter() - started,
                         tables, job.metadata, exclusive=True)
    columns = summary_columns(plan.players, plan.rounds)
    return PlayedChunk(chunk, {name: tables[name].select(columns[name]) for name in columns},
                       kernel, written=True, record=record)


class DaskChunks:
    """The Dask executor of ``sim.run.simulation.execute`` (see ``sim.run.chunks.LocalChunks``).

    ``scheduler``: an address or ``local:N`` (a cluster of its own, closed with it), or an
    open :class:`DaskCluster` that a command shares between its runs (left open).
    """

    def __init__(self, scheduler: str | DaskCluster, plan, kernel: str,
                 threads: int | None = None) -> None:
        self.owned = not isinstance(scheduler, DaskCluster)
        self.cluster = scheduler if isinstance(scheduler, DaskCluster) else DaskCluster(
            scheduler, threads)
        self.plan = plan
        self.kernel = kernel
        self.threads_option = threads if self.owned else self.cluster.threads_option

    @property
    def threads(self) -> int:
        return self.cluster.threads

    @property
    def workers(self) -> list[dict]:
        return self.cluster.workers

    def describe(self) -> dict:
        return self.cluster.describe()

    def _job(self, run_id: str, folder: Path | None, metadata: dict | None) -> ChunkJob:
        plan = self.plan
        return ChunkJob(
            config=plan.config(), kernel=self.kernel, run_id=run_id,
            folder=None if folder is None else str(Path(folder).resolve()), metadata=metadata,
            write=folder is not None and plan.precision is None and plan.sequential is None,
            threads_by_host=dict(self.cluster.threads_by_host), threads=self.threads_option,
        )

    def warm_up(self) -> None:
        """Load the kernel on every worker (``DaskCluster.warm_up``)."""
        self.cluster.warm_up(warm_up_task, lambda: self._job(self.plan.run_id, None, None),
                             self.kernel)

    def play(self, todo: list[int], bounds, run_id: str, folder: Path | None, metadata: dict,
             on_games, check, enough=None):
        """Yield a ``PlayedChunk`` per chunk of ``todo``, in chunk order.

        Reports each chunk's games to ``on_games`` as it completes (in any order) and
        calls ``check`` (Ctrl-C) at least every ``POLL_SECONDS`` while waiting. ``enough``
        is not asked: a worker plays its chunk whole, and ``execute`` cuts the run at the
        stop.
        """
        job = self._job(run_id, folder, metadata)

        def done(chunk: int) -> None:
            lo, hi = bounds(chunk)
            on_games(hi - lo)

        yield from self.cluster.ordered(
            todo, play_chunk_task, lambda chunk: (job, chunk, *bounds(chunk)), check, done,
            name="chunk")

    def close(self) -> None:
        """Cancel what is still queued; let go of a cluster of its own (a local one stops)."""
        if self.owned:
            self.cluster.close()
        else:
            self.cluster.cancel()
