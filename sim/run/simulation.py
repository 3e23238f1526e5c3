"""``sniff simulate`` and ``sim.simulate``: many games, chunk by chunk, into a Parquet run.

What decides the games is in ``sim.run.plan`` (and ``sim.run.precision`` for ``--precision``);
how chunks are played, in ``sim.run.chunks`` (``sim.run.cluster`` on Dask); the summary, in
``sim.store.summary``; the folder's files, in ``sim.store.io``. This module runs a plan: it
checks the target folder and the disk, writes the manifest and each chunk's parts, and keeps the
summary as the chunks come.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import numpy as np

from sim.errors import SniffError
from sim.run.chunks import (
    ChunkSizes,
    LocalChunks,
    MissingChunks,
    RunInterrupted,
    StopOnInterrupt,
    utc_now,
    write_parts,
)
from sim.run.plan import Plan, recorded_kernel_strategies, resolve_plan
from sim.run.precision import (
    cap_options,
    precision_stop,
    stop_record,
    stopped_games,
    truncate_chunk,
    widest_half_width,
)
from sim.run.sequential import SequentialStop
from sim.run.session import Session, new_manifest, prepare_folder, write_error
from sim.store.arrow import to_numpy
from sim.store.lock import LOCK_NAME, RunLock
from sim.store.summary import Summary

IN_MEMORY_LIMIT = 1_000_000
RESULTS_DIR = Path("results")


def default_folder(base: Path = RESULTS_DIR) -> Path:
    from sim.store.folders import new_folder

    return new_folder("run", base)


def _check_folder_path(folder: Path) -> None:
    from sim.store.folders import check_writable_folder

    check_writable_folder(folder)


def check_target(plan: Plan, folder: Path | None, mode: str) -> dict | None:
    """Refuse a target the run may not use; return the manifest of a run to resume."""
    from sim.store import io

    if folder is None:
        if plan.games > IN_MEMORY_LIMIT:
            raise SniffError(f"{plan.games:,} games is too many to keep in memory (at most "
                             f"{IN_MEMORY_LIMIT:,}): give out= a folder and read it with sim.load")
        return None
    _check_folder_path(folder)
    if mode == "resume":
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return io.read_manifest(folder)
    if folder.exists() and any(p.name != LOCK_NAME for p in folder.iterdir()):
        if not io.is_run_folder(folder):
            raise SniffError(f"{folder} is not empty and holds no sniff run; "
                             "choose another --out (nothing was changed)")
        if mode != "overwrite":
            state = _describe_run(folder, io.read_manifest(folder))
            raise SniffError(f"{folder} already holds a run ({state}); "
                             "use --resume to complete it or --overwrite to replace it")
    return None


def _describe_run(folder: Path, manifest: dict) -> str:
    config = manifest.get("config", {})
    from sim.store.io import part_files

    chunks = len(part_files(folder, "games"))
    return f"{manifest.get('status', '?')}, {chunks} of {config.get('chunks', '?')} chunks"


def check_threads(threads: int | None) -> None:
    import numba

    if threads is None:
        return
    maximum = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= maximum:
        raise SniffError(f"--threads must be from 1 to {maximum} (this machine's cores), "
                         f"got {threads}")


def _set_threads(threads: int | None) -> int | None:
    import numba

    if threads is None:
        return None
    check_threads(threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    return previous


def stderr_notice(message: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"sniff: {message}", file=sys.stderr)


def execute(
    plan: Plan,
    folder: Path | None,
    *,
    mode: str = "new",
    threads: int | None = None,
    progress: bool = False,
    command: str = "",
    on_chunk=None,
    notice=stderr_notice,
    alert=None,
    announce=None,
    kernel_strategies=(),
    scheduler: str | None = None,
    check_space: bool = True,
    sequential: SequentialStop | None = None,
):
    """Play the plan into ``folder`` (or into memory when None) and return a ``sim.store.io.Run``.

    ``mode``: ``"new"`` (the folder must be absent or empty), ``"overwrite"`` (replace a
    previous run there) or ``"resume"`` (play only the missing chunks of the run there).
    ``progress`` shows a progress bar on stderr. ``on_chunk(chunk)`` is called after each
    chunk is written (tests use it to interrupt); ``announce()`` once the folder is ready.
    ``kernel_strategies`` (``strategies.Strategy`` objects) are compiled into the kernel
    too, so that many runs (a tournament's pairings) share one kernel; they are named in
    the manifest, so a resume loads the same kernel. ``scheduler`` (``tcp://HOST:PORT`` or
    ``local:N``, or an open ``sim.run.cluster.DaskCluster`` that several runs share) plays
    the chunks as tasks on a Dask cluster (``sim.run.cluster_chunks``), with the same
    tables; ``threads`` is then the numba threads of each task. ``check_space`` refuses a
    run whose estimated size exceeds the free disk space (``--ignore-disk-space`` skips it).
    ``alert`` (default ``notice``) gets the lines a resume must say even when notices are
    off: a bad part it set aside, and where. A plan with a sequential test stops after the
    chunk that decides it; ``sequential`` (made from the plan if not given) is its state,
    for a caller that reports it chunk by chunk (``sniff compare``).
    """
    check_target(plan, folder, mode)
    if plan.sequential is not None and sequential is None:
        sequential = SequentialStop(plan)
    created = folder is not None and not folder.exists()
    lock = None if folder is None else _lock(folder, command)
    try:
        run = _execute(plan, folder, mode=mode, threads=threads, progress=progress,
                       command=command, on_chunk=on_chunk, notice=notice, alert=alert,
                       announce=announce, kernel_strategies=kernel_strategies,
                       scheduler=scheduler, check_space=check_space,
                       sequential=sequential)
        if folder is not None:  # its writer hashed every part it wrote or kept (#51)
            from sim.store.verified import mark_verified

            mark_verified(folder, run.checked)
        return run
    finally:
        if lock is not None:
            lock.release()
            from sim.store.io import MANIFEST

            if not (folder / MANIFEST).exists():  # refused before it began: leave no trace
                (folder / LOCK_NAME).unlink(missing_ok=True)
                if created and not any(folder.iterdir()):
                    folder.rmdir()


def _lock(folder: Path, command: str) -> RunLock:
    """The folder's writer lock (``sim.store.lock``): a second writer, an ``--overwrite`` or a
    ``--resume`` of a live run is refused in one line naming the process."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None
    lock = RunLock(folder)
    lock.acquire(command)
    return lock


def _execute(plan: Plan, folder: Path | None, *, mode: str, threads, progress, command,
             on_chunk, notice, alert, announce, kernel_strategies, scheduler, check_space,
             sequential=None):
    """``execute`` with the folder locked."""
    import pyarrow as pa
    from tqdm import tqdm

    from sim.kernels.generate import same_code
    from sim.kernels.runner import lineup_code, lineup_strategies
    from sim.run import space as run_space
    from sim.store import io
    from sim.store.integrity import append_record

    recorded = check_target(plan, folder, mode)  # again, under the lock
    if recorded is not None and not kernel_strategies:
        kernel_strategies = recorded_kernel_strategies(recorded)
    previous_threads = _set_threads(threads if scheduler is None else None)
    executor = None
    try:
        kernel = lineup_code(plan.lineup, kernel_strategies)
        if recorded is not None and not same_code(recorded.get("kernel"), kernel,
                                                  lineup_strategies(plan.lineup)):
            raise SniffError(
                f"cannot resume {folder}: the simulator's code changed since the run started "
                f"(kernel {recorded.get('kernel')}, now {kernel}), so the remaining games would "
                "not match; start again with --overwrite"
            )
        if recorded is not None:
            recorded["kernel"] = kernel  # a digest from before a rewrite (sim.kernels.rewrites)
        if scheduler is None:
            executor = LocalChunks(plan, kernel, kernel_strategies)
        else:
            from sim.run.cluster_chunks import DaskChunks

            executor = DaskChunks(scheduler, plan, kernel, kernel_strategies, threads)
        executor.warm_up()  # load (or compile) the kernel now: games/s measures play only
        if folder is not None and check_space:
            written = len(io.part_files(folder, "games")) * plan.chunk_size
            run_space.check_space(plan, folder, written, kernel_strategies)
        session = Session(command, threads=executor.threads, cluster=executor.describe())
        run_id = plan.run_id
        manifest = recorded or new_manifest(plan, run_id, kernel, session)
        if kernel_strategies:
            manifest["kernel_strategies"] = [
                {"name": s.name, "module": s.module} for s in kernel_strategies]
        # A run that stopped for --precision ends inside its last chunk: its games are the
        # prefix 0..stopped-1 (a resume of it plays nothing).
        total = stopped_games(recorded) or plan.games
        n_chunks = -(-total // plan.chunk_size)

        def chunk_bounds(chunk: int) -> tuple[int, int]:
            return chunk * plan.chunk_size, min(total, (chunk + 1) * plan.chunk_size)

        stopped: dict | None = None
        chunk_games = ChunkSizes(total, plan.chunk_size)
        done = set() if folder is None else prepare_folder(
            folder, mode, manifest, notice, alert or notice)
        if announce is not None:
            announce()

        summary = Summary(plan.players, plan.labels, plan.group, plan.round_cap)
        tables_kept = io.tables_for(plan.rounds)
        memory: dict[str, list] = {name: [] for name in tables_kept}
        metadata = {
            "format": io.FORMAT, "run_id": run_id, "version": manifest["version"],
            "kernel": kernel, "command": command, "config": plan.config(),
            "session_started_at": session.started_at,
        }
        done_games = sum(chunk_games[c] for c in done)
        chunks_done = len(done)
        status = "failed"
        stop = None
        try:
            with StopOnInterrupt(notice) as stop, tqdm(
                total=plan.games, initial=done_games, unit=" games", unit_scale=True,
                disable=not progress, file=sys.stderr, dynamic_ncols=True, smoothing=0.1,
            ) as bar:

                def on_batch(games: int) -> None:
                    bar.update(games)
                    stop.check()

                def enough(lo: int, winner_side: np.ndarray) -> bool:
                    # Asked between batches of chunk lo's games, once every chunk before
                    # it is in the summary.
                    assert summary.games == lo, (summary.games, lo)
                    return precision_stop(summary.wins, summary.games, winner_side,
                                          plan.precision) is not None

                played = executor.play(MissingChunks(n_chunks, done), chunk_bounds, run_id,
                                       folder, metadata, on_batch, stop.check,
                                       enough if plan.precision is not None else None)
                for chunk in range(n_chunks):
                    if chunk in done:  # resumed: its parts are there, read them for the summary
                        parts = io.summary_part(folder, io.part_name(chunk), manifest["config"])
                        summary.add_tables(*parts)
                        if sequential is not None:
                            sequential.add(parts[0])
                        continue
                    lo, hi = chunk_bounds(chunk)
                    started = time.perf_counter()
                    result = next(played)  # this chunk: played here, or on a Dask worker
                    tables = result.tables
                    # An edit to sim/ or strategies/ during the run switches the kernel.
                    if result.kernel != kernel:
                        kept = "run it again" if folder is None else (
                            f"the {chunks_done} finished chunk(s) in {folder} are kept, but "
                            "only a new run (--overwrite) can give a consistent dataset")
                        raise SniffError(
                            "the simulator's code (sim/ or strategies/) changed while the run "
                            f"was playing, so chunk {chunk} on would not match the first; {kept}"
                        )
                    if plan.precision is not None:
                        stop_at = precision_stop(
                            summary.wins, summary.games,
                            to_numpy(tables["games"]["winner_side"]),
                            plan.precision)
                        if stop_at is not None:
                            hi = stop_at[0]
                            tables = truncate_chunk(tables, hi)
                            stopped = stop_record(plan, "precision", hi, chunk + 1, stop_at[1])
                    if folder is None:
                        for name in tables_kept:
                            memory[name].append(tables[name])
                    else:
                        record = result.record if result.written else write_parts(
                            folder, chunk, lo, hi, time.perf_counter() - started, tables,
                            metadata)
                        # The chunk is finished here: its parts are in place and vouched for.
                        append_record(folder, record)
                        if check_space and session.played == 0:
                            run_space.check_measured_space(plan, folder, record,
                                                  total - done_games - (hi - lo))
                    session.played += hi - lo
                    session.seconds += time.perf_counter() - started
                    chunks_done += 1
                    summary.add_tables(*(tables[name] for name in tables_kept))
                    if sequential is not None:
                        sequential.add(tables["games"])
                        bar.set_postfix_str(f"LLR {sequential.llr:+.2f}")
                        if sequential.decision is not None:
                            stopped = sequential.stop_record("sprt", chunk + 1)
                    if plan.precision is not None:
                        bar.set_postfix_str(f"widest half-width {widest_half_width(summary):.2%}"
                                            f" (target {plan.precision:.2%})")
                    if on_chunk is not None:
                        on_chunk(chunk)
                    if stopped is not None:
                        break
                    stop.check()
            status = "complete"
        except KeyboardInterrupt as error:
            status = "interrupted"
            # The signal that asked for the stop, whichever thread's exception carried it.
            signum = (stop.signum if stop is not None else None) or getattr(
                error, "signum", signal.SIGINT)
            raise RunInterrupted(folder, chunks_done, n_chunks, done_games + session.played,
                                 signum) from None
        except OSError as error:
            if folder is None:
                raise
            raise write_error(error, folder, chunks_done) from None
        finally:
            manifest["sessions"].append(session.record(status))
            manifest["status"] = status
            if status == "complete" and plan.precision is not None:
                manifest["stopped"] = stopped or manifest.get("stopped") or stop_record(
                    plan, "max_games", summary.games, n_chunks, widest_half_width(summary))
                summary.stopped = manifest["stopped"]
            elif status == "complete" and sequential is not None:
                manifest["stopped"] = stopped or manifest.get("stopped") or (
                    sequential.stop_record("max_games", n_chunks))
                summary.stopped = manifest["stopped"]
            if status == "complete":
                summary.timing = {"played": session.played, "seconds": session.seconds,
                                  "threads": session.threads,
                                  "workers": len((session.cluster or {}).get("workers", []))}
                summary.folder = folder
                summary.tables = tables_kept
                manifest["finished_at"] = utc_now()
                played = sum(s["games_played"] for s in manifest["sessions"])
                seconds = sum(s["seconds"] for s in manifest["sessions"])
                manifest["games_per_second"] = round(played / seconds, 1) if seconds else None
                manifest["summary"] = summary.to_dict()
            if folder is not None:
                try:
                    if status == "complete":
                        io.remove_temporaries(folder)
                    io.write_json(folder / io.MANIFEST, manifest)
                except OSError:
                    if status == "complete":
                        raise
    finally:
        if executor is not None:
            executor.close()
        if previous_threads is not None:
            import numba

            numba.set_num_threads(previous_threads)

    if folder is None:
        tables = {name: pa.concat_tables(memory[name]) for name in tables_kept}
        return io.Run(None, manifest, tables, summary=summary)
    return io.Run(folder, manifest, summary=summary)


def simulate(
    players: int | None = None,
    strategies: str | list | None = None,
    games: int | None = None,
    seed: int | None = None,
    *,
    duplicate: bool | None = None,
    out: str | Path | None = None,
    chunk_size: int | None = None,
    threads: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    precision: float | None = None,
    max_games: int | None = None,
    scheduler: str | None = None,
    check_space: bool = True,
    rounds: bool | None = None,
):
    """Play games and return a ``sim.store.io.Run`` (``.games``, ``.rounds`` DataFrames,
    ``.summary``).

    Without ``out`` the tables stay in memory (at most 1,000,000 games); with ``out`` they
    are written to that run folder as ``sniff simulate --out`` does. Options left as None
    take the defaults of ``sniff simulate`` (or, with ``resume=True``, the run's own).
    ``precision`` plays until every win rate's 95% half-width is at most that, up to
    ``max_games`` games (instead of a fixed ``games``). ``scheduler`` (``"tcp://HOST:PORT"``
    or ``"local:N"``) plays the chunks on a Dask cluster, with the same tables.
    ``rounds=False`` keeps the games table only (``--no-rounds``).
    """
    options = {"players": players, "strategies": strategies, "games": games, "seed": seed,
               "duplicate": duplicate, "chunk_size": chunk_size, "precision": precision,
               "max_games": max_games, "rounds": rounds}
    call = ", ".join(f"{k}={v!r}" for k, v in {**options, "out": out, "threads": threads,
                                                 "resume": resume, "overwrite": overwrite,
                                                 "scheduler": scheduler}.items()
                     if v not in (None, False))
    if isinstance(out, str) and not out.strip():  # Path("") is the current directory
        raise SniffError("out= is an empty name: give a folder")
    folder = Path(out) if out is not None else None
    plan, mode = plan_and_mode(options, folder, resume, overwrite)
    check_scheduler_and_threads(scheduler, threads)
    return execute(plan, folder, mode=mode, threads=threads, progress=progress,
                   command=f"sim.simulate({call})", scheduler=scheduler,
                   check_space=check_space)


def check_scheduler_and_threads(scheduler: str | None, threads: int | None) -> None:
    """Refuse a bad ``--scheduler`` (or a missing Dask) before anything is created."""
    if scheduler is None:
        check_threads(threads)
        return
    from sim.run.cluster import check_scheduler, check_threads_option

    check_scheduler(scheduler)
    check_threads_option(threads)


def plan_and_mode(options: dict, folder: Path | None, resume: bool, overwrite: bool):
    from sim.store import io

    if resume and overwrite:
        raise SniffError("--resume and --overwrite exclude each other")
    options = cap_options(options, resume)
    if resume:
        if folder is None:
            raise SniffError("--resume needs --out, the folder of the run to complete")
        _check_folder_path(folder)
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return resolve_plan(options, io.read_manifest(folder), folder), "resume"
    return resolve_plan(options), "overwrite" if overwrite else "new"
