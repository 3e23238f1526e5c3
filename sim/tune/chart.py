"""The learning curve of ``sniff tune``: win rate per generation, with 95% intervals.

Built on the Agg canvas without ``pyplot`` (as ``sim.display.charts``), so it never touches a
notebook's backend.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from sim.display.charts import DPI, PERCENT
from sim.stats.intervals import wilson_interval

__all__: list[str] = []  # nothing here is used outside sim.tune


def generation_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per generation: the best candidate and the mean of all, with Wilson intervals.

    The mean's interval pools the generation's games (every candidate plays as many); the
    best is the highest of ``popsize`` noisy rates, so it sits above its true value.
    """
    rows = []
    for generation in np.unique(trials["generation"].to_numpy()):  # sorted
        group = trials[trials["generation"] == generation]
        best = group.iloc[int(np.nanargmax(group["win_rate"].to_numpy(dtype=np.float64)))]
        wins, games = int(group["wins"].sum()), int(group["games"].sum())
        rows.append({
            "generation": int(generation),
            "best": float(best["win_rate"]), "best_low": float(best["low"]),
            "best_high": float(best["high"]),
            "mean": wins / games, "mean_low": wilson_interval(wins, games)[0],
            "mean_high": wilson_interval(wins, games)[1],
        })
    return pd.DataFrame(rows)


def learning_curve(trials: pd.DataFrame, config) -> Figure:
    """Best and mean win rate of each generation against the field, and the even line."""
    table = generation_table(trials)
    figure = Figure(figsize=(8.0, 4.5), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    x = table["generation"].to_numpy()
    axes.fill_between(x, table["mean_low"], table["mean_high"], color="#1f77b4", alpha=0.2,
                      linewidth=0, label="95% interval of the mean")
    axes.plot(x, table["mean"], color="#1f77b4", label="mean of the generation's candidates")
    errors = np.vstack([(table["best"] - table["best_low"]).clip(lower=0),
                        (table["best_high"] - table["best"]).clip(lower=0)])
    axes.errorbar(x, table["best"], yerr=errors, fmt="o", markersize=3, color="#d62728",
                  elinewidth=0.8, label="best candidate (95% Wilson; selected, so biased up)")
    even = 1 / 3 if config.players == 3 else 1 / 2
    axes.axhline(even, color="grey", linestyle="--", linewidth=1, label="even chances")
    axes.yaxis.set_major_formatter(PERCENT)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("generation")
    axes.set_ylabel("win rate against the field")
    name = config.strategy.partition(":")[0]
    from strategies import parse_spec

    field = ", ".join(parse_spec(text).label for text in config.against)
    axes.set_title(f"sniff tune {name} against {field} ({config.players} players): "
                   f"{config.popsize} candidates x {config.games_per_trial:,} games "
                   "per generation", fontsize=10)
    axes.legend(fontsize=8, loc="best")
    return figure
