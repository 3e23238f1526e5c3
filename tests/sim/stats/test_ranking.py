"""Rank intervals and tie groups (``sim.stats.ranking``): intervals that cover the true rank,
equal strengths in one group, the printed ranking and its CSV columns."""

from __future__ import annotations

import numpy as np

from sim.stats import ranking
from sim.stats.ratings import Contest
from tests.helpers.contests import bt_contests


def test_rank_intervals_cover_true_rank():
    truth = {"a": 1650, "b": 1560, "c": 1500, "d": 1450, "e": 1340}
    true_rank = {name: k + 1 for k, name in enumerate(truth)}
    rng = np.random.default_rng(5)
    hits = total = 0
    for rep in range(20):
        result = ranking.rank(bt_contests(truth, 800, rng), seed=rep, draws=1000)
        for row in result.table.itertuples():
            hits += row.rank_low <= true_rank[row.strategy] <= row.rank_high
            total += 1
    assert hits / total >= 0.85
    # same seed, same intervals
    contests = bt_contests(truth, 800, np.random.default_rng(1))
    one, two = ranking.rank(contests, seed=4), ranking.rank(contests, seed=4)
    assert one.table.equals(two.table)
    assert {"rank_low", "rank_high", "group"} <= set(one.table.columns)


def test_equal_strengths_form_a_tie_group():
    truth = {"x": 1600, "y": 1600, "z": 1300}
    result = ranking.rank(bt_contests(truth, 5000, np.random.default_rng(8)), seed=0)
    groups = dict(zip(result.table["strategy"], result.table["group"]))
    assert groups["x"] == groups["y"] == 1
    assert groups["z"] == 2
    top = result.table[result.table["strategy"].isin(["x", "y"])]
    assert (top["rank_low"] == 1).all() and (top["rank_high"] == 2).all()
    assert result.gaps["separated"].tolist() == [False, True]
    lines = ranking.ranking_lines(result)
    assert sum(line.strip().startswith("1-2  group 1") for line in lines) == 2
    assert any(line.strip().startswith("3  group 2  z") for line in lines)


def test_printed_ranking_and_csv_columns():
    cycle = [Contest(("a", "b"), (1400, 600)), Contest(("b", "c"), (1400, 600)),
             Contest(("c", "a"), (1400, 600)), Contest(("a", "d"), (1900, 100)),
             Contest(("b", "d"), (1900, 100)), Contest(("c", "d"), (1900, 100))]
    result = ranking.rank(cycle)
    lines = ranking.ranking_lines(result)
    assert any(line.strip().startswith("1-3  group 1") for line in lines)
    assert any(line.strip().startswith("4  group 2  d") for line in lines)
    assert any("warning: the ratings do not describe" in line for line in lines)
    assert ranking.csv_table(result).columns.tolist()[-3:] == ["rank_low", "rank_high", "group"]
