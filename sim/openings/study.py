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

from sim.core.tiles import N_TILES, TILE_NAMES
from sim.errors import SniffError
from sim.kernels.runner import ROUND_CAP, trace_events
from sim.openings.folder import GamesParts, clear_outputs, table_files
from sim.openings.output import (
    OUTPUT_FILES,
    ReportSection,
    heatmap_figure,
    load_openings,
    openings_blocks,
    openings_section,
    ranking_markdown,
    write_outputs,
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
    game_id_of,
    iter_openings,
    leader_lineup,
    make_config,
    play_openings,
)
from sim.openings.tally import OpeningsTally, summarise_openings
from sim.store.lock import RunLock

RESULTS_DIR = Path("results")


# --- the run: library entry point


def default_folder(base: Path = RESULTS_DIR) -> Path:
    from sim.store.folders import new_folder

    return new_folder("openings", base)


def check_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a file, or a folder with anything in it unless ``overwrite``."""
    from sim.openings.folder import is_openings_file
    from sim.store.folders import check_folder_path

    check_folder_path(folder)
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise SniffError(f"{folder} is not empty; use --overwrite to replace the openings "
                         "files in it")
    foreign = sorted((path.name for path in folder.iterdir() if not is_openings_file(path)),
                     key=lambda name: (name.startswith("."), name)) \
        if folder.is_dir() else []
    if foreign:  # --overwrite replaces an openings folder, never another kind
        raise SniffError(f"{folder} holds {foreign[0]}, which no openings run writes: "
                         "--overwrite replaces only an openings folder; choose another -o")


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
    table, _ = measure_openings(config, folder, progress, command)
    return table


def measure_openings(
    config: OpeningsConfig,
    folder: Path | None = None,
    progress: Callable[[int], None] | None = None,
    command: str = "",
    chunk_deals: int = CHUNK_DEALS,
    part_deals: int = PART_DEALS,
    between_chunks: Callable[[], None] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Play the run chunk by chunk in bounded memory; the per-tile table and the summary.

    Each chunk's games go into an :class:`OpeningsTally` (the sums every figure needs) and,
    with ``folder``, into the games parts (``GamesParts``); then they are dropped, so memory
    does not grow with ``--deals``. The results are written at the end (``summary.json``
    last); a folder already checked by ``check_folder`` is cleared of a previous run's
    openings files first. ``progress(deals_done)`` follows each chunk, and
    ``between_chunks()`` before the next (where a requested stop raises: what was written
    stays, without ``summary.json``, so no reader takes it for a result). The figures do
    not depend on ``chunk_deals``, nor the parts on it.
    """
    tally = OpeningsTally()
    parts = lock = None
    try:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            lock = RunLock(folder)  # one writer: a second run into the folder is one line
            lock.acquire(command or "sniff openings")
            clear_outputs(folder)
            parts = GamesParts(folder, config, part_deals, command)
        for lo, hi, games in iter_openings(config, chunk_deals, part_deals):
            tally.add(games)
            if parts is not None:
                parts.add(lo, hi, games)
            del games
            if progress is not None:
                progress(hi)
            if between_chunks is not None and hi < config.deals:
                between_chunks()
        table, summary = tally.table(config)
        if parts is not None:
            write_results(folder, config, table, summary, tally.pairs(), parts.records,
                          command)
    finally:
        if lock is not None:
            lock.release()
    return table, summary


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
    "N_TILES", "OUTPUT_FILES", "OpeningsConfig", "OpeningsTally", "ReportSection",
    "SLOTS_PER_DEAL", "game_id_of", "heatmap_figure", "leader_lineup", "load_openings",
    "make_config", "measure_openings", "openings_blocks", "openings_section", "play_openings",
    "ranking_markdown", "run_openings", "summarise_openings", "table_files",
    "trace_opening_game", "write_outputs",
]
