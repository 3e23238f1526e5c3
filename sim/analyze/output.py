"""An analysis's results: its tables from the decisions, the files they go to, the text
the command prints.

The tables (``strategies``, split by ``phase``, ``kind`` and ``players``, the budget
``curve``) come from ``sim.analyze.stats``; the costliest positions are written one per
file in the text form of ``sniff hint`` (its comment lines say where each comes from), so
``sniff hint positions/01.txt`` and the browser's set-up read them as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pandas as pd

from sim.analyze import stats
from sim.analyze.folder import COSTLIEST, CSV_FILES, POSITIONS, SUMMARY, write_json
from sim.analyze.settings import AnalyzeSettings
from sim.files import write_atomic

SPLITS = ("phase", "kind", "players")


def results(decisions: pd.DataFrame, curve: pd.DataFrame,
            settings: AnalyzeSettings) -> dict[str, pd.DataFrame]:
    """Every table of the analysis, by name."""
    resamples = stats.Resamples(decisions, settings.bootstrap, settings.seed)
    tables = {"strategies": stats.strategy_table(decisions, resamples)}
    for column in SPLITS:
        tables[f"{column}s" if column != "players" else "players"] = stats.split_table(
            decisions, resamples, column)
    tables["curve"] = stats.curve_table(curve, stats.Resamples, settings.seed,
                                        settings.bootstrap)
    tables["costliest"] = stats.costliest(decisions, settings.worst)
    return tables


def position_file(row: pd.Series) -> str:
    """A costly decision as a position file: where it comes from, then the position."""
    return (f"# sniff analyze: {row['source']} game {row['game_id']}, round {row['round']} "
            f"turn {row['turn']}, seat {row['seat']} ({row['strategy']})\n"
            f"# played {row['played']} ({100 * row['win_played']:.1f}%), best {row['best']} "
            f"({100 * row['win_best']:.1f}%): -{100 * row['loss_full']:.1f} points "
            f"[{100 * row['loss_low']:.1f}, {100 * row['loss_high']:.1f}] {row['mark']}\n"
            + row["position"])


def costliest_markdown(frame: pd.DataFrame) -> str:
    lines = ["# The costliest decisions", "",
             "| # | source | game | round | turn | seat | strategy | played | best | loss "
             "(points) [95% CI] | mark | position |", "|" + "---|" * 12]
    for label, row in frame.iterrows():
        number = cast(int, label)  # costliest() resets the index: a RangeIndex, not Hashable
        lines.append(
            f"| {number + 1} | {row['source']} | {row['game_id']} | {row['round']} | "
            f"{row['turn']} | {row['seat']} | {row['strategy']} | {row['played']} | "
            f"{row['best']} | {100 * row['loss_full']:.1f} [{100 * row['loss_low']:.1f}, "
            f"{100 * row['loss_high']:.1f}] | {row['mark']} | "
            f"[{POSITIONS}/{number + 1:02d}.txt]({POSITIONS}/{number + 1:02d}.txt) |")
    return "\n".join(lines) + "\n"


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def _records(frame: pd.DataFrame) -> list[dict]:
    """A table as JSON records, a missing interval (NaN) as null: strict JSON."""
    import json

    return json.loads(frame.to_json(orient="records")) if len(frame) else []


def write_results(folder: Path, tables: dict[str, pd.DataFrame], record: dict) -> dict:
    """The CSVs, the costliest positions and ``summary.json`` (last: it records every other
    file's size and sha256); returns the summary."""
    from sim.checks.integrity import part_record

    folder = Path(folder)
    names = dict(zip(("strategies", "phases", "kinds", "players", "curve"), CSV_FILES))
    for table, name in names.items():
        _write_text(folder / name, tables[table].to_csv(index=False, float_format="%.6g"))
    worst = tables["costliest"]
    (folder / POSITIONS).mkdir(exist_ok=True)
    written = list(names.values()) + [COSTLIEST]
    for label, row in worst.iterrows():
        number = cast(int, label)  # costliest() resets the index: a RangeIndex, not Hashable
        name = f"{POSITIONS}/{number + 1:02d}.txt"
        _write_text(folder / name, position_file(row))
        written.append(name)
    _write_text(folder / COSTLIEST, costliest_markdown(worst))
    summary = {
        "settings": record["settings"], "sources": record["sources"],
        "games": len(record["games"]),
        "decisions": int(tables["strategies"]["decisions"].sum())
        if len(tables["strategies"]) else 0,
        "strategies": _records(tables["strategies"]), "curve": _records(tables["curve"]),
        "files": {name: {k: v for k, v in part_record(folder / name, 0).items() if k != "rows"}
                  for name in written},
    }
    write_json(folder / SUMMARY, summary)
    return summary


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def interval_text(mean: float, low: float, high: float, digits: int = 2,
                  unit: str = "") -> str:
    """``mean [low, high]`` in percent; ``[n/a]`` where there is no interval (one game)."""
    if low != low or high != high:  # NaN
        return f"{100 * mean:.{digits}f}{unit} [n/a]"
    return f"{100 * mean:.{digits}f}{unit} [{100 * low:.{digits}f}, {100 * high:.{digits}f}]"


def summary_text(tables: dict[str, pd.DataFrame], settings: AnalyzeSettings) -> str:
    """What ``sniff analyze`` prints: one line per strategy, then the noise."""
    low, mid, high = (100 * t for t in settings.thresholds)
    lines = [f"win chance lost per decision (percentage points, cross-fitted), 95% intervals "
             f"over games; {settings.budget:,} play-outs per move (policy {settings.policy}, "
             f"endgames {settings.endgame.value}, seed {settings.seed}); marks: inaccuracy "
             f">= {low:g}, mistake >= {mid:g}, blunder >= {high:g} points, interval above 0",
             f"{'strategy':<14} {'games':>6} {'decisions':>9}  {'lost/decision':<22} "
             f"{'accuracy':<22} {'inacc':>6} {'mist':>6} {'blund':>6}  noise"]
    for _, row in tables["strategies"].iterrows():
        loss = interval_text(row["loss"], row["loss_low"], row["loss_high"])
        accuracy = interval_text(row["accuracy"], row["accuracy_low"], row["accuracy_high"],
                                 unit="%")
        lines.append(f"{str(row['strategy']):<14} {row['games']:>6,} {row['decisions']:>9,}  "
                     f"{loss:<22} {accuracy:<22} {row['inaccuracies']:>6,} "
                     f"{row['mistakes']:>6,} {row['blunders']:>6,}  "
                     + interval_text(row["noise_share"], row["noise_share_low"],
                                     row["noise_share_high"], 1, "%"))
    lines.append("noise: of the decisions whose move played is not the search's best, the share "
                 "not separated from it at this budget (paired 95% interval)")
    return "\n".join(lines) + "\n"


__all__ = ["summary_text"]
