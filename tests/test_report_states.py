"""The report's win probability by score state and its convergence tables (``sim.report.states``),
on runs small enough to count by hand.

Each run is added up as a report adds up a chunk (``sim.report.aggregate.RunFigures``, the
compiled round pass included), so these are the tables ``sniff report`` writes to
``score-states.csv`` and draws in ``score-states.png`` and ``convergence.png``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sim.report.aggregate import RunFigures, convergence_marks, field_marks
from sim.report.states import (
    convergence_table,
    field_convergence_table,
    run_tables,
    score_state_table,
)
from sim.stats import score_states
from sim.stats.intervals import wilson_interval
from sim.store.rundata import RunData, required_columns


def tables(games: dict, rounds: dict, players: int = 2) -> tuple[pa.Table, pa.Table]:
    """The columns a report reads, as Arrow tables (strategies and end reasons as strings)."""
    columns = required_columns(players)
    assert set(games) == set(columns["games"]) and set(rounds) == set(columns["rounds"])
    return _arrow(games), _arrow(rounds)


def _arrow(data: dict) -> pa.Table:
    return pa.table({name: pa.array(values, pa.string() if name.endswith(
        ("_strategy", "end_reason")) else pa.int64()) for name, values in data.items()})


def run_data(name: str, labels: list[str], chunk: tuple[pa.Table, pa.Table]) -> RunData:
    """One run of ``labels`` (2 players), its figures added up from one chunk."""
    n = chunk[0].num_rows
    figures = RunFigures(2, 1, marks=convergence_marks(n))
    figures.add(*chunk)
    manifest = {"config": {"players": 2, "labels": labels}}
    return RunData(name, None, manifest, None, n, figures=figures.finish())


def tiny_run(b: str = "B") -> tuple[pa.Table, pa.Table]:
    """Three 2-player games of A (lineup seat 0) against ``b``, scores chosen by hand."""
    return tables({
        "game_id": [0, 1, 2], "deal_id": [0, 1, 2], "players": [2] * 3, "rotation": [0, 1, 0],
        "seat0_strategy": ["A", b, "A"], "seat1_strategy": [b, "A", b],
        "first_leader": [0, 1, 1], "winner_team": [0, 0, 0], "winner_side": [0, 1, 0],
        "rounds": [3, 2, 3], "cap_hit": [0, 0, 0],
        "team0_score": [150, 130, 130], "team1_score": [20, 40, 15]}, {
        "game_id": [0, 0, 0, 1, 1, 2, 2, 2], "round_number": [1, 2, 3, 1, 2, 1, 2, 3],
        "end_reason": ["domino"] * 8, "domino_seat": [0, 0, 0, 1, 0, 0, 0, 0],
        "team0_points": [30, 30, 90, 5, 125, 10, 10, 110],
        "team1_points": [10, 10, 0, 40, 0, 5, 10, 0],
        "team0_score": [30, 60, 150, 5, 130, 10, 20, 130],
        "team1_score": [10, 20, 20, 40, 40, 5, 15, 15],
        "seat0_penalty": [0] * 8, "seat1_penalty": [0] * 8})


def many_games(n: int) -> tuple[pa.Table, pa.Table]:
    """``n`` games of A against B without round rows; B wins every fourth game."""
    games = {"game_id": range(n), "deal_id": range(n), "players": [2] * n, "rotation": [0] * n,
             "seat0_strategy": ["A"] * n, "seat1_strategy": ["B"] * n,
             "first_leader": [0] * n, "winner_team": (np.arange(n) % 4 == 0).astype(int),
             "winner_side": (np.arange(n) % 4 == 0).astype(int), "rounds": [1] * n,
             "cap_hit": [0] * n, "team0_score": [0] * n, "team1_score": [0] * n}
    return tables(games, {name: [] for name in required_columns(2)["rounds"]})


def test_score_states_by_hand():
    table = score_state_table(run_data("tiny", ["A", "B"], tiny_run()))
    assert list(table.columns) == score_states.COLUMNS
    assert set(table["bin_size"]) == {25} and set(table["players"]) == {2}
    a = table[table["strategy"] == "A"].set_index(["own_low", "opponents_low"])
    # A: game 0 starts at 0-0, 30-10, 60-20 (won); game 1 (A is team 1) at 0-0, 40-5
    # (lost); game 2 at 0-0, 10-5, 20-15, all in the 0-0 bin, counted once (won)
    assert a.loc[(0, 0), ["games", "wins"]].tolist() == [3, 2]
    assert a.loc[(25, 0), ["games", "wins"]].tolist() == [2, 1]
    assert a.loc[(50, 0), ["games", "wins"]].tolist() == [1, 1]
    assert len(a) == 3 and set(a["side"]) == {0}
    b = table[table["strategy"] == "B"].set_index(["own_low", "opponents_low"])
    assert b.loc[(0, 0), ["games", "wins"]].tolist() == [3, 1]
    assert b.loc[(0, 25), ["games", "wins"]].tolist() == [2, 1]
    assert b.loc[(0, 50), ["games", "wins"]].tolist() == [1, 0]
    assert len(b) == 3 and (b["opponents"] == "A").all()
    row = a.loc[(0, 0)]
    assert row["win_rate"] == pytest.approx(2 / 3)
    assert (row["low"], row["high"]) == pytest.approx(wilson_interval(2, 3))
    merged = score_states.merge_states([table, table])
    m = merged[merged["strategy"] == "A"].set_index(["own_low", "opponents_low"])
    assert m.loc[(0, 0), ["games", "wins"]].tolist() == [6, 4]
    assert set(merged["side"]) == {-1}


def test_convergence_by_hand():
    path = convergence_table(run_data("tiny", ["A", "B"], tiny_run()))
    a = path[path["strategy"] == "A"]
    assert a["games"].tolist() == [3] and a["wins"].tolist() == [2]  # from 10 games, or all
    n = 1000
    path = convergence_table(run_data("many", ["A", "B"], many_games(n)))
    b = path[path["strategy"] == "B"].set_index("games")
    assert b.index.min() == 10 and b.index.max() == n and len(b) <= 200
    assert b.index.tolist() == convergence_marks(n).tolist()
    # B won games 0, 4, 8, ...: of the first m games, (m + 3) // 4
    assert b["wins"].tolist() == [(m + 3) // 4 for m in b.index]
    assert b.loc[n, "wins"] == 250 and b.loc[n, "win_rate"] == 0.25
    assert (b.loc[n, "low"], b.loc[n, "high"]) == pytest.approx(wilson_interval(250, n))
    a = path[path["strategy"] == "A"].set_index("games")
    assert (a["wins"] + b["wins"] == a.index).all()  # every game decided


def test_field_convergence_adds_each_strategys_pairings():
    pairings = [run_data("A-B", ["A", "B"], tiny_run("B")),
                run_data("A-C", ["A", "C"], tiny_run("C"))]
    path = field_convergence_table(pairings).set_index("strategy")
    assert field_marks([3, 3]).tolist() == [3]
    assert path.loc["A", ["games", "wins"]].tolist() == [3, 4]  # 2 wins in each pairing
    assert path.loc["A", "win_rate"] == pytest.approx(4 / 6)
    assert (path.loc["A", "low"], path.loc["A", "high"]) == pytest.approx(wilson_interval(4, 6))
    assert path.loc["B", "wins"] == 1 and path.loc["C", "wins"] == 1
    assert path["label"].tolist() == ["A", "B", "C"]


def test_run_tables_and_their_charts():
    runs = [run_data("r1", ["A", "B"], tiny_run()), run_data("r2", ["A", "B"], tiny_run())]
    states, paths = run_tables(runs)
    assert states.set_index(["strategy", "own_low", "opponents_low"]).loc[
        ("A", 0, 0), "games"] == 6
    assert set(paths["run"]) == {"r1", "r2"}
    assert paths.groupby("run")["wins"].sum().tolist() == [3, 3]  # 2 for A, 1 for B, each
    figure = score_states.score_states_figure(states, min_games=1)
    assert len(figure.axes) == 3  # A and B against each other, and the colour bar
    figure = score_states.convergence_figure(paths)
    assert len([axes for axes in figure.axes if axes.get_visible()]) >= 2  # a panel per run
    assert figure.axes[0].get_xscale() == "log"
