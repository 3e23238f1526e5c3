"""How much disk a run needs, measured rather than guessed, checked before and during it.

Bytes a game differ fivefold between lineups (2 players random to 4 players greedy) and
with ``--no-rounds``, so no constant holds: before a big run, its first games are played
and encoded exactly as the run writes them (``pilot_bytes``); after its first chunk is
written, the chunk's own bytes a game decide again (``check_measured_space``), so a run
that passed on a low estimate stops while its finished chunks can still be kept.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.run.plan import Plan, rotation_for

__all__ = ["pilot_bytes"]

# Beyond any real game's size (a 200-round game is ~1,800 bytes): below this bound times
# the games, a run cannot fill the disk and needs no pilot to estimate its size.
BOUND_BYTES_PER_GAME = 2_000
SPACE_PILOT_GAMES = 512


def pilot_bytes(plan: Plan) -> tuple[float, float]:
    """``(bytes a game, bytes a part)`` of this run's Parquet, measured: its first games
    encoded as the run encodes them, half of them and all, so that the difference is the
    cost of a game and the rest is what a part costs whatever its games (footer, metadata).
    """
    import io as bytes_io

    import pyarrow.parquet as pq

    from sim.kernels.runner import play_batch, winning_side
    from sim.store import io

    n = min(plan.games, SPACE_PILOT_GAMES)
    ids = np.arange(n, dtype=np.int64)
    result = play_batch(plan.lineup, plan.seed, ids, deal_ids=ids // plan.group,
                        rotations=rotation_for(ids, plan.players), round_cap=plan.round_cap)
    labels = [spec.label for spec in plan.lineup.specs]
    tables = [io.games_table(result, plan.players, labels, plan.run_id, plan.seed,
                             winning_side(result, plan.players), round_points=not plan.rounds)]
    if plan.rounds:
        tables.append(io.rounds_table(result, plan.players, plan.run_id))
    metadata = {"config": plan.config(), "run_id": plan.run_id}  # about a part's own

    def size(games: int) -> int:
        total = 0
        for table in tables:
            keep = table.filter(np.asarray(table.column("game_id")) < games)
            buffer = bytes_io.BytesIO()
            pq.write_table(io.with_metadata(keep, metadata), buffer,
                           **io.parquet_options(keep.schema))
            total += buffer.tell()
        return total

    half, whole = size(n // 2), size(n)
    per_game = max(0.0, (whole - half) / max(1, n - n // 2))
    return per_game, max(0.0, whole - per_game * n)


def check_space(plan: Plan, folder: Path, done_games: int) -> None:
    """Refuse a run that would not fit on the disk, its bytes a game measured on a pilot of
    its first games encoded as the run writes them (only when the run is big enough to
    matter); ``check_measured_space`` checks again on the first chunk written."""
    from sim.store import folders

    games = max(0, plan.games - done_games)
    if games * BOUND_BYTES_PER_GAME <= folders.free_bytes(folder):
        return
    per_game, per_part = pilot_bytes(plan)
    parts = -(-games // plan.chunk_size)
    folders.check_disk_space(folder, games * per_game + parts * per_part, games, per_game)


def check_measured_space(plan: Plan, folder: Path, record: dict, games_left: int) -> None:
    """After a chunk is written: the rest of the run at the bytes a game that chunk took."""
    from sim.store import folders

    games = record["end_game"] - record["first_game"]
    if games_left <= 0 or not games:
        return
    per_game = sum(part["bytes"] for part in record["parts"].values()) / games
    need = games_left * per_game
    if need > folders.free_bytes(folder):
        folders.check_disk_space(folder, need, games_left, per_game,
                                 measured=f"chunk {record['chunk']}")
