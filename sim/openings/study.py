"""``sniff openings``: the value of every opening tile, measured with common random numbers.

The entry points: :func:`run_openings` (measure, and write the output folder when given
one), :func:`measure_openings` (the same for a config, chunk by chunk in bounded memory:
what the command runs), :func:`trace_opening_game` (any game of a run, traced again). The
measurement and its design are in ``sim.openings.play``; the figures, from sums kept per
chunk, in ``sim.openings.tally``; what is written and shown, in ``sim.openings.output``;
the folder on disk (games in parts, the record, ``table_files``) in
``sim.openings.folder``. Their public names are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sim.core.tiles import TILE_NAMES
from sim.errors import SettingError, SniffError
from sim.kernels.runner import ROUND_CAP, trace_events
from sim.openings.folder import GAMES_DIR, LEDGER, STUDY, clear_outputs
from sim.openings.output import (
    openings_section,
    write_results,
)
from sim.openings.play import (
    CHUNK_DEALS,
    DEFAULT_DEALS,
    DEFAULT_STRATEGIES,
    PART_DEALS,
    SLOTS_PER_DEAL,
    UNFORCED_SLOT,
    OpeningsConfig,
    deal_table,
    iter_openings,
    leader_lineup,
    make_config,
)
from sim.openings.tally import OpeningsTally
from sim.run.settings import RunControl, numba_threads
from sim.store.folders import remove_unstarted
from sim.store.lock import RunLock

RESULTS_DIR = Path("results")


# --- the run: library entry point


def default_folder(base: Path = RESULTS_DIR) -> Path:
    """A new numbered openings folder under ``base``."""
    from sim.store.folders import new_folder

    return new_folder("openings", base)


def check_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a file, or a folder with anything in it unless ``overwrite``."""
    from sim.files import refuse_links
    from sim.openings.folder import OWN_NAMES, is_openings_file
    from sim.store.folders import check_folder_path

    check_folder_path(folder)
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise SettingError(f"{folder} is not empty; use {{overwrite}} to replace the "
                           "openings files in it")
    if folder.is_dir():  # before anything is looked at through a link, or removed
        refuse_links(folder, OWN_NAMES, "an openings folder")
    foreign = sorted((path.name for path in folder.iterdir() if not is_openings_file(path)),
                     key=lambda name: (name.startswith("."), name)) \
        if folder.is_dir() else []
    if foreign:  # --overwrite replaces an openings folder, never another kind
        raise SettingError(f"{folder} holds {foreign[0]}, which no openings run writes: "
                           "{overwrite} replaces only an openings folder; choose another "
                           "{out}")


def run_openings(
    players: int = 4,
    strategies: str | Sequence[str] = DEFAULT_STRATEGIES,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    out: Path | str | None = None,
    overwrite: bool = False,
    round_cap: int = ROUND_CAP,
    progress: Callable[[int], None] | None = None,
    command: str = "",
) -> pd.DataFrame:
    """Measure every opening tile; the per-tile table (``openings.parquet``'s rows).

    The table's ``attrs`` hold ``summary`` (the figures that are not per tile) and ``games``
    is not kept: call ``play_openings`` and ``summarise_openings`` for the per-game rows, or
    give ``out`` to write every output file.
    """
    config = make_config(players, strategies, deals, seed, round_cap)
    folder = None if out is None else Path(out)
    if folder is not None:
        check_folder(folder, overwrite)
    table, _ = measure_openings(config, folder, progress, RunControl(command=command))
    return table


def measure_openings(
    config: OpeningsConfig,
    folder: Path | None = None,
    progress: Callable[[int], None] | None = None,
    control: RunControl | None = None,
    *,
    between_chunks: Callable[[], None] | None = None,
    chunk_deals: int = CHUNK_DEALS,
    part_deals: int = PART_DEALS,
) -> tuple[pd.DataFrame, dict]:
    """Play the run chunk by chunk in bounded memory; the per-tile table and the summary.

    Each chunk's games go into an :class:`OpeningsTally` (the sums every figure needs) and,
    with ``folder``, into the games parts; then they are dropped, so memory does not grow
    with ``--deals``. With a folder the study is played part by part and each finished
    part recorded (``sim.openings.parts``). ``control`` (``sim.run.settings.RunControl``)
    says how: mode ``"resume"`` completes a study stopped there (``config`` then from
    :func:`resume_config`; ``alert`` says which bad part it set aside), to the tables of an
    uninterrupted one; ``scheduler`` (``tcp://HOST:PORT``, ``local:N`` or an open
    ``sim.cluster.dask.DaskCluster``) plays the parts on Dask, with ``threads`` numba threads
    per task (locally, ``threads`` are numba's threads while it plays); ``command`` is
    recorded. The results are written at the end
    (``summary.json`` last); a new study first clears a previous run's openings files from
    a folder already checked by ``check_folder``. ``progress(deals_done)`` follows each
    chunk (each part on Dask), and ``between_chunks()`` before the next (where a requested
    stop raises: the finished parts stay, without ``summary.json``, so no reader takes the
    folder for a result, and ``resume`` completes it). The figures do not depend on
    ``chunk_deals``, on the cluster, nor the parts on either.
    """
    control = control or RunControl()
    with numba_threads(control.threads if control.scheduler is None else None):
        return _measure(config, folder, progress, control, between_chunks, chunk_deals,
                        part_deals)


def _measure(config: OpeningsConfig, folder: Path | None, progress, control: RunControl,
             between_chunks, chunk_deals: int, part_deals: int) -> tuple[pd.DataFrame, dict]:
    """``measure_openings`` with its threads set."""
    from sim.openings.parts import PartsRun, finish_study, kernel_of, play_parts, start_study
    from sim.run.signature import lineup_identity

    resume, scheduler, command = control.mode == "resume", control.scheduler, control.command
    tally = OpeningsTally()
    if folder is None:
        if scheduler is not None or resume:
            raise SettingError("{scheduler} and {resume} need an output folder")
        for _, hi, games in iter_openings(config, chunk_deals, part_deals):
            tally.add(games)
            del games
            if progress is not None:
                progress(hi)
            if between_chunks is not None and hi < config.deals:
                between_chunks()
        return tally.table(config)
    identity = lineup_identity(config.lineup)  # before the folder: a player that raises
    lock = cluster = None                      # here leaves nothing behind
    existed = folder.exists()
    started = unplayed = False  # started: this call wrote a new study.json
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = RunLock(folder)  # one writer: a second run into the folder is one line
        lock.acquire(command or "sniff openings")
        kernel = kernel_of(config)
        if resume:
            study = _resumable(folder, config, identity)
            part_deals, command = int(study["part_deals"]), study.get("command", command)
        else:
            clear_outputs(folder)
            start_study(folder, config, part_deals, identity, command)
            started = True
        if isinstance(scheduler, str):
            from sim.cluster.dask import DaskCluster

            cluster = scheduler = DaskCluster(scheduler, control.threads)
        run = PartsRun(folder, config, command, chunk_deals, part_deals, kernel)
        records = play_parts(run, tally, resume, scheduler=scheduler, progress=progress,
                             between_chunks=between_chunks, alert=control.alert)
        table, summary = tally.table(config)
        write_results(folder, config, table, summary, tally.pairs(), records, command)
        finish_study(folder)
    except SniffError:  # a new study refused before its first part: nothing is left
        unplayed = started and not any((folder / GAMES_DIR).glob("*.parquet"))
        raise
    finally:
        if cluster is not None:
            cluster.close()
        if lock is not None:
            lock.release()
        if unplayed:
            remove_unstarted(folder, (STUDY, LEDGER, GAMES_DIR), created=not existed)
    return table, summary


def resume_config(folder: Path, given: dict | None = None) -> OpeningsConfig:
    """The config of the study under way in ``folder`` (``study.json``); ``given`` options
    (None: left out) must match it."""
    from sim.openings.parts import config_of, read_study

    study = read_study(Path(folder))
    config = config_of(study["config"])
    recorded = {"players": config.players, "deals": config.deals, "seed": config.seed}
    differ = [name for name, value in (given or {}).items()
              if value is not None and name in recorded and value != recorded[name]]
    if given and given.get("strategies") is not None and leader_lineup(
            config.players, given["strategies"]).seats != config.lineup.seats:
        differ.append("strategies")
    if differ:
        raise SniffError(f"cannot resume {folder}: it was started with other "
                         f"{', '.join(differ)}; leave them out (or give the recorded values)")
    return config


def _resumable(folder: Path, config: OpeningsConfig, identity: dict) -> dict:
    """``study.json`` of the study to resume, if it plays ``config`` as this code plays it
    (``identity``: ``sim.run.signature.lineup_identity``)."""
    from sim.openings.parts import config_of, kept_parts_match, read_study
    from sim.run.signature import identity_problem

    study = read_study(folder)
    if config_of(study["config"]).to_dict() != config.to_dict():
        raise SniffError(f"cannot resume {folder}: it holds a study of another configuration")
    if problem := identity_problem(study, identity):
        kept_parts_match(folder, config)  # an edited study.json is said as such, first
        raise SettingError(f"cannot resume {folder}: {problem}, so the remaining games would "
                           "not match; start again with {overwrite}")
    return study


# --- traces: any recorded game, played again by the engine with every event


def trace_opening_game(config: OpeningsConfig, game_id: int) -> list[dict]:
    """The trace events of one game of an openings run (same deal, seats and forced lead).

    ``sim.kernels.trace.game_events`` plays a game on the deal id equal to its game id and without
    rotation; an openings game has deal id ``game_id // 29``, a rotation and a forced lead.
    """
    from sim.kernels.trace import EventDecoder, start_event

    deal, slot = divmod(int(game_id), SLOTS_PER_DEAL)
    forced = slot if slot < UNFORCED_SLOT else -1
    leaders, _ = deal_table(config, np.array([deal]))
    rotation = int((-leaders[0]) % config.players)
    rows, _ = trace_events(config.lineup, config.seed, int(game_id), config.round_cap, forced,
                           deal_id=deal, rotation=rotation)
    start = start_event(config.lineup, config.seed, int(game_id), config.round_cap)
    start["strategies"] = [
        config.lineup.seats[(seat + rotation) % config.players].label
        for seat in range(config.players)
    ]
    start.update({"deal": deal, "rotation": rotation,
                  "forced_lead": TILE_NAMES[forced] if forced >= 0 else None})
    decoder = EventDecoder(config.players)
    return [start] + [decoder.decode(row) for row in rows]


__all__ = [
    "check_folder", "default_folder", "measure_openings", "openings_section", "resume_config",
    "run_openings",
]
