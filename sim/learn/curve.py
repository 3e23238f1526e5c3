"""The learning curve of a training folder: ``log.jsonl`` read back, ``curve.csv`` and
``curve.png`` written from it (the win rate against the heuristic after each iteration, with
its interval), and one panel of it (``plot_curve``: docs/learned.md's panels of several
folders).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from sim.files import open_regular, write_atomic

__all__ = ["read_log"]

COLUMNS = ["iteration", "games_played", "eval_games", "win_rate", "low", "high", "loss"]
MAX_LINE = 2**20  # a log line is some 300 bytes


def read_log(path: Path) -> list[dict]:
    """A learning run's log: the latest record of each iteration, in order (none if absent)."""
    log = Path(path) / "log.jsonl"
    if not log.exists():
        return []
    latest: dict[int, dict] = {}
    with os.fdopen(open_regular(log, "log.jsonl"), "rb") as handle:  # a FIFO never blocks
        while line := handle.readline(MAX_LINE + 1):
            try:  # a line torn by a kill, or not sniff's, is no iteration
                row = json.loads(line)
                if isinstance(row, dict) and isinstance(row.get("iteration"), int) and all(
                        isinstance(row.get(c), int | float | None) for c in COLUMNS):
                    latest[row["iteration"]] = row  # a resumed iteration replaces the first
            except (ValueError, RecursionError):
                continue
    return [latest[k] for k in sorted(latest)]


def write_curve(path: Path) -> None:
    """``curve.csv`` and ``curve.png`` from the log."""
    rows = read_log(path)
    columns = COLUMNS

    def write(temporary: Path) -> None:
        with temporary.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for row in rows:
                writer.writerow([row[c] for c in columns])

    write_atomic(Path(path) / "curve.csv", write)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3.6))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    plot_curve(axes, rows, even=0.5)
    axes.set_title("learned: held-out duplicate deals")
    figure.tight_layout()
    write_atomic(Path(path) / "curve.png",  # never through a link
                 lambda temporary: figure.savefig(temporary, format="png", dpi=110))


def plot_curve(axes, rows: list[dict], even: float) -> None:
    """A learning curve on ``axes``: the win rate per iteration with its 95% paired
    interval, and a dashed line at an even share."""
    its = [r["iteration"] for r in rows]
    axes.plot(its, [r["win_rate"] for r in rows], marker="o", color="C0")
    axes.fill_between(its, [r["low"] for r in rows], [r["high"] for r in rows], alpha=0.25,
                      color="C0", label="95% paired interval")
    axes.axhline(even, color="grey", lw=0.8, ls="--")
    opponent = rows[0]["opponent"] if rows else ""
    axes.set_xlabel("iteration")
    axes.set_ylabel(f"win rate against {opponent}")
    axes.legend(loc="lower right", fontsize=8)
