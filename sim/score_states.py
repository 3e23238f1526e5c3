"""Win probability from each score state, and how a run's win rate converged.

Why: "how likely is a side to win from 150–200 behind?" is the question a player asks,
and the rounds table answers it directly: it holds every team's score after every round, so
the state at the start of each round is known, and so is who won the game.

**Score states** (:func:`score_states`, ``score-states.csv``). For each side (a lineup
position followed through seat rotation, docs/data-format.md), each game and each round the
side started, the state is (own score, opponents' score) at the start of the round —
0–0 for round 1, else the scores after the previous round (after settlement) — each
binned down to a multiple of ``bin_size``. With 3 players "opponents' score" is the
higher of the two others' scores (the nearer threat). A game counts **once per state
bin** (its first round starting there), so the games behind a cell are independent and
the Wilson interval is valid; a game that stays in one bin for several rounds would
otherwise be counted several times. ``win_rate`` is the share of those games the side went
on to win; an undecided game (round cap) counts as not won.

Columns of ``score-states.csv``: ``players``, ``side`` (lineup side), ``strategy`` (the
side's), ``opponents`` (the other sides' strategies, comma-separated), ``own_low``,
``opponents_low`` (the bins' lower bounds, points), ``bin_size``, ``games`` (games in
which the side started a round in this state), ``wins`` (of those, games the side won),
``win_rate``, ``low``, ``high`` (95% Wilson interval).

**Convergence** (:func:`convergence`, ``convergence.png``): each side's win rate over the
first n games, in game order, with its 95% Wilson band, at about ``points`` values of n
(from 10) spaced evenly on a log scale: it shows how soon the estimate settles, and whether a
``--precision`` run stopped in a stable place. The band is pointwise (for each n), not a
band for the whole path.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from sim.sides import n_teams, opponents_text, players_of, side_columns, side_strategies
from sim.stats import wilson_interval

DEFAULT_BIN = 25
MIN_GAMES = 30  # cells with fewer games are left blank in the heat map
COLUMNS = ["players", "side", "strategy", "opponents", "own_low", "opponents_low",
           "bin_size", "games", "wins", "win_rate", "low", "high"]
DPI = 110
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def _with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["win_rate"] = frame["wins"] / frame["games"]
    bounds = [wilson_interval(w, g) for w, g in zip(frame["wins"], frame["games"])]
    frame["low"] = [b[0] for b in bounds]
    frame["high"] = [b[1] for b in bounds]
    return frame


def start_states(games: pd.DataFrame, rounds: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Every round start: ``(game_id, team scores (rows, teams))``, 0–0 for round 1."""
    players = players_of(games)
    teams = n_teams(players)
    rounds = rounds.sort_values(["game_id", "round_number"], kind="stable")
    ids = rounds["game_id"].to_numpy(np.int64)
    scores = np.column_stack([rounds[f"team{t}_score"].to_numpy(np.int64)
                              for t in range(teams)])
    # the score after a round is the next round's start state, if the game goes on
    has_next = np.zeros(ids.size, dtype=bool)
    has_next[:-1] = ids[1:] == ids[:-1]
    first_ids = games["game_id"].to_numpy(np.int64)
    game_ids = np.concatenate([first_ids, ids[has_next]])
    states = np.vstack([np.zeros((first_ids.size, teams), dtype=np.int64), scores[has_next]])
    return game_ids, states


def score_states(games: pd.DataFrame, rounds: pd.DataFrame,
                 bin_size: int = DEFAULT_BIN) -> pd.DataFrame:
    """Win probability of each side from each binned round-start score state (see module)."""
    if bin_size <= 0:
        raise ValueError("bin_size must be positive")
    if games.empty:
        return pd.DataFrame(columns=COLUMNS)
    players = players_of(games)
    teams = n_teams(players)
    strategies = side_strategies(games)
    games = games.sort_values("game_id", kind="stable")
    game_index = games["game_id"].to_numpy(np.int64)
    game_ids, states = start_states(games, rounds)
    where = np.searchsorted(game_index, game_ids)
    rotation = games["rotation"].to_numpy(np.int64)[where]
    winner = games["winner_side"].to_numpy(np.int64)[where]
    per_side = side_columns(pd.DataFrame({f"team{t}_score": states[:, t]
                                          for t in range(teams)}), "score", rotation, players)
    frames = []
    for side in range(teams):
        own = per_side[:, side]
        others = np.delete(per_side, side, axis=1).max(axis=1)
        frame = pd.DataFrame({"game_id": game_ids,
                              "own_low": (own // bin_size) * bin_size,
                              "opponents_low": (others // bin_size) * bin_size,
                              "won": (winner == side).astype(np.int64)})
        frame = frame.drop_duplicates(["game_id", "own_low", "opponents_low"])
        cells = frame.groupby(["own_low", "opponents_low"], sort=True)["won"].agg(
            games="size", wins="sum").reset_index()
        cells.insert(0, "opponents", opponents_text(strategies, side))
        cells.insert(0, "strategy", strategies[side])
        cells.insert(0, "side", side)
        cells.insert(0, "players", players)
        cells.insert(5, "bin_size", bin_size)
        frames.append(cells)
    table = pd.concat(frames, ignore_index=True)
    table["wins"] = table["wins"].astype(np.int64)
    return _with_intervals(table)[COLUMNS]


def merge_states(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Several runs' score-state tables added per (players, strategy, opponents, cell).

    Sides are merged by strategy and opposition (the side number is dropped: -1), so runs of
    the same pairing, or the pairings of a tournament seen from one strategy, pool their
    games. Every table must use the same ``bin_size``.
    """
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.concat(tables, ignore_index=True)
    if table["bin_size"].nunique() != 1:
        raise ValueError("score-state tables with different bin sizes cannot be merged")
    keys = ["players", "strategy", "opponents", "own_low", "opponents_low", "bin_size"]
    merged = table.groupby(keys, sort=True)[["games", "wins"]].sum().reset_index()
    merged.insert(1, "side", -1)
    return _with_intervals(merged)[COLUMNS]


def convergence(games: pd.DataFrame, points: int = 200) -> pd.DataFrame:
    """Running win rate of every side over the first n games (game order), with its band.

    Columns: ``side``, ``strategy``, ``games`` (n), ``wins``, ``win_rate``, ``low``,
    ``high`` (95% Wilson interval of the first n games).
    """
    columns = ["side", "strategy", "games", "wins", "win_rate", "low", "high"]
    if games.empty:
        return pd.DataFrame(columns=columns)
    strategies = side_strategies(games)
    winner = games.sort_values("game_id", kind="stable")["winner_side"].to_numpy(np.int64)
    n = winner.size
    start = min(10, n)  # fewer games than that say nothing: the band spans most of 0-100%
    marks = np.unique(np.clip(np.round(np.geomspace(start, n, num=min(points, n))), 1, n)
                      .astype(np.int64))
    rows = []
    for side, strategy in enumerate(strategies):
        running = np.cumsum(winner == side)
        for m in marks:
            wins = int(running[m - 1])
            low, high = wilson_interval(wins, int(m))
            rows.append({"side": side, "strategy": strategy, "games": int(m), "wins": wins,
                         "win_rate": wins / m, "low": low, "high": high})
    return pd.DataFrame(rows, columns=columns)


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def score_states_figure(table: pd.DataFrame, min_games: int = MIN_GAMES,
                        title: str | None = None) -> Figure:
    """Heat map per (strategy, opponents): win probability by own and opponents' score.

    Colour centred on 50% (blue: the side is favoured, red: its opponents are); cells from
    fewer than ``min_games`` games are left blank, the rest show the percentage.
    """
    views = table[["strategy", "opponents"]].drop_duplicates().values.tolist()[:4]
    width = 5.2 * max(1, len(views))
    figure = _figure(width, 5.0)
    if not views:
        axes = figure.add_subplot()
        axes.text(0.5, 0.5, "no games", ha="center", va="center")
        axes.set_axis_off()
        return figure
    bin_size = int(table["bin_size"].iloc[0])
    grid = figure.subplots(1, len(views), squeeze=False)[0]
    norm = TwoSlopeNorm(vcenter=0.5, vmin=0.0, vmax=1.0)
    image = None
    for axes, (strategy, opponents) in zip(grid, views):
        cells = table[(table["strategy"] == strategy) & (table["opponents"] == opponents)]
        cells = cells.groupby(["own_low", "opponents_low"])[["games", "wins"]].sum()
        own = np.arange(cells.index.get_level_values(0).min(),
                        cells.index.get_level_values(0).max() + bin_size, bin_size)
        opp = np.arange(cells.index.get_level_values(1).min(),
                        cells.index.get_level_values(1).max() + bin_size, bin_size)
        values = np.full((opp.size, own.size), np.nan)
        for (o, p), row in cells.iterrows():
            if row["games"] >= min_games:
                values[(p - opp[0]) // bin_size, (o - own[0]) // bin_size] = (
                    row["wins"] / row["games"])
        extent = (own[0], own[-1] + bin_size, opp[0], opp[-1] + bin_size)
        image = axes.imshow(values, origin="lower", extent=extent, cmap="RdBu", norm=norm,
                            aspect="auto", interpolation="nearest")
        if values.size <= 400:
            for i in range(opp.size):
                for j in range(own.size):
                    if not math.isnan(values[i, j]):
                        axes.text(own[j] + bin_size / 2, opp[i] + bin_size / 2,
                                  f"{100 * values[i, j]:.0f}", ha="center", va="center",
                                  fontsize=6, color=("white" if abs(values[i, j] - 0.5) > 0.3
                                                     else "black"))
        axes.set_xlabel(f"{strategy}'s score at the round's start (points)")
        axes.set_ylabel("opponents' score at the round's start (points)")
        axes.set_title(f"{strategy} against {opponents}", fontsize=10)
    figure.colorbar(image, ax=list(grid), label="win probability",
                    format=PercentFormatter(xmax=1.0))
    figure.suptitle(title or f"Win probability from each score state ({bin_size}-point bins; "
                    f"blank: fewer than {min_games} games)", fontsize=11)
    return figure


def convergence_figure(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Each side's running win rate with its 95% band, on a log scale of games played."""
    figure = _figure(8.0, 4.5)
    axes = figure.add_subplot()
    for side, rows in table.groupby("side", sort=True):
        color = COLORS[int(side) % len(COLORS)]
        label = f"side {side}: {rows['strategy'].iloc[0]}"
        axes.plot(rows["games"], rows["win_rate"], color=color, label=label)
        axes.fill_between(rows["games"], rows["low"], rows["high"], color=color, alpha=0.2,
                          linewidth=0)
    if not table.empty:
        axes.set_xscale("log")
        final = table.groupby("side")["win_rate"].last()
        for side, rate in final.items():
            axes.axhline(rate, color=COLORS[int(side) % len(COLORS)], linewidth=0.6,
                         linestyle=":")
    axes.set_ylim(0, 1)
    axes.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    axes.set_xlabel("games played (log scale)")
    axes.set_ylabel("win rate so far")
    axes.set_title(title or "Win rate as games accumulate, with its 95% band "
                   "(dotted: final value)")
    axes.legend(loc="best")
    return figure
