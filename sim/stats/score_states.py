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

import matplotlib
import matplotlib.text
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from sim.stats.intervals import wilson_interval
from sim.stats.sides import n_teams, opponents_text, players_of, side_columns, side_strategies

DEFAULT_BIN = 25
MIN_GAMES = 30  # cells with fewer games are left blank in the heat map
MAX_RUN_PANELS = 12  # convergence panels (one per run) in one figure
MAX_PANELS = 8  # heat-map panels (strategy against its opponents) in one figure
COLUMNS = ["players", "side", "strategy", "opponents", "own_low", "opponents_low",
           "bin_size", "games", "wins", "win_rate", "low", "high"]
DPI = 110
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#7f7f7f"]


def with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of cells (``games``, ``wins``) with each cell's win rate and its 95% Wilson
    interval (``low``, ``high``) added: how every score-state table is finished, here and in
    ``sim.report.states``."""
    frame = frame.copy()
    frame["win_rate"] = frame["wins"] / frame["games"]
    bounds = [wilson_interval(w, g) for w, g in zip(frame["wins"], frame["games"])]
    frame["low"] = [b[0] for b in bounds]
    frame["high"] = [b[1] for b in bounds]
    return frame


def start_states(games: pd.DataFrame, rounds: pd.DataFrame,
                 players: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every round start: ``(game_id, team scores (rows, teams))``, 0–0 for round 1."""
    players = players or players_of(games)
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


def score_states(games: pd.DataFrame, rounds: pd.DataFrame, bin_size: int = DEFAULT_BIN,
                 players: int | None = None,
                 strategies: list[str] | None = None) -> pd.DataFrame:
    """Win probability of each side from each binned round-start score state (see module).

    ``players`` and ``strategies`` (per lineup side) default to the tables' ``players`` and
    ``seat{s}_strategy`` columns; pass them when the tables were read without those.
    """
    if bin_size <= 0:
        raise ValueError("bin_size must be positive")
    if games.empty:
        return pd.DataFrame(columns=COLUMNS)
    players = players or players_of(games)
    teams = n_teams(players)
    strategies = list(strategies) if strategies is not None else side_strategies(games)
    games = games.sort_values("game_id", kind="stable")
    game_index = games["game_id"].to_numpy(np.int64)
    game_ids, states = start_states(games, rounds, players)
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
    return with_intervals(table)[COLUMNS]


def merge_states(tables: list[pd.DataFrame], pool_opponents: bool = False) -> pd.DataFrame:
    """Several runs' score-state tables added per (players, strategy, opponents, cell).

    Sides are merged by strategy and opposition (the side number is dropped: -1), so runs of
    the same pairing pool their games; ``pool_opponents`` also pools every opposition
    (``opponents`` becomes ``"the field"``): a tournament's pairings seen from each
    strategy. Every table must use the same ``bin_size``.
    """
    tables = [t for t in tables if not t.empty]
    if not tables:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.concat(tables, ignore_index=True)
    if pool_opponents:
        table["opponents"] = "the field"
    if table["bin_size"].nunique() != 1:
        raise ValueError("score-state tables with different bin sizes cannot be merged")
    keys = ["players", "strategy", "opponents", "own_low", "opponents_low", "bin_size"]
    merged = table.groupby(keys, sort=True)[["games", "wins"]].sum().reset_index()
    merged.insert(1, "side", -1)
    return with_intervals(merged)[COLUMNS]


def convergence(games: pd.DataFrame, points: int = 200,
                strategies: list[str] | None = None) -> pd.DataFrame:
    """Running win rate of every side over the first n games (game order), with its band.

    Columns: ``side``, ``strategy``, ``games`` (n), ``wins``, ``win_rate``, ``low``,
    ``high`` (95% Wilson interval of the first n games).
    """
    columns = ["side", "strategy", "games", "wins", "win_rate", "low", "high"]
    if games.empty:
        return pd.DataFrame(columns=columns)
    strategies = list(strategies) if strategies is not None else side_strategies(games)
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


def field_convergence(runs: list[tuple[pd.DataFrame, list[str]]],
                      points: int = 200) -> pd.DataFrame:
    """Each strategy's running win rate against the field, over a tournament's pairings.

    ``runs`` holds each pairing's games and its sides' strategies. After the first n games
    of every pairing (game order; a shorter pairing counts all its games), a strategy's
    wins over its games so far, with the 95% Wilson band: how the aggregate win rates of a
    tournament settled as its pairings grew. Columns as :func:`convergence` (``side`` is the
    strategy's index) plus ``label`` (the strategy); ``games`` is n, games per pairing.
    """
    columns = ["side", "strategy", "label", "games", "wins", "win_rate", "low", "high"]
    lengths = [len(games) for games, _ in runs]
    if not runs or max(lengths) == 0:
        return pd.DataFrame(columns=columns)
    longest = max(lengths)
    marks = np.unique(np.clip(np.round(np.geomspace(min(10, longest), longest,
                                                    num=min(points, longest))), 1, longest)
                      .astype(np.int64))
    names: list[str] = []
    wins: dict[str, np.ndarray] = {}
    games_so_far: dict[str, np.ndarray] = {}
    for games, strategies in runs:
        winner = games.sort_values("game_id", kind="stable")["winner_side"].to_numpy(np.int64)
        upto = np.minimum(marks, winner.size)
        for side, strategy in enumerate(strategies):
            if strategy not in wins:
                names.append(strategy)
                wins[strategy] = np.zeros(marks.size, dtype=np.int64)
                games_so_far[strategy] = np.zeros(marks.size, dtype=np.int64)
            running = np.concatenate([[0], np.cumsum(winner == side)])
            wins[strategy] += running[upto]
            games_so_far[strategy] += upto
    rows = []
    for index, strategy in enumerate(names):
        for m, won, played in zip(marks, wins[strategy], games_so_far[strategy]):
            low, high = wilson_interval(int(won), int(played))
            rows.append({"side": index, "strategy": strategy, "label": strategy,
                         "games": int(m), "wins": int(won), "win_rate": won / played,
                         "low": low, "high": high})
    return pd.DataFrame(rows, columns=columns)


def run_tables(runs: list[tuple], bin_size: int = DEFAULT_BIN,
               pool_opponents: bool | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score states (merged over runs) and convergence (with a ``run`` column) of runs.

    ``runs`` holds ``(name, games, rounds)`` or ``(name, games, rounds, players,
    strategies)``. ``pool_opponents`` defaults to pooling when the runs hold more than two
    strategies (a tournament: each strategy against the field).
    """
    runs = [tuple(run) + (None, None) if len(run) == 3 else tuple(run) for run in runs]
    states = [score_states(games, rounds, bin_size, players, strategies)
              for _, games, rounds, players, strategies in runs]
    if pool_opponents is None:
        names = {s for table in states for s in table["strategy"]}
        pool_opponents = len(names) > 2
    merged = merge_states(states, pool_opponents) if len(runs) > 1 or pool_opponents \
        else states[0]
    paths = []
    for name, games, _, _, strategies in runs:
        path = convergence(games, strategies=strategies)
        path.insert(0, "run", name)
        paths.append(path)
    return merged, pd.concat(paths, ignore_index=True)


def write_outputs(folder, states: pd.DataFrame, paths: pd.DataFrame) -> dict:
    """``score-states.csv``, ``score-states.png`` and ``convergence.png`` into ``folder``."""
    from pathlib import Path

    folder = Path(folder)
    files = {"score-states.csv": folder / "score-states.csv",
             "score-states.png": folder / "score-states.png",
             "convergence.png": folder / "convergence.png"}
    states.to_csv(files["score-states.csv"], index=False)
    for name, figure in (("score-states.png", score_states_figure(states)),
                         ("convergence.png", convergence_figure(paths))):
        with matplotlib.rc_context({"text.parse_math": False}):  # labels are data
            for text in figure.findobj(matplotlib.text.Text):
                text.set_parse_math(False)
            figure.savefig(files[name], format="png", dpi=DPI, facecolor="white")
    return files


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
    views = table[["strategy", "opponents"]].drop_duplicates().values.tolist()[:MAX_PANELS]
    columns = min(4, max(1, len(views)))
    lines = max(1, math.ceil(len(views) / columns))
    figure = _figure(4.6 * columns + 1.0, 4.4 * lines + 0.6)
    if not views:
        axes = figure.add_subplot()
        axes.text(0.5, 0.5, "no games", ha="center", va="center")
        axes.set_axis_off()
        return figure
    bin_size = int(table["bin_size"].iloc[0])
    cells_grid = figure.subplots(lines, columns, squeeze=False).ravel()
    for spare in cells_grid[len(views):]:
        spare.set_axis_off()
    grid = cells_grid[:len(views)]
    norm = TwoSlopeNorm(vcenter=0.5, vmin=0.0, vmax=1.0)
    image = None
    # Numbers in the cells only while they stay readable (and cheap: each is a text to lay
    # out); a tournament's 8 panels show colours, the CSV has every number.
    annotate = len(views) <= 2
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
        if annotate and values.size <= 400:
            for i in range(opp.size):
                for j in range(own.size):
                    if not math.isnan(values[i, j]):
                        axes.text(own[j] + bin_size / 2, opp[i] + bin_size / 2,
                                  f"{100 * values[i, j]:.0f}", ha="center", va="center",
                                  fontsize=6, color=("white" if abs(values[i, j] - 0.5) > 0.3
                                                     else "black"))
        axes.set_xlabel(f"{strategy}'s score at the round's start (points)", fontsize=8)
        axes.set_ylabel("opponents' score at the round's start (points)", fontsize=8)
        axes.set_title(f"{strategy} against {opponents}", fontsize=10)
    figure.colorbar(image, ax=list(grid), label="win probability",
                    format=PercentFormatter(xmax=1.0))
    shown = "" if len(views) == table[["strategy", "opponents"]].drop_duplicates().shape[0] \
        else f"; the first {len(views)} views"
    figure.suptitle(title or f"Win probability from each score state ({bin_size}-point bins; "
                    f"blank: fewer than {min_games} games{shown})", fontsize=11)
    return figure


def _convergence_axes(axes, table: pd.DataFrame, legend: bool = True) -> None:
    for side, rows in table.groupby("side", sort=True):
        color = COLORS[int(side) % len(COLORS)]
        label = (rows["label"].iloc[0] if "label" in rows.columns and isinstance(
            rows["label"].iloc[0], str) else f"side {side}: {rows['strategy'].iloc[0]}")
        axes.plot(rows["games"], rows["win_rate"], color=color, label=label)
        axes.fill_between(rows["games"], rows["low"], rows["high"], color=color, alpha=0.2,
                          linewidth=0)
        axes.axhline(rows["win_rate"].iloc[-1], color=color, linewidth=0.6, linestyle=":")
    if not table.empty:
        axes.set_xscale("log")
    axes.set_ylim(0, 1)
    axes.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    if legend:
        axes.legend(loc="best", fontsize=8)


def convergence_figure(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Each side's running win rate with its 95% band, on a log scale of games played.

    A table with a ``run`` column holding several runs gets one panel per run (at most
    ``MAX_RUN_PANELS``, the first ones, as the title says).
    """
    runs = list(dict.fromkeys(table["run"])) if "run" in table.columns else [None]
    shown = runs[:MAX_RUN_PANELS]
    heading = title or ("Win rate as games accumulate, with its 95% band (dotted: final "
                        "value)" + (f"; the first {len(shown)} of {len(runs)} runs"
                                    if len(shown) < len(runs) else ""))
    if len(shown) <= 1:
        figure = _figure(8.0, 4.5)
        axes = figure.add_subplot()
        _convergence_axes(axes, table)
        axes.set_xlabel("games played (log scale)")
        axes.set_ylabel("win rate so far")
        named = shown and isinstance(shown[0], str) and shown[0].startswith("tournament ")
        axes.set_title(heading + (f"\n{shown[0]}" if named else ""), fontsize=10)
        return figure
    columns = min(3, len(shown))
    lines = math.ceil(len(shown) / columns)
    figure = _figure(4.2 * columns, 3.0 * lines + 0.6)
    grid = figure.subplots(lines, columns, squeeze=False).ravel()
    for axes in grid[len(shown):]:
        axes.set_axis_off()
    for axes, run in zip(grid, shown):
        _convergence_axes(axes, table[table["run"] == run])
        axes.set_title(str(run), fontsize=9)
        axes.set_xlabel("games played (log scale)", fontsize=8)
        axes.set_ylabel("win rate so far", fontsize=8)
    figure.suptitle(heading, fontsize=11)
    return figure
