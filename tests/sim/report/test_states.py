"""The report's figures from its counts, on runs small enough to count by hand: win
probability by score state and convergence (``sim.report.states``), the value of leading,
of each seat, and signed final margins (``sim.report.effects`` over ``sim.stats.effects``).

Each run is added up as a report adds up a chunk (``sim.report.aggregate.RunFigures``, the
compiled round pass included), so these are the tables ``sniff report`` writes
(``score-states.csv``, ``report.json``'s effects) and draws (``score-states.png``,
``convergence.png``, the by-position chart).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sim.core.seating import side_of_team
from sim.report.aggregate import RunFigures, convergence_marks, field_marks
from sim.report.effects import run_effects, tournament_effects
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


def run_data(name: str, labels: list[str], chunk: tuple[pa.Table, pa.Table],
             tournament: Path | None = None) -> RunData:
    """One run of ``labels`` (one per player), its figures added up from one chunk."""
    n, players = chunk[0].num_rows, len(labels)
    figures = RunFigures(players, 1, marks=convergence_marks(n))
    figures.add(*chunk)
    manifest = {"config": {"players": players, "labels": labels}}
    return RunData(name, None, manifest, None, n, tournament, figures=figures.finish())


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


# --- effects


def leader_games() -> tuple[pa.Table, pa.Table]:
    """Eight 2-player games of A against B: the first leader's side wins 6 of them."""
    return tables({
        "game_id": range(8), "deal_id": range(8), "players": [2] * 8, "rotation": [0, 1] * 4,
        "seat0_strategy": ["A", "B"] * 4, "seat1_strategy": ["B", "A"] * 4,
        "first_leader": [0, 0, 1, 1, 0, 1, 0, 1],
        "winner_team": [0, 0, 1, 1, 1, 0, 0, 1],
        "winner_side": [0, 1, 1, 0, 1, 1, 0, 0], "rounds": [1] * 8, "cap_hit": [0] * 8,
        "team0_score": [150, 150, 20, 40, 60, 150, 150, 30],
        "team1_score": [10, 40, 150, 150, 150, 90, 20, 150]},
        {name: [] for name in required_columns(2)["rounds"]})


def test_leader_effect_by_hand():
    effects = run_effects(run_data("lead", ["A", "B"], leader_games()))
    leader = effects["leader"]
    assert leader["games"] == 8
    assert leader["leader_win_rate"] == pytest.approx(6 / 8)
    assert leader["others_win_rate"] == pytest.approx(2 / 8)
    assert leader["estimate"] == pytest.approx(0.5)
    assert leader["low"] < 0.5 < leader["high"]
    by_side = effects["leader_by_side"].set_index("strategy")
    assert by_side.index.tolist() == ["A", "B"]
    # A is team 0 in the even games, team 1 in the odd ones: its team led games 0 and 3 to
    # 7 and won 0, 3, 6 and 7 of them; another led games 1 and 2, both lost
    assert by_side.loc["A", ["win_rate_leading", "win_rate_not_leading"]].tolist() == \
        pytest.approx([4 / 6, 0 / 2])
    assert (by_side["estimate"] > 0).all()


def test_seat_effects_family():
    n, rng = 3000, np.random.default_rng(0)
    rotation = np.arange(n) % 3
    winner_team = rng.choice(3, size=n, p=[0.40, 0.30, 0.30])
    labels = ["A", "B", "C"]
    games = {"game_id": range(n), "deal_id": range(n), "players": [3] * n,
             "rotation": rotation, "first_leader": [0] * n, "winner_team": winner_team,
             "winner_side": [side_of_team(int(t), int(r), 3)
                             for t, r in zip(winner_team, rotation)],
             "rounds": [1] * n, "cap_hit": [0] * n,
             **{f"team{t}_score": [0] * n for t in range(3)},
             **{f"seat{s}_strategy": [labels[(s + r) % 3] for r in rotation]
                for s in range(3)}}
    chunk = tables(games, {name: [] for name in required_columns(3)["rounds"]}, players=3)
    table = run_effects(run_data("seats", labels, chunk))["seats"]
    wins = np.bincount(winner_team, minlength=3)
    assert table["win_rate"].tolist() == pytest.approx((wins / n).tolist())
    assert table["estimate"].tolist() == pytest.approx((wins / n - 1 / 3).tolist())
    assert table["estimate"].sum() == pytest.approx(0.0, abs=1e-12)
    assert table.loc[0, "low"] > 0  # seat 0 clearly better than the average seat
    assert (table["p_adjusted"] >= table["p_value"]).all()
    assert table["family"].iloc[0] == "Holm-adjusted over the 3 table positions"


def test_margins_signed_and_pooled():
    margins = run_effects(run_data("lead", ["A", "B"], leader_games()))["margins"]
    a = margins.set_index("side").loc["A"]
    # A's margins: +140, -110 (A is team 1 in game 1), -130, +110, -90, -60, +130, +120
    values = [140, -110, -130, 110, -90, -60, 130, 120]
    assert a["games"] == 8
    assert a["mean"] == pytest.approx(np.mean(values))
    assert a["se"] == pytest.approx(np.std(values, ddof=1) / np.sqrt(8))
    assert a["ahead"] == pytest.approx(4 / 8)
    assert a["q50"] == pytest.approx(np.quantile(values, 0.5)) == 25
    assert a["q05"] == pytest.approx(np.quantile(values, 0.05))
    b = margins.set_index("side").loc["B"]
    assert b["q50"] == pytest.approx(-a["q50"])
    pairings = [run_data("A-B", ["A", "B"], leader_games(), Path("t")),
                run_data("B-A", ["B", "A"], leader_games(), Path("t"))]
    pooled = tournament_effects(pairings, ["B", "A"])["tournament t"]
    assert pooled["margins"]["side"].tolist() == ["B", "A"]  # in the order given
    a = pooled["margins"].set_index("side").loc["A"]
    assert a["games"] == 16  # A's 8 games in each pairing, as either side
    assert a["mean"] == pytest.approx(0.0)  # A is side 0 in one pairing, side 1 in the other
    assert pooled["leader"]["games"] == 16
