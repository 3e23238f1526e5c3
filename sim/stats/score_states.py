"""Win probability from each score state, and how a run's win rate converged: what the two
tables mean, their merge over runs and their charts.

Why: "how likely is a side to win from 150–200 behind?" is the question a player asks, and
the rounds table answers it directly: it holds every team's score after every round, so the
state at the start of each round is known, and so is who won the game. The report counts
both tables in its one pass over a run's parts (``sim.report.aggregate``, the compiled
``sim.report.passes``) and builds them from those counts (``sim.report.states``); this
module defines them, pools them over runs (:func:`merge_states`) and draws them.

**Score states** (``score-states.csv``). For each side (a lineup position followed through
seat rotation, docs/data-format.md), each game and each round the side started, the state is
(own score, opponents' score) at the start of the round — 0–0 for round 1, else the scores
after the previous round (after settlement) — each binned down to a multiple of
``bin_size``. With 3 players "opponents' score" is the higher of the two others' scores (the
nearer threat). A game counts **once per state bin** (its first round starting there), so
the games behind a cell are independent and the Wilson interval is valid; a game that stays
in one bin for several rounds would otherwise be counted several times. ``win_rate`` is the
share of those games the side went on to win; an undecided game (round cap) counts as not
won.

Columns of ``score-states.csv``: ``players``, ``side`` (lineup side), ``strategy`` (the
side's), ``opponents`` (the other sides' strategies, comma-separated), ``own_low``,
``opponents_low`` (the bins' lower bounds, points), ``bin_size``, ``games`` (games in which
the side started a round in this state), ``wins`` (of those, games the side won),
``win_rate``, ``low``, ``high`` (95% Wilson interval).

**Convergence** (``convergence.png``): each side's win rate over the first n games, in game
order, with its 95% Wilson band, at about 200 values of n (from 10) spaced evenly on a log
scale (``sim.report.aggregate.convergence_marks``): it shows how soon the estimate settles,
and whether a ``--precision`` run stopped in a stable place. The band is pointwise (for each
n), not a band for the whole path.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from sim.stats.intervals import wilson_interval

__all__ = [
    "COLUMNS", "convergence_figure", "DEFAULT_BIN", "merge_states", "score_states_figure",
    "with_intervals"
]

DEFAULT_BIN = 25
MIN_GAMES = 30  # cells with fewer games are left blank in the heat map
MAX_RUN_PANELS = 12  # convergence panels (one per run) in one figure
MAX_PANELS = 8  # heat-map panels (strategy against its opponents) in one figure
# the columns of score-states.csv
COLUMNS = ["players", "side", "strategy", "opponents", "own_low", "opponents_low",
           "bin_size", "games", "wins", "win_rate", "low", "high"]
DPI = 110
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#7f7f7f"]


def with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of cells (``games``, ``wins``) with each cell's win rate and its 95% Wilson
    interval (``low``, ``high``) added: how every score-state table is finished (here and in
    ``sim.report.states``)."""
    frame = frame.copy()
    frame["win_rate"] = frame["wins"] / frame["games"]
    bounds = [wilson_interval(w, g) for w, g in zip(frame["wins"], frame["games"])]
    frame["low"] = [b[0] for b in bounds]
    frame["high"] = [b[1] for b in bounds]
    return frame


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
    assert image is not None  # one panel at least (no views returned above)
    figure.colorbar(image, ax=list(grid), label="win probability",
                    format=PercentFormatter(xmax=1.0))
    shown = "" if len(views) == table[["strategy", "opponents"]].drop_duplicates().shape[0] \
        else f"; the first {len(views)} views"
    figure.suptitle(title or f"Win probability from each score state ({bin_size}-point bins; "
                    f"blank: fewer than {min_games} games{shown})", fontsize=11)
    return figure


def _convergence_axes(axes, table: pd.DataFrame, legend: bool = True) -> None:
    for side in np.unique(table["side"].to_numpy()):  # sorted
        rows = table[table["side"] == side]
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
