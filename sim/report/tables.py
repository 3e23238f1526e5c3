"""The tables of a report: per-run figures by side, and comparisons across runs.

Each function takes :class:`sim.store.rundata.RunData` (one run, or several) whose ``figures``
``sim.report.aggregate`` has added up, and returns plain rows or DataFrames;
``sim.report.build`` gathers them into a ``Report``. Definitions (sides, Wilson intervals,
paired and independent differences) are in ``sim.report.build``'s module doc.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from sim.core.engine import END_NAMES
from sim.core.seating import team_name
from sim.stats.intervals import (
    Z95,
    proportion_difference,
    wilson_interval,
    win_rate_difference,
)
from sim.stats.tally import merged, tally_difference
from sim.store.rundata import RunData

__all__ = ["pairwise_matrix"]

# --- one run, by side


def interval_row(wins: int, games: int) -> dict:
    """Games, wins, win rate and its 95% Wilson interval, as row fields."""
    low, high = wilson_interval(wins, games)
    return {"games": int(games), "wins": int(wins),
            "win_rate": wins / games if games else math.nan, "low": low, "high": high}


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """Mean and its standard error (sample standard deviation / sqrt(n))."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return math.nan, math.nan
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else math.nan
    return mean, se


def summary_rows(run: RunData) -> list[dict]:
    """Games, wins with a Wilson interval, and points per round ± standard error, per side."""
    f = run.figures
    rows = []
    for k in range(run.n_sides):
        mean, se = f.points[k].mean_se()
        row = {"run": run.name, "side": run.sides[k], "strategy": run.strategies[k],
               **interval_row(int(f.wins[k]), f.games),
               "unfinished": int(f.unfinished), "rounds": int(f.rounds),
               "points_per_round": mean, "points_se": se,
               "points_low": mean - Z95 * se, "points_high": mean + Z95 * se}
        rows.append(row)
    return rows


def seat_rows(run: RunData) -> list[dict]:
    """Win rate of each side by where it sat: seat (2-3 players) or partnership seats."""
    f = run.figures
    rows = []
    for k in range(run.n_sides):
        for position in range(run.n_sides):
            rows.append({"run": run.name, "side": run.sides[k],
                         "position": team_name(position, run.players),
                         **interval_row(int(f.seat_wins[k, position]),
                                        int(f.seat_games[k, position]))})
    return rows


def leader_positions(players: int) -> list[str]:
    if players == 4:
        return ["own partnership leads round 1", "opponents lead round 1"]
    return ["leads round 1", "plays 2nd in round 1", "plays 3rd in round 1"][:players]


def leader_rows(run: RunData) -> list[dict]:
    """Win rate of each side by its turn order in round 1 (the first leader is drawn)."""
    f = run.figures
    rows = []
    for k in range(run.n_sides):
        for position, name in enumerate(leader_positions(run.players)):
            rows.append({"run": run.name, "side": run.sides[k], "position": name,
                         **interval_row(int(f.lead_wins[k, position]),
                                        int(f.lead_games[k, position]))})
    return rows


def difference_rows(run: RunData) -> list[dict]:
    """Every pair of sides, stronger first: win-rate difference over games, and per deal.

    Each row reads "stronger − weaker" (``side_a`` is the side with more wins in the run),
    so every estimate is positive or zero and a chart of them needs no axis below zero
    beyond the intervals; ``strategy_a``/``strategy_b`` name the two sides' strategies.
    """
    f = run.figures
    n = f.games
    rows = []
    for first, second in combinations(range(run.n_sides), 2):
        swap = f.wins[second] > f.wins[first]
        i, j = (second, first) if swap else (first, second)
        wins_i, wins_j = int(f.wins[i]), int(f.wins[j])
        by_game = win_rate_difference(wins_i, wins_j, n)
        base = {"run": run.name, "side_a": run.sides[i], "side_b": run.sides[j],
                "strategy_a": run.strategies[i], "strategy_b": run.strategies[j],
                "win_rate_a": wins_i / n, "win_rate_b": wins_j / n}
        rows.append({**base, **by_game.to_dict(), "unit": "game"})
        if run.group > 1:
            deals = f.by_deal[(first, second)]
            paired = tally_difference(deals.negated() if swap else deals,
                                      method="paired by deal")
            row = {**base, **paired.to_dict(), "unit": "deal"}
            row["independent_se"] = by_game.se
            row["narrower_by"] = (1 - paired.se / by_game.se) if by_game.se > 0 else math.nan
            rows.append(row)
    return rows


def sort_stronger_first(differences: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Differences ordered by the stronger strategy's place in ``order``, then the weaker's.

    ``order`` is the strategies strongest first (the ratings' order); rows of strategies
    not in it keep their place after the others. Per-game and per-deal rows of one pair
    stay together (the sort is stable).
    """
    if differences.empty or not order:
        return differences
    place = {name: index for index, name in enumerate(order)}
    last = len(place)
    key = pd.DataFrame({"a": differences["strategy_a"].map(place).fillna(last),
                        "b": differences["strategy_b"].map(place).fillna(last)})
    index = key.sort_values(["a", "b"], kind="stable").index
    return differences.loc[index].reset_index(drop=True)


def field_rows(runs: Sequence[RunData], order: Sequence[str] = ()) -> pd.DataFrame:
    """Each strategy against the field: its wins over every game it played, all runs pooled.

    Per strategy: ``runs`` (pairings it played), ``games``, ``wins``, ``win_rate`` with its
    95% Wilson interval (``low``, ``high``), ``points_per_round`` ± ``points_se`` over all
    its rounds. A run in which one strategy holds two sides (3 players) counts its games
    once per side. Rows strongest first: by ``order`` (the ratings) when given, else by
    win rate.
    """
    totals: dict[str, dict] = {}
    for run in runs:
        f = run.figures
        for k, name in enumerate(run.strategies):
            entry = totals.setdefault(name, {"runs": 0, "games": 0, "wins": 0, "points": []})
            entry["runs"] += 1
            entry["games"] += int(f.games)
            entry["wins"] += int(f.wins[k])
            entry["points"].append(f.points[k])
    rows = []
    for name, entry in totals.items():
        mean, se = merged(entry["points"]).mean_se()
        rows.append({"strategy": name, "runs": entry["runs"],
                     **interval_row(entry["wins"], entry["games"]),
                     "points_per_round": mean, "points_se": se})
    table = pd.DataFrame(rows)
    if order:
        place = {name: index for index, name in enumerate(order)}
        table = table.sort_values("strategy", key=lambda s: s.map(place).fillna(len(place)),
                                  kind="stable")
    else:
        table = table.sort_values("win_rate", ascending=False, kind="stable")
    return table.reset_index(drop=True)


def value_counts(values: np.ndarray, key: str, count: str = "count") -> pd.DataFrame:
    """How often each value occurs: columns ``key``, ``count`` and ``share``."""
    values = np.asarray(values, dtype=np.int64)
    unique, counts = np.unique(values, return_counts=True)
    total = counts.sum()
    return pd.DataFrame({key: unique, count: counts, "share": counts / total if total else []})


def distributions(run: RunData) -> dict:
    """Scoring distributions of one run: tables of counts and shares, plus their means."""
    f = run.figures
    out: dict = {}

    def by_side(tallies, key: str, count: str, label: str = "side") -> pd.DataFrame:
        frames = []
        for k, tally in enumerate(tallies):
            frame = tally.value_counts(key, count)
            frame.insert(0, label, run.sides[k])
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    out["points_per_round"] = by_side(f.points, "points", "rounds")
    out["margin"] = by_side(f.winner_margins, "margin", "games", "winner")
    out["margin_mean"] = merged(f.winner_margins).mean_se()
    out["length"] = f.length.value_counts("rounds", "games")
    out["length_mean"] = f.length.mean_se()
    out["penalties"] = by_side(f.penalties, "penalty", "rounds")
    out["penalty_mean"] = {run.sides[k]: f.penalties[k].mean_se() for k in range(run.n_sides)}

    total = int(f.rounds)
    rows = []
    for index, ending in enumerate(END_NAMES):
        count = int(f.endings[index])
        low, high = wilson_interval(count, total)
        rows.append({"ending": ending, "side": "", "rounds": count,
                     "share": count / total if total else math.nan, "low": low, "high": high})
    for k in range(run.n_sides):
        count = int(f.domino[k])
        low, high = wilson_interval(count, total)
        rows.append({"ending": "domino", "side": run.sides[k], "rounds": count,
                     "share": count / total if total else math.nan, "low": low, "high": high})
    out["endings"] = pd.DataFrame(rows)
    return out


# --- across runs: comparisons, pairwise matrix, ratings


def comparison_rows(runs: Sequence[RunData]) -> list[dict]:
    """Different strategies that met the same opposition in different runs (independent).

    Sides of two runs are compared only when their opponents are the same strategies (e.g.
    ``greedy`` in greedy-vs-random against ``heavy`` in heavy-vs-random): only then is a
    difference of win rates about the two strategies rather than about their opponents.
    Runs of one tournament are left to its ratings.
    """
    rows = []
    seen: set[tuple] = set()
    for a, b in combinations(runs, 2):
        if a.tournament is not None and a.tournament == b.tournament:
            continue
        wins_a, games_a = a.figures.wins, a.figures.games
        wins_b, games_b = b.figures.wins, b.figures.games
        for i in range(a.n_sides):
            for j in range(b.n_sides):
                opp_a = sorted(s for k, s in enumerate(a.strategies) if k != i)
                opp_b = sorted(s for k, s in enumerate(b.strategies) if k != j)
                if opp_a != opp_b or a.strategies[i] == b.strategies[j]:
                    continue
                # Two sides of one run with the same strategy and opposition (3 players:
                # random in greedy,random,random) are one comparison, not two.
                key = (a.name, a.strategies[i], b.name, b.strategies[j], tuple(opp_a))
                if key in seen:
                    continue
                seen.add(key)
                diff = proportion_difference(int(wins_a[i]), games_a, int(wins_b[j]), games_b)
                rows.append({"run_a": a.name, "side_a": a.sides[i], "run_b": b.name,
                             "side_b": b.sides[j], "opposition": ", ".join(opp_a),
                             "win_rate_a": float(wins_a[i] / games_a),
                             "win_rate_b": float(wins_b[j] / games_b), **diff.to_dict()})
    return rows


def side_wins(run: RunData) -> np.ndarray:
    """Each side's wins: from the report's figures, else from the run's streaming summary
    (``sim.store.summary``: kept by a run just played, else read from the games parts)."""
    if run.figures is not None:
        return run.figures.wins
    return run.run.summary.wins


def contests(runs: Sequence[RunData]):
    """Each run as a ratings contest: the strategy of every side and its wins."""
    from sim.stats.ratings import Contest

    out = []
    for run in runs:
        wins = side_wins(run)
        out.append(Contest(tuple(run.strategies), tuple(int(w) for w in wins)))
    return out


def pairwise_matrix(runs: Sequence[RunData]) -> pd.DataFrame:
    """Row strategy's share of the games it and the column strategy decided between them.

    Over every game where both sat at the table and one of them won: with two sides, the
    row's win rate among decided games against the column; with three players, the share
    of the games won by either of the two that the row won (the pairwise comparison the
    Luce model rates). Long format: row, column, wins, games, share, low, high.
    """
    names: list[str] = []
    for run in runs:
        for s in run.strategies:
            if s not in names:
                names.append(s)
    wins = {(a, b): 0 for a in names for b in names}
    for run in runs:
        won = side_wins(run)
        for i, j in combinations(range(run.n_sides), 2):
            a, b = run.strategies[i], run.strategies[j]
            if a == b:
                continue
            wins[(a, b)] += int(won[i])
            wins[(b, a)] += int(won[j])
    rows = []
    for a in names:
        for b in names:
            if a == b:
                continue
            a_won, b_won = wins[(a, b)], wins[(b, a)]
            games = a_won + b_won
            low, high = wilson_interval(a_won, games)
            rows.append({"row": a, "column": b, "wins": a_won, "games": games,
                         "share": a_won / games if games else math.nan, "low": low,
                         "high": high})
    return pd.DataFrame(rows, columns=["row", "column", "wins", "games", "share", "low", "high"])


def rateable(runs: Sequence[RunData]) -> bool:
    """Whether ratings mean something: 3 strategies or more, or a tournament's runs."""
    names = {s for run in runs for s in run.strategies}
    return len(names) >= 3 or any(run.tournament is not None for run in runs)
