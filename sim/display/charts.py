"""Charts of a report: one function per chart, each returning a matplotlib ``Figure``.

Why ``Figure`` objects and no ``pyplot``: figures built directly on the Agg canvas need no
GUI backend and leave a notebook's backend alone (``import sim.display.charts`` never switches it);
a notebook shows the returned figure as it is, and :func:`save` writes a PNG. Every chart
has a title, axis labels with units and a legend, so it can be shared on its own; intervals
are 95% (Wilson for rates), drawn as error bars.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator, PercentFormatter

from sim.core.seating import team_count
from sim.display.formatting import p_value_text, pct

__all__ = [
    "differences", "DPI", "game_length", "pairwise_matrix", "penalties", "PERCENT",
    "placement_scores", "png_bytes", "points_per_round", "ratings", "round_endings", "save",
    "score_margin", "win_rates", "win_rates_by_position"
]

DPI = 110
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#7f7f7f"]
PERCENT = PercentFormatter(xmax=1.0)  # as many decimals as the ticks need


def _figure(width: float = 8.0, height: float = 4.5) -> Figure:
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save(figure: Figure, path: str | Path) -> Path:
    """Write the figure as a PNG (white background, the size it was drawn at)."""
    path = Path(path)
    with quiet_glyphs():
        figure.savefig(path, format="png", dpi=DPI, facecolor="white")
    return path


def png_bytes(figure: Figure, dpi: int = DPI, facecolor: str = "white") -> bytes:
    """The figure as PNG bytes, every text drawn as written (``plain_text``)."""
    import io

    buffer = io.BytesIO()
    with plain_text(figure), quiet_glyphs():
        figure.savefig(buffer, format="png", dpi=dpi, facecolor=facecolor)
    return buffer.getvalue()


@contextmanager
def quiet_glyphs() -> Iterator[None]:
    """A context without matplotlib's warnings about the labels it draws: "Glyph 27
    (\\x1b) missing from font" (a label with a control character, a folder's name being
    data, is drawn as a box, and the warning would write that character raw onto the
    user's terminal) and "constrained_layout not applied" (a very long label leaves the
    axes no room; the chart is drawn as it can be, and the warning names a source file)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        warnings.filterwarnings("ignore", message="constrained_layout not applied")
        yield


def plain_text(figure: Figure):
    """A context in which the figure draws every text literally: a label is data (a
    strategy's label, a folder's), so ``$\\frac{`` must be shown, not parsed as mathtext
    (which fails, or renders something else). Texts made while drawing (tick labels) take
    the setting from the context; those already made are switched one by one."""
    import matplotlib
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        text.set_parse_math(False)
    return matplotlib.rc_context({"text.parse_math": False})


def _color(index: int) -> str:
    return COLORS[index % len(COLORS)]


def _errors(frame: pd.DataFrame, value: str = "win_rate") -> np.ndarray:
    low = (frame[value] - frame["low"]).clip(lower=0).fillna(0).to_numpy()
    high = (frame["high"] - frame[value]).clip(lower=0).fillna(0).to_numpy()
    return np.vstack([low, high])


def win_rates(summary: pd.DataFrame, players: int,
              title: str = "Win rate per strategy, with 95% Wilson intervals") -> Figure:
    """Win rate of every side of every run (or strategy), with its 95% Wilson interval."""
    runs = list(dict.fromkeys(summary["run"]))
    labels = [side if len(runs) == 1 else f"{run}: {side}"
              for run, side in zip(summary["run"], summary["side"])]
    height = max(2.6, 0.45 * len(summary) + 1.6)
    figure = _figure(8.5, height)
    axes = figure.add_subplot()
    y = np.arange(len(summary))[::-1]
    colors = [_color(runs.index(run)) for run in summary["run"]]
    axes.barh(y, summary["win_rate"], color=colors, alpha=0.8, height=0.6)
    axes.errorbar(summary["win_rate"], y, xerr=_errors(summary), fmt="none", ecolor="black",
                  capsize=4, label="95% Wilson interval")
    for yi, (_, row) in zip(y, summary.iterrows()):
        text = (f"{pct(row['win_rate'])} ({pct(row['low'])}–{pct(row['high'])}), "
                f"{row['games']:,} games")
        if row["win_rate"] > 0.55:  # inside the bar, left of the interval
            axes.text(row["low"] - 0.015, yi, text, va="center", ha="right", fontsize=8,
                      color="white", fontweight="bold")
        else:
            axes.text(row["high"] + 0.015, yi, text, va="center", fontsize=8)
    even = 1 / team_count(players)
    axes.axvline(even, color="gray", linestyle="--", linewidth=1,
                 label=f"even chances ({pct(even, 0)})")
    axes.set_yticks(y, labels)
    axes.set_xlim(0, 1)
    axes.xaxis.set_major_formatter(PERCENT)
    axes.set_xlabel("win rate (% of games played)")
    axes.set_title(title)
    figure.legend(loc="outside lower center", ncols=2, fontsize=8)
    return figure


def _grouped_rates(axes, table: pd.DataFrame, title: str) -> None:
    positions = list(dict.fromkeys(table["position"]))
    sides = list(dict.fromkeys(table["side"]))
    width = 0.8 / len(sides)
    x = np.arange(len(positions))
    for index, side in enumerate(sides):
        rows = table[table["side"] == side].set_index("position").loc[positions].reset_index()
        offset = (index - (len(sides) - 1) / 2) * width
        axes.bar(x + offset, rows["win_rate"], width, color=_color(index), alpha=0.8,
                 label=side)
        axes.errorbar(x + offset, rows["win_rate"], yerr=_errors(rows), fmt="none",
                      ecolor="black", capsize=3)
        for xi, (_, row) in zip(x + offset, rows.iterrows()):
            axes.text(xi, row["high"] + 0.015, pct(row["win_rate"]), ha="center", fontsize=7)
    axes.set_xticks(x, [p.replace(" round 1", "\nround 1") for p in positions], fontsize=8)
    axes.set_ylim(0, 1.08)
    axes.set_yticks(np.linspace(0, 1, 6))
    axes.yaxis.set_major_formatter(PERCENT)
    axes.set_ylabel("win rate (% of games)")
    axes.set_title(title, fontsize=10)


def _leader_effect(axes, leading: pd.DataFrame) -> None:
    """Per side: win rate when its side leads round 1 minus when another side leads.

    ``leading`` is ``sim.stats.effects.leader_by_side_from`` (``side``, ``estimate``, ``low``,
    ``high``): the numbers are computed there, the chart only draws them.
    """
    sides = list(leading["side"])
    y = np.arange(len(sides))[::-1]
    for yi, (index, (_, row)) in zip(y, enumerate(leading.iterrows())):
        errors = np.nan_to_num([[row["estimate"] - row["low"]], [row["high"] - row["estimate"]]])
        axes.errorbar(row["estimate"], yi, xerr=errors, fmt="o", color=_color(index),
                      capsize=4)
        axes.annotate(f"{100 * row['estimate']:+.1f} pp ({100 * row['low']:+.1f} to "
                      f"{100 * row['high']:+.1f})", (row["estimate"], yi), xytext=(0, 8),
                      textcoords="offset points", ha="center", fontsize=7)
    axes.axvline(0, color="gray", linestyle="--", linewidth=1)
    axes.set_yticks(y, sides, fontsize=8)
    axes.set_ylim(-0.7, len(sides) - 0.3)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:+.0f}"))
    axes.set_xlabel("win rate when its side leads round 1 minus otherwise (pp, 95% CI)",
                    fontsize=8)
    axes.set_title("value of leading round 1 (leader drawn at random)", fontsize=10)


def win_rates_by_position(by_seat: pd.DataFrame, leading: pd.DataFrame, run: str) -> Figure:
    """Win rate by seat (95% Wilson), and the value of leading round 1 as a difference.

    Leading is shown as a difference with its interval (Newcombe), not as two 0–100% bars:
    the question is how much leading is worth, which two bars make the reader subtract.
    """
    figure = _figure(11, 4.3)
    left, right = figure.subplots(1, 2)
    _grouped_rates(left, by_seat, "by seat")
    _leader_effect(right, leading)
    figure.suptitle(f"{run}: win rate by seat (95% Wilson) and the value of leading")
    handles, labels = left.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels),
                  fontsize=8, title="strategy", title_fontsize=8)
    return figure


def differences(table: pd.DataFrame) -> Figure:
    """Differences of win rates (stronger − weaker) with 95% intervals and p-values.

    The axis spans the intervals and zero, never beyond ±100 percentage points (a win-rate
    difference cannot exceed them); the estimates and p-values are written in a column to
    the right of the plot, so they need no room on the axis.
    """
    runs = list(dict.fromkeys(table["run"]))
    # The run's name only where the pair alone is ambiguous (a tournament's pairings are not)
    pairs = list(zip(table["side_a"], table["side_b"], table["unit"]))
    named = len(runs) > 1 and len(set(pairs)) < len(pairs)
    labels = []
    for _, row in table.iterrows():
        where = f"{row['run']}: " if named else ""
        unit = "per deal (paired)" if row["unit"] == "deal" else "per game"
        labels.append(f"{where}{row['side_a']} − {row['side_b']}, {unit}")
    height = max(2.4, 0.32 * len(table) + 1.6)
    figure = _figure(10, height)
    axes = figure.add_subplot()
    y = np.arange(len(table))[::-1]
    errors = np.vstack([(table["estimate"] - table["low"]).to_numpy(),
                        (table["high"] - table["estimate"]).to_numpy()])
    colors = [_color(1 if unit == "deal" else 0) for unit in table["unit"]]
    errors = np.nan_to_num(errors)
    for index in range(len(table)):
        axes.errorbar(table["estimate"].iloc[index], y[index], xerr=errors[:, index:index + 1],
                      fmt="o", color=colors[index], capsize=3, markersize=4)
    axes.axvline(0, color="gray", linestyle="--", linewidth=1, label="no difference")
    for yi, (_, row) in zip(y, table.iterrows()):
        holm = row.get("p_holm", math.nan)
        holm_text = "" if holm is None or not math.isfinite(holm) else \
            f" (Holm {p_value_text(holm)})"
        axes.annotate(f"{100 * row['estimate']:+.1f} pp, p {p_value_text(row['p_value'])}"
                      f"{holm_text}", (1.01, yi), xycoords=("axes fraction", "data"),
                      va="center", fontsize=7)
    axes.set_yticks(y, labels, fontsize=7 if len(table) > 12 else 8)
    axes.set_ylim(-0.7, len(table) - 0.3)
    lo = min(0.0, float(np.nanmin(table["low"]))) if len(table) else 0.0
    hi = max(0.0, float(np.nanmax(table["high"]))) if len(table) else 0.0
    span = max(hi - lo, 0.02)
    axes.set_xlim(max(-1.0, lo - 0.05 * span), min(1.0, hi + 0.05 * span))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:+.0f}"))
    axes.set_xlabel("win-rate difference, stronger − weaker (percentage points), with 95% "
                    "interval")
    axes.set_title("Difference between strategies' win rates")
    axes.scatter([], [], color=_color(0), label="over games")
    if (table["unit"] == "deal").any():
        axes.scatter([], [], color=_color(1), label="paired by duplicate deal")
    figure.legend(loc="outside lower center", ncols=3, fontsize=8)
    return figure


def _share_bars(axes, table: pd.DataFrame, group: str, key: str, value: str = "share",
                labels: dict | None = None) -> None:
    groups = list(dict.fromkeys(table[group]))
    keys = np.sort(table[key].unique())
    width = 0.85 / max(1, len(groups))
    step = np.min(np.diff(keys)) if keys.size > 1 else 1
    for index, name in enumerate(groups):
        rows = table[table[group] == name]
        offset = (index - (len(groups) - 1) / 2) * width * step
        axes.bar(rows[key] + offset, rows[value], width * step, color=_color(index),
                 alpha=0.8, label=(labels or {}).get(name, name))
    axes.yaxis.set_major_formatter(PERCENT)
    # Ticks on the values' own grid (multiples of 5 for points): never between two values.
    every = max(1, math.ceil(((keys.max() - keys.min()) / step + 1) / 14)) if keys.size else 1
    axes.xaxis.set_major_locator(MultipleLocator(int(step * every)))


def points_per_round(table: pd.DataFrame, run: str, means: dict | None = None) -> Figure:
    """Share of rounds in which a side scored each number of points by placements."""
    figure = _figure()
    axes = figure.add_subplot()
    labels = {s: f"{s} (mean {means[s][0]:.2f} ± {means[s][1]:.2f} SE)" for s in means} \
        if means else None
    _share_bars(axes, table, "side", "points", labels=labels)
    rounds = int(table.groupby("side")["rounds"].sum().iloc[0])
    axes.set_xlabel("points scored by placements in the round (points)")
    axes.set_ylabel("share of rounds (%)")
    axes.set_title(f"{run}: points per round by side ({rounds:,} rounds)")
    axes.legend(title="strategy", fontsize=8, title_fontsize=8)
    return figure


def score_margin(table: pd.DataFrame, run: str, mean_se: tuple[float, float]) -> Figure:
    """Winner's final score minus the runner-up's, by which side won (10-point bins)."""
    figure = _figure()
    axes = figure.add_subplot()
    top = int(table["margin"].max()) if len(table) else 10
    bins = np.arange(0, max(top, 10) + 10, 10)
    for index, (side, rows) in enumerate(table.groupby("winner", sort=False)):
        axes.hist(rows["margin"], bins=bins.tolist(), weights=rows["games"], histtype="step",
                  linewidth=2, color=_color(index), label=f"won by {side} "
                  f"({int(rows['games'].sum()):,} games)")
    mean, se = mean_se
    axes.set_xlabel("final score margin: winner minus runner-up (points, 10-point bins)")
    axes.set_ylabel("games")
    axes.set_title(f"{run}: final score margin (mean {mean:.1f} ± {se:.1f} SE points)")
    axes.legend(fontsize=8)
    return figure


def game_length(table: pd.DataFrame, run: str, mean_se: tuple[float, float]) -> Figure:
    """Share of games lasting each number of rounds."""
    figure = _figure()
    axes = figure.add_subplot()
    mean, se = mean_se
    axes.bar(table["rounds"], table["share"], width=0.8, color=_color(0), alpha=0.8,
             label=f"{int(table['games'].sum()):,} games; mean {mean:.2f} ± {se:.2f} SE rounds")
    axes.axvline(mean, color="black", linestyle="--", linewidth=1, label="mean")
    axes.yaxis.set_major_formatter(PERCENT)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("game length (rounds, the last one possibly cut short by the target)")
    axes.set_ylabel("share of games (%)")
    axes.set_title(f"{run}: game length")
    axes.legend(fontsize=8)
    return figure


def placement_scores(sample: dict, run: str) -> Figure:
    """Share of placements scoring 5, 10, 15, ... points, from the traced sample."""
    figure = _figure()
    axes = figure.add_subplot()
    table = sample["table"]
    labels = {}
    for side, rows in table.groupby("side", sort=False):
        scoring = rows.loc[rows["points"] > 0, "share"].sum()
        labels[side] = f"{side} ({pct(scoring, 0)} of its placements score)"
    _share_bars(axes, table[table["points"] > 0], "side", "points", labels=labels)
    axes.set_xlabel("points scored by one placement (points)")
    axes.set_ylabel("share of all the side's placements (%)")
    axes.set_title(f"{run}: placement scores — SAMPLE of {sample['games']:,} traced games "
                   f"({sample['placements']:,} placements)", fontsize=10)
    axes.legend(title="strategy", fontsize=8, title_fontsize=8)
    return figure


def penalties(table: pd.DataFrame, run: str, means: dict) -> Figure:
    """Share of settled rounds with each settlement penalty, by side."""
    figure = _figure()
    axes = figure.add_subplot()
    labels = {s: f"{s} (mean {m:.2f} ± {se:.2f} SE)" for s, (m, se) in means.items()}
    _share_bars(axes, table, "side", "penalty", labels=labels)
    axes.set_xlabel("settlement penalty of the side in a round (points, hands rounded to 5)")
    axes.set_ylabel("share of settled rounds (%)")
    axes.set_title(f"{run}: penalties per settled round (domino or blocked)")
    axes.legend(title="strategy", fontsize=8, title_fontsize=8)
    return figure


def round_endings(table: pd.DataFrame, run: str) -> Figure:
    """How rounds end: domino (and by whom), blocked, or the target reached mid-round."""
    labels = [f"domino by {row['side']}" if row["side"] else
              {"domino": "domino (any side)", "blocked": "blocked",
               "target": "target reached (game over)"}[row["ending"]]
              for _, row in table.iterrows()]
    figure = _figure(8, max(2.8, 0.45 * len(table) + 1.4))
    axes = figure.add_subplot()
    y = np.arange(len(table))[::-1]
    colors = [_color(0 if row["side"] == "" else 2) for _, row in table.iterrows()]
    axes.barh(y, table["share"], color=colors, alpha=0.8, height=0.6)
    axes.errorbar(table["share"], y, xerr=_errors(table, "share"), fmt="none",
                  ecolor="black", capsize=4, label="95% Wilson interval")
    for yi, (_, row) in zip(y, table.iterrows()):
        axes.text(row["high"] + 0.01, yi, f"{pct(row['share'])} ({row['rounds']:,} rounds)",
                  va="center", fontsize=8)
    axes.set_yticks(y, labels)
    axes.set_xlim(0, min(1.0, float(table["high"].max()) * 1.35 + 0.05))
    axes.xaxis.set_major_formatter(PERCENT)
    axes.set_xlabel("share of all rounds (%)")
    axes.set_title(f"{run}: how rounds end ({int(table['rounds'].iloc[:3].sum()):,} rounds)")
    figure.legend(loc="outside lower center", ncols=2, fontsize=8)
    return figure


def pairwise_matrix(matrix: pd.DataFrame, order: list[str] | None = None) -> Figure:
    """Heat map: the row strategy's share of the games decided between it and the column."""
    names = order or list(dict.fromkeys(list(matrix["row"]) + list(matrix["column"])))
    n = len(names)
    values = np.full((n, n), np.nan)
    half = np.full((n, n), np.nan)
    for _, row in matrix.iterrows():
        i, j = names.index(row["row"]), names.index(row["column"])
        values[i, j] = row["share"]
        half[i, j] = (row["high"] - row["low"]) / 2
    size = max(4.5, 1.1 * n + 2.5)
    figure = _figure(size + 1.2, size)
    axes = figure.add_subplot()
    image = axes.imshow(np.ma.masked_invalid(values), cmap="RdBu", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if i == j:
                axes.text(j, i, "—", ha="center", va="center", color="gray")
            elif math.isnan(values[i, j]):
                axes.text(j, i, "not\nplayed", ha="center", va="center", fontsize=8,
                          color="gray")
            elif not math.isnan(values[i, j]):
                dark = abs(values[i, j] - 0.5) > 0.3
                axes.text(j, i, f"{100 * values[i, j]:.1f}%\n±{100 * half[i, j]:.1f}",
                          ha="center", va="center", fontsize=8,
                          color="white" if dark else "black")
    axes.set_xticks(range(n), names, rotation=30, ha="right")
    axes.set_yticks(range(n), names)
    axes.set_xlabel("opponent (column)")
    axes.set_ylabel("strategy (row)")
    axes.set_title("Pairwise win rate of the row against the column\n"
                   "(share of the games decided between them, ± 95% half-width)", fontsize=10)
    bar = figure.colorbar(image, ax=axes, format=PERCENT, shrink=0.8)
    bar.set_label("row's win rate against the column (%)")
    return figure


def ratings(table: pd.DataFrame) -> Figure:
    """Fitted ratings (Elo scale, field average 1500) with 95% intervals, best on top."""
    n = len(table)
    figure = _figure(8, max(2.6, 0.5 * n + 1.5))
    axes = figure.add_subplot()
    y = np.arange(n)[::-1]
    errors = np.vstack([(table["rating"] - table["low"]).to_numpy(),
                        (table["high"] - table["rating"]).to_numpy()])
    axes.errorbar(table["rating"], y, xerr=errors, fmt="o", color=_color(0), capsize=5,
                  label="rating with 95% interval")
    for yi, (_, row) in zip(y, table.iterrows()):
        axes.annotate(f"{row['rating']:.0f} ({row['low']:.0f}–{row['high']:.0f})",
                      (row["high"], yi), xytext=(6, 0), textcoords="offset points",
                      va="center", fontsize=8)
    axes.axvline(1500, color="gray", linestyle="--", linewidth=1, label="field average (1500)")
    axes.set_yticks(y, [f"{int(r)}. {s}" for r, s in zip(table["rank"], table["strategy"])])
    lo, hi = float(table["low"].min()), float(table["high"].max())
    span = max(hi - lo, 20.0)
    axes.set_xlim(lo - 0.05 * span, hi + 0.3 * span)
    axes.set_xlabel("rating (Elo scale: +100 ≈ 64% expected wins head to head)")
    axes.set_title("Ranking: Bradley–Terry ratings fitted to all games")
    figure.legend(loc="outside lower center", ncols=2, fontsize=8)
    return figure
