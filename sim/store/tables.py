"""The engine's result arrays as a run's Arrow tables: the games and rounds rows.

Each column gets the narrowest integer type its values fit (checked: a value out of range is
an error, never a wrapped number) or a dictionary of names (strategies, tiles, end reasons);
docs/data-format.md documents every column (tests check that the two agree).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from sim.core import engine
from sim.core.seating import team_count
from sim.core.tiles import TILE_NAMES
from sim.errors import SniffError
from sim.store import arrow
from sim.store.summary import game_point_sums

__all__: list[str] = []  # nothing here is used outside sim.store


def _int(values: np.ndarray, arrow_type: pa.DataType, name: str) -> pa.Array:
    """A compact integer column; refuses (never wraps) a value that does not fit."""
    values = np.asarray(values)
    info = np.iinfo(arrow_type.to_pandas_dtype())
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise SniffError(f"column {name}: value out of range for {arrow_type}")
    return arrow.numeric(values, arrow_type)


def _labels(indices: np.ndarray, values: Sequence[str]) -> pa.DictionaryArray:
    """A dictionary-encoded string column (int8 codes into ``values``)."""
    return pa.DictionaryArray.from_arrays(arrow.numeric(indices, pa.int8()),
                                          arrow.strings(values))


def required_table(columns: dict[str, pa.Array]) -> pa.Table:
    """The columns as a table whose fields are all non-nullable (Parquet ``required``).

    No value is ever missing, and Parquet's writer then skips a definition level per value:
    less time to write a rounds part (docs/data-format.md).
    """
    arrays = list(columns.values())
    schema = pa.schema([pa.field(name, array.type, nullable=False)
                        for name, array in zip(columns, arrays)])
    return pa.Table.from_arrays(arrays, schema=schema)


def games_table(
    result, players: int, labels: Sequence[str], run_id: str, seed: int, winner_side: np.ndarray,
    round_points: bool = False,
) -> pa.Table:
    """One row per game of a ``sim.kernels.runner.BatchResult`` (docs/data-format.md: ``games``).

    ``round_points`` adds each team's points summed over the game's rounds, and their
    squares summed (what the summary needs of a run that keeps no rounds table).
    """
    g = np.ascontiguousarray(result.games.T)  # one field per contiguous row
    n = result.games.shape[0]
    columns: dict[str, pa.Array] = {
        "run_id": _labels(np.zeros(n), [run_id]),
        "game_id": arrow.numeric(result.game_ids, pa.int64()),
        "deal_id": arrow.numeric(result.deal_ids, pa.int64()),
        "rotation": _int(result.rotations, pa.int8(), "rotation"),
        "seed": arrow.numeric(np.full(n, seed), pa.int64()),
        "players": _int(np.full(n, players), pa.int8(), "players"),
    }
    for seat in range(players):
        columns[f"seat{seat}_strategy"] = _labels(result.seat_specs[:, seat], labels)
    columns["first_leader"] = _int(g[engine.GAME_FIRST_LEADER], pa.int8(), "first_leader")
    columns["winner_team"] = _int(g[engine.GAME_WINNER_TEAM], pa.int8(), "winner_team")
    columns["winner_side"] = _int(winner_side, pa.int8(), "winner_side")
    for team in range(team_count(players)):
        columns[f"team{team}_score"] = _int(
            g[engine.GAME_SCORES + team], pa.int32(), f"team{team}_score"
        )
    columns["rounds"] = _int(g[engine.GAME_ROUNDS], pa.int16(), "rounds")
    columns["placements"] = _int(g[engine.GAME_PLACEMENTS], pa.int16(), "placements")
    columns["draws"] = _int(g[engine.GAME_DRAWS], pa.int16(), "draws")
    columns["cap_hit"] = arrow.bools(g[engine.GAME_CAP_HIT] != 0)
    if round_points:
        _, _, rows = result.flat_rounds()
        sums, squares = game_point_sums(
            [rows[:, engine.ROUND_POINTS + t] for t in range(team_count(players))],
            g[engine.GAME_ROUNDS])
        for team in range(sums.shape[1]):
            columns[f"team{team}_points"] = _int(sums[:, team], pa.int32(), f"team{team}_points")
        for team in range(sums.shape[1]):
            columns[f"team{team}_points_sq"] = arrow.numeric(squares[:, team], pa.int64())
    return required_table(columns)


def rounds_table(result, players: int, run_id: str) -> pa.Table:
    """One row per round played (docs/data-format.md: ``rounds``), vectorised over the batch."""
    game_index, round_number, rows = result.flat_rounds()
    # One field per contiguous row (the runner stores rounds field by field, so this copies
    # nothing): the range checks and casts below then read memory in order.
    r = np.ascontiguousarray(rows.T)
    n_rows = rows.shape[0]
    columns: dict[str, pa.Array] = {
        "run_id": _labels(np.zeros(n_rows), [run_id]),
        "game_id": arrow.numeric(result.game_ids[game_index], pa.int64()),
        "round_number": _int(round_number, pa.int16(), "round_number"),
        "leader": _int(r[engine.ROUND_LEADER], pa.int8(), "leader"),
        "opening_tile": _labels(r[engine.ROUND_OPENING_TILE], TILE_NAMES),
        "end_reason": _labels(r[engine.ROUND_END_REASON], engine.END_NAMES),
        "domino_seat": _int(r[engine.ROUND_DOMINO_SEAT], pa.int8(), "domino_seat"),
    }
    teams = team_count(players)
    for team in range(teams):
        columns[f"team{team}_points"] = _int(
            r[engine.ROUND_POINTS + team], pa.int16(), f"team{team}_points"
        )
    for seat in range(players):
        columns[f"seat{seat}_penalty"] = _int(
            r[engine.ROUND_PENALTY + seat], pa.int16(), f"seat{seat}_penalty"
        )
    for seat in range(players):
        columns[f"seat{seat}_pips"] = _int(
            r[engine.ROUND_HAND_PIPS + seat], pa.int16(), f"seat{seat}_pips"
        )
    for team in range(teams):
        columns[f"team{team}_score"] = _int(
            r[engine.ROUND_SCORES + team], pa.int32(), f"team{team}_score"
        )
    columns["draws"] = _int(r[engine.ROUND_DRAWS], pa.int16(), "draws")
    columns["placements"] = _int(r[engine.ROUND_PLACEMENTS], pa.int16(), "placements")
    columns["passes"] = _int(r[engine.ROUND_PASSES], pa.int16(), "passes")
    columns["game_ended"] = arrow.bools(r[engine.ROUND_END_REASON] == engine.End.TARGET)
    return required_table(columns)
