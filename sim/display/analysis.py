"""Charts of a ``sniff analyze`` folder in a report: one function per chart, each returning a
matplotlib ``Figure`` drawn as ``sim.display.charts`` draws (no ``pyplot``, titles, axis
labels with units, a legend, 95% intervals as error bars).

They only draw: the figures come from the analysis's own tables (``phases.csv``, the
decisions' losses), so the chart and its table in the report say the same thing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from sim.display.charts import PERCENT, _color, _figure

PHASES = ("opening", "boneyard", "empty")
LOSS_GRID = np.logspace(-1, 2, 121)  # 0.1 to 100 points of win chance


def error_rate_by_phase(phases: pd.DataFrame, name: str) -> Figure:
    """Per strategy, the share of its decisions marked as errors in each phase of the
    round, with the 95% interval over games (``phases.csv``: ``strategy``, ``phase``,
    ``error_rate``, ``error_rate_low``, ``error_rate_high``, ``decisions``)."""
    strategies = list(dict.fromkeys(phases["strategy"]))
    present = [phase for phase in PHASES if phase in set(phases["phase"])]
    figure = _figure(8.5, 4.5)
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(strategies))
    x = np.arange(len(present))
    for index, strategy in enumerate(strategies):
        rows = phases[phases["strategy"] == strategy].set_index("phase")
        rows = rows.reindex(present)
        offset = (index - (len(strategies) - 1) / 2) * width
        rate = rows["error_rate"].to_numpy(dtype=float)
        errors = np.nan_to_num(np.vstack([
            (rows["error_rate"] - rows["error_rate_low"]).clip(lower=0).to_numpy(float),
            (rows["error_rate_high"] - rows["error_rate"]).clip(lower=0).to_numpy(float)]))
        axes.bar(x + offset, np.nan_to_num(rate), width, color=_color(index), alpha=0.8,
                 label=strategy)
        axes.errorbar(x + offset, np.nan_to_num(rate), yerr=errors, fmt="none",
                      ecolor="black", capsize=3)
    counts = phases.groupby("phase")["decisions"].sum()
    axes.set_xticks(x, [f"{phase}\n({int(counts.get(phase, 0)):,} decisions)"
                        for phase in present], fontsize=8)
    axes.yaxis.set_major_formatter(PERCENT)
    axes.set_ylim(bottom=0)
    axes.set_xlabel("phase of the round")
    axes.set_ylabel("error rate (% of decisions marked)")
    axes.set_title(f"{name}: error rate by phase (95% intervals over games)")
    axes.legend(title="strategy", fontsize=8, title_fontsize=8)
    return figure


def loss_distribution(decisions: pd.DataFrame, thresholds: tuple[float, float, float],
                      name: str) -> Figure:
    """Per strategy, the share of its decisions that gave up at least x points of win
    chance (x on a log scale; a move not separated from the best counts as giving up
    nothing), with the marks' thresholds as dotted lines (``decisions``: ``strategy``,
    ``loss_full``, ``separated``)."""
    figure = _figure(8.5, 4.5)
    axes = figure.add_subplot()
    for index, (strategy, rows) in enumerate(decisions.groupby("strategy", sort=True)):
        lost = np.where(rows["separated"].to_numpy(bool),
                        100 * rows["loss_full"].to_numpy(float), 0.0)
        ordered = np.sort(lost)
        share = 1.0 - np.searchsorted(ordered, LOSS_GRID, side="left") / max(1, len(lost))
        axes.step(LOSS_GRID, share, where="post", color=_color(index),
                  label=f"{strategy} ({len(lost):,} decisions)")
    for threshold, mark in zip(thresholds, ("inaccuracy", "mistake", "blunder")):
        axes.axvline(100 * threshold, color="gray", linestyle=":", linewidth=1)
        axes.annotate(mark, (100 * threshold, 1.0), xycoords=("data", "axes fraction"),
                      xytext=(3, -12), textcoords="offset points", fontsize=7, color="gray")
    axes.set_xscale("log")
    axes.set_xlim(LOSS_GRID[0], LOSS_GRID[-1])
    # plain numbers: the report draws text literally, so no mathtext powers of ten
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_ylim(bottom=0)
    axes.yaxis.set_major_formatter(PERCENT)
    axes.set_xlabel("win chance given up against the best move (percentage points, log scale)")
    axes.set_ylabel("share of decisions giving up at least x")
    axes.set_title(f"{name}: distribution of the win chance lost per decision")
    axes.legend(title="strategy", fontsize=8, title_fontsize=8)
    return figure


__all__ = ["error_rate_by_phase", "loss_distribution"]
