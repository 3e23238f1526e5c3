"""``sniff simulate`` and ``sim.simulate``: many games, chunk by chunk, into a Parquet run.

What decides the games is in ``sim.run.plan`` (and ``sim.run.precision`` for a precision
target); how the run is played (its folder mode, threads, notices, scheduler) is one
``sim.run.settings.RunControl``; how chunks are played, in ``sim.run.chunks``
(``sim.cluster.dask`` on Dask); the run chunk by chunk (summary, parts, manifest), in
``sim.run.state``; the folder's files, in ``sim.store.io``. This module runs a plan: it
checks the target folder, the code a resume continues and the disk, locks the folder, opens
the executor and hands the chunks to a ``RunState``.
"""

from __future__ import annotations

from pathlib import Path

from sim.errors import SettingError, SniffError
from sim.run.chunks import LocalChunks
from sim.run.plan import Plan, resolve_plan
from sim.run.precision import cap_options
from sim.run.sequential import SequentialStop
from sim.run.settings import Mode, RunControl, mode_of, numba_threads
from sim.run.state import RunState
from sim.store.lock import LOCK_NAME, RunLock

__all__ = ["check_target", "default_folder", "execute", "plan_and_mode", "simulate"]

IN_MEMORY_LIMIT = 1_000_000
RESULTS_DIR = Path("results")


def default_folder(base: Path = RESULTS_DIR) -> Path:
    """A new numbered run folder under ``base``."""
    from sim.store.folders import new_folder

    return new_folder("run", base)


def _check_folder_path(folder: Path, run_id: str | None = None) -> None:
    from sim.store.folders import check_writable_folder

    check_writable_folder(folder, run_id)  # run_id: a tournament's pairing is let in


def check_target(plan: Plan, folder: Path | None, mode: Mode) -> dict | None:
    """Refuse a target the run may not use; return the manifest of a run to resume."""
    from sim.store import io

    if folder is None:
        if plan.games > IN_MEMORY_LIMIT:
            raise SettingError(f"{plan.games:,} games is too many to keep in memory (at most "
                               f"{IN_MEMORY_LIMIT:,}): give {{out}}, a folder, and read it "
                               "with sim.load")
        return None
    _check_folder_path(folder, plan.run_id)
    if mode == "resume":
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return io.read_manifest(folder)
    if folder.exists() and any(p.name != LOCK_NAME for p in folder.iterdir()):
        if not io.is_run_folder(folder):
            raise SettingError(f"{folder} is not empty and holds no sniff run; "
                               "choose another {out} (nothing was changed)")
        if mode != "overwrite":
            state = _describe_run(folder, io.read_manifest(folder))
            raise SettingError(f"{folder} already holds a run ({state}); "
                               "use {resume} to complete it or {overwrite} to replace it")
    return None


def _describe_run(folder: Path, manifest: dict) -> str:
    config = manifest.get("config", {})
    from sim.store.io import part_files

    chunks = len(part_files(folder, "games"))
    return f"{manifest.get('status', '?')}, {chunks} of {config.get('chunks', '?')} chunks"


def execute(plan: Plan, folder: Path | None, control: RunControl | None = None,
            sequential: SequentialStop | None = None):
    """Play the plan into ``folder`` (or into memory when None) and return a ``sim.store.io.Run``.

    ``control`` says how (``sim.run.settings.RunControl``: the folder's mode, threads,
    progress, notices, a scheduler, ...; default: a new run, notices on stderr); the plan
    says what, its stopping rules included. A
    plan with a sequential test stops after the chunk that decides it; ``sequential`` (made
    from the plan if not given) is its state, for a caller that reports it chunk by chunk
    (``sniff compare``).
    """
    control = control or RunControl()
    check_target(plan, folder, control.mode)
    if plan.sequential is not None and sequential is None:
        sequential = SequentialStop(plan)
    created = folder is not None and not folder.exists()
    lock = None if folder is None else _lock(folder, control.command)
    try:
        run = _execute(plan, folder, control, sequential)
        if folder is not None:  # its writer hashed every part it wrote or kept
            from sim.checks.verified import mark_verified

            mark_verified(folder, run.checked)
        return run
    finally:
        if lock is not None and folder is not None:  # (a lock is a folder's)
            lock.release()
            from sim.store.io import MANIFEST

            if not (folder / MANIFEST).exists():  # refused before it began: leave no trace
                (folder / LOCK_NAME).unlink(missing_ok=True)
                if created and not any(folder.iterdir()):
                    folder.rmdir()


def _lock(folder: Path, command: str) -> RunLock:
    """The folder's writer lock (``sim.store.lock``): a second writer, an overwrite or a
    resume of a live run is refused in one line naming the process."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None
    lock = RunLock(folder)
    lock.acquire(command)
    return lock


def _execute(plan: Plan, folder: Path | None, control: RunControl,
             sequential: SequentialStop | None):
    """``execute`` with the folder locked: the code check, the executor, the disk check, then
    the chunks (``RunState``); the threads, the compile notice and the executor are given
    back however it ends."""
    from sim.kernels.generate import compile_notice

    recorded = check_target(plan, folder, control.mode)  # again, under the lock
    with numba_threads(control.threads if control.scheduler is None else None), \
            compile_notice(control.notice):
        executor = None
        try:
            kernel, identity = _checked_kernel(plan, folder, recorded)
            executor = _open_executor(plan, kernel, control)
            executor.warm_up()  # load (or compile) the kernel now: games/s measures play only
            _check_space(plan, folder, control)
            state = RunState.start(plan, folder, control, recorded, (kernel, identity),
                                   executor)
            state.play(executor, sequential)
        finally:
            if executor is not None:
                executor.close()
    return state.run()


def _check_space(plan: Plan, folder: Path | None, control: RunControl) -> None:
    """Refuse a run that would not fit on its disk (unless told not to check)."""
    if folder is None or not control.check_space:
        return
    from sim.run import space as run_space
    from sim.store.io import part_files

    written = len(part_files(folder, "games")) * plan.chunk_size
    run_space.check_space(plan, folder, written)


def _checked_kernel(plan: Plan, folder: Path | None,
                    recorded: dict | None) -> tuple[str, dict]:
    """The code key of the compiled code the lineup plays (compared chunk by chunk: an edit
    during the run) and its identity, the engine's version and each strategy's behaviour
    signature (``sim.run.signature``); a resume is refused if the identity changed."""
    from sim.kernels.runner import lineup_code
    from sim.run.signature import identity_problem, lineup_identity

    kernel = lineup_code(plan.lineup)
    identity = lineup_identity(plan.lineup)
    if recorded is not None and (problem := identity_problem(recorded, identity)):
        raise SettingError(f"cannot resume {folder}: {problem}, so the remaining games would "
                           "not match; start again with {overwrite}")
    return kernel, identity


def _open_executor(plan: Plan, kernel: str, control: RunControl):
    """What plays the chunks: this machine (``LocalChunks``) or a Dask cluster."""
    if control.scheduler is None:
        return LocalChunks(plan, kernel)
    from sim.run.cluster_chunks import DaskChunks

    return DaskChunks(control.scheduler, plan, kernel, control.threads)


PLAN_OPTIONS = ("duplicate", "chunk_size", "precision", "max_games", "rounds")
CONTROL_OPTIONS = ("threads", "progress", "scheduler", "check_space")


def simulate(
    players: int | None = None,
    strategies: str | list | None = None,
    games: int | None = None,
    seed: int | None = None,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    **options,
):
    """Play games and return a ``sim.store.io.Run`` (``.games``, ``.rounds`` DataFrames,
    ``.summary``).

    Without ``out`` the tables stay in memory (at most 1,000,000 games); with ``out`` they
    are written to that run folder as ``sniff simulate --out`` does; ``resume`` completes the
    run there, ``overwrite`` replaces it. Options left as None take the defaults of ``sniff
    simulate`` (or, with ``resume=True``, the run's own). The other keywords say what to play
    (``duplicate``, ``chunk_size``, ``rounds=False``: the games table only, ``precision``:
    play until every win rate's 95% half-width is at most that, up to ``max_games`` games,
    instead of a fixed ``games``) or how (``sim.run.settings.RunControl``'s ``threads``,
    ``progress``, ``check_space`` and ``scheduler``: ``"tcp://HOST:PORT"`` or ``"local:N"``,
    the chunks on a Dask cluster, with the same tables).
    """
    unknown = sorted(set(options) - set(PLAN_OPTIONS) - set(CONTROL_OPTIONS))
    if unknown:
        raise SniffError(f"simulate() got unknown option(s) {', '.join(unknown)}; it takes "
                         f"{', '.join(PLAN_OPTIONS + CONTROL_OPTIONS)}")
    settings = {"players": players, "strategies": strategies, "games": games, "seed": seed,
                **{name: options.get(name) for name in PLAN_OPTIONS}}
    shown = {**settings, "out": out, "threads": options.get("threads"), "resume": resume,
             "overwrite": overwrite, "scheduler": options.get("scheduler")}
    call = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v not in (None, False))
    if isinstance(out, str) and not out.strip():  # Path("") is the current directory
        raise SettingError("{out} is an empty name: give a folder")
    folder = Path(out) if out is not None else None
    plan, mode = plan_and_mode(settings, folder, resume, overwrite)
    control = RunControl(mode=mode, command=f"sim.simulate({call})",
                         **{name: options[name] for name in CONTROL_OPTIONS if name in options})
    control.check()
    return execute(plan, folder, control)


def plan_and_mode(options: dict, folder: Path | None, resume: bool, overwrite: bool):
    """The plan of these options (a resume's: the recorded run's) and the folder's mode."""
    from sim.store import io

    mode = mode_of(resume, overwrite)
    options = cap_options(options, resume)
    if resume:
        if folder is None:
            raise SettingError("{resume} needs {out}, the folder of the run to complete")
        _check_folder_path(folder)
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return resolve_plan(options, io.read_manifest(folder), folder), mode
    return resolve_plan(options), mode
