"""The report's compiled round pass (``sim.report.passes``) through ``RunFigures.prepare``.

The golden tests cover runs as sniff writes them (rows in game, then round order, game ids
consecutive within a chunk); these cover the other paths of the pass: rows out of order
(sorted and passed again), a chunk whose game ids have gaps (rows by their game's place),
a game without round rows and a row of a game the chunk lacks.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sim
from sim.errors import SniffError
from sim.report.aggregate import RunFigures
from sim.store.rundata import required_columns

PLAYERS = 3


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("passes") / "run"
    sim.simulate(players=PLAYERS, strategies="greedy,random,heavy", games=400, seed=11,
                 out=folder)
    columns = required_columns(PLAYERS)  # what the report reads of each table
    return (pq.read_table(folder / "games", columns=columns["games"]),
            pq.read_table(folder / "rounds", columns=columns["rounds"]))


def _counts(games: pa.Table, rounds: pa.Table) -> dict:
    prepared = RunFigures(PLAYERS, 1).prepare(games, rounds)
    prepared.pop("games")
    return prepared


def _assert_same(one: dict, other: dict) -> None:
    assert one.keys() == other.keys()
    for name, value in one.items():
        if isinstance(value, np.ndarray):
            assert value.dtype == other[name].dtype and np.array_equal(value, other[name]), name
        else:
            assert value == other[name], name


def _renumbered(table: pa.Table, ids: dict) -> pa.Table:
    column = table.schema.get_field_index("game_id")
    new = np.array([ids[int(i)] for i in table["game_id"].to_numpy()], dtype=np.int64)
    return table.set_column(column, table.schema.field(column),
                            pa.array(new, type=table.schema.field(column).type))


def test_rows_out_of_order_give_the_same_counts(tables):
    games, rounds = tables
    ordered = _counts(games, rounds)
    assert ordered["rounds"] == rounds.num_rows > games.num_rows
    shuffled = rounds.take(pa.array(np.random.default_rng(1).permutation(rounds.num_rows)))
    _assert_same(_counts(games, shuffled), ordered)


def test_game_ids_with_gaps_count_as_the_same_games_numbered_in_a_row(tables):
    games, rounds = tables
    ids = games["game_id"].to_numpy()
    kept = ids[ids % 3 != 1]
    some_games = games.filter(pa.array(np.isin(ids, kept)))
    some_rounds = rounds.filter(pa.array(np.isin(rounds["game_id"].to_numpy(), kept)))
    gaps = _counts(some_games, some_rounds)
    in_a_row = {int(i): place for place, i in enumerate(kept)}
    _assert_same(gaps, _counts(_renumbered(some_games, in_a_row),
                               _renumbered(some_rounds, in_a_row)))
    shuffled = some_rounds.take(pa.array(np.random.default_rng(2).permutation(
        some_rounds.num_rows)))
    _assert_same(_counts(some_games, shuffled), gaps)
    assert gaps["rounds"] == some_rounds.num_rows < rounds.num_rows


def test_a_game_without_round_rows_still_started_at_nil_all(tables):
    games, rounds = tables
    rows_of = rounds["game_id"].to_numpy()
    game = int(rows_of[-1])
    full = _counts(games, rounds)
    lonely = _counts(games, rounds.filter(pa.array(rows_of != game)))
    assert lonely["rounds"] == full["rounds"] - int((rows_of == game).sum())
    home = -full["bin_low"]
    assert lonely["bin_low"] == full["bin_low"]
    # the game's first round started at 0-0 either way: that cell is unchanged
    assert np.array_equal(lonely["cell_games"][:, home, home], full["cell_games"][:, home, home])
    assert np.array_equal(lonely["cell_wins"][:, home, home], full["cell_wins"][:, home, home])
    assert lonely["cell_games"].sum() < full["cell_games"].sum()


@pytest.mark.parametrize("gaps", [False, True])
def test_a_row_of_a_game_the_chunk_lacks_is_refused(tables, gaps):
    games, rounds = tables
    ids = games["game_id"].to_numpy()
    if gaps:
        games = games.filter(pa.array(ids % 2 == 0))
    else:
        games = games.filter(pa.array(ids != ids.max()))
    with pytest.raises(SniffError, match="games its games table lacks"):
        _counts(games, rounds)
