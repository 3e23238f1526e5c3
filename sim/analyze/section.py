"""An analysis folder as a section of ``sniff report``: its tables, two charts and the
costliest decisions, as ``sim.display.blocks`` that the report renders in its own style,
and the same figures as JSON for ``report.json``.

Why from the folder's files, checked: the report shows what ``sniff analyze`` wrote, so
the folder must be a complete analysis whose result files are as ``summary.json`` records
them and whose decision parts are as the ledger records them; anything else is refused
with one line before the report writes anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sim.analyze.folder import COSTLIEST, SUMMARY, is_analysis_folder, read_record, table_files
from sim.errors import SniffError
from sim.files import read_regular

CSV = {"strategies": "strategies.csv", "phases": "phases.csv"}
COLUMNS = ["strategy", "phase", "loss_full", "separated", "source", "game_id", "decision", "round",
           "turn", "played", "best", "loss_low", "loss_high", "mark"]
SHOWN_COSTLIEST = 10
MAX_SUMMARY = 64 * 2**20


@dataclass
class Analysis:
    """One analysis folder, read and checked.

    Attributes:
        folder: the analysis folder.
        settings: the settings it was made with (``summary.json``'s ``settings``).
        summary: its ``summary.json``.
        strategies: ``strategies.csv``: one row per strategy (docs/analyze.md lists its columns).
        phases: ``phases.csv``: the same per strategy and phase of the round.
        decisions: COLUMNS of every analysed decision.
    """

    folder: Path
    settings: dict
    summary: dict
    strategies: pd.DataFrame
    phases: pd.DataFrame
    decisions: pd.DataFrame  # COLUMNS of every analysed decision

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def thresholds(self) -> tuple[float, float, float]:
        low, mid, high = self.settings["thresholds"]
        return float(low), float(mid), float(high)


def load_analysis(folder: Path) -> Analysis:
    """The analysis in ``folder``, or one line saying why it cannot be shown."""
    import pyarrow.parquet as pq

    from sim.checks.integrity import file_problem

    folder = Path(folder)
    if not is_analysis_folder(folder):
        raise SniffError(f"not a sniff analyze folder (no analysis.json): {folder}")
    record = read_record(folder)
    if record.get("status") != "complete" or not (folder / SUMMARY).is_file():
        raise SniffError(f"{folder}: the analysis is not complete (status "
                         f"{record.get('status')}); complete it with: sniff analyze --out "
                         f"{folder} --resume")
    try:
        summary = json.loads(read_regular(folder / SUMMARY, MAX_SUMMARY, SUMMARY).decode())
        files = summary["files"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SniffError(f"{folder / SUMMARY} is damaged ({error!r})") from None
    for name in (*CSV.values(), COSTLIEST):
        if (problem := file_problem(folder, name, files)) is not None:
            raise SniffError(problem)
    tables = {key: pd.read_csv(folder / name) for key, name in CSV.items()}
    parts = table_files(folder).get("decisions", [])
    if not parts:
        raise SniffError(f"{folder}: the analysis records no decisions")
    decisions = pd.concat([pq.read_table(path, columns=COLUMNS).to_pandas() for path in parts],
                          ignore_index=True)
    return Analysis(folder, summary["settings"], summary, tables["strategies"],
                    tables["phases"], decisions)


def _interval(row: pd.Series, name: str, percent: bool = False) -> str:
    from sim.analyze.output import interval_text

    return interval_text(row[name], row[f"{name}_low"], row[f"{name}_high"],
                         unit="%" if percent else "")


def strategy_rows(analysis: Analysis) -> list[list[str]]:
    return [[str(row["strategy"]), f"{row['games']:,}", f"{row['decisions']:,}",
             _interval(row, "loss"), _interval(row, "error_rate", True),
             f"{row['inaccuracies']:,}", f"{row['mistakes']:,}", f"{row['blunders']:,}",
             _interval(row, "noise_share", True)]
            for _, row in analysis.strategies.iterrows()]


def costliest_rows(analysis: Analysis) -> list[list[str]]:
    """The decisions that gave up the most (separated ones first), as ``costliest.md``
    orders them."""
    from sim.analyze.stats import costliest

    frame = costliest(analysis.decisions, SHOWN_COSTLIEST)
    return [[str(row["strategy"]), f"{row['source']} game {row['game_id']}, round "
             f"{row['round']} turn {row['turn']}", str(row["played"]), str(row["best"]),
             f"{100 * row['loss_full']:.1f} [{100 * row['loss_low']:.1f}, "
             f"{100 * row['loss_high']:.1f}]", str(row["mark"] or "")]
            for _, row in frame.iterrows()]


def analysis_blocks(source: Path | Analysis) -> list:
    """The section: settings, per strategy, error rate by phase, the loss distribution and
    the costliest decisions."""
    from sim.display import analysis as charts
    from sim.display.blocks import Chart, Heading, Paragraph, Table
    from sim.display.charts import png_bytes

    analysis = source if isinstance(source, Analysis) else load_analysis(source)
    settings, name = analysis.settings, analysis.name
    low, mid, high = (100 * t for t in analysis.thresholds)
    key = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)
    return [
        Heading(f"Analysis {name}: the win chance each move gave up"),
        Paragraph(f"sniff analyze: {analysis.summary.get('games', 0):,} games, "
                  f"{analysis.summary.get('decisions', 0):,} decisions, each valued against "
                  f"the best move by {settings['budget']:,} play-outs per move and search "
                  f"(policy {settings['policy']}, endgames {settings.get('endgame', 'playout')}, "
                  f"seed {settings['seed']}). Loss in percentage points of the chance to win "
                  f"the game, cross-fitted; marks: inaccuracy ≥ {low:g}, mistake ≥ {mid:g}, "
                  f"blunder ≥ {high:g} points with the paired interval above 0; 95% "
                  "intervals over games.", note=False),
        Table(["strategy", "games", "decisions", "lost per decision (points, 95% CI)",
               "error rate (95% CI)", "inaccuracies", "mistakes", "blunders", "noise"],
              strategy_rows(analysis), 1),
        Chart(f"analysis-{key}-phases.png", "Error rate by phase per strategy.",
              png_bytes(charts.error_rate_by_phase(analysis.phases, name))),
        Table(["strategy", "phase", "decisions", "lost per decision (points)",
               "error rate (95% CI)"],
              [[str(r["strategy"]), str(r["phase"]), f"{r['decisions']:,}",
                _interval(r, "loss"), _interval(r, "error_rate", True)]
               for _, r in analysis.phases.iterrows()], 2),
        Chart(f"analysis-{key}-loss.png", "Distribution of the win chance lost per decision.",
              png_bytes(charts.loss_distribution(analysis.decisions, analysis.thresholds,
                                                 name))),
        Paragraph("The costliest decisions (the folder's positions/ holds each as a position "
                  "file that sniff hint and the browser's set-up read):", note=False),
        Table(["strategy", "where", "played", "best", "lost (points, 95% CI)", "mark"],
              costliest_rows(analysis), 4),
    ]


def analysis_record(source: Path | Analysis) -> dict:
    """The section's figures for ``report.json``."""
    analysis = source if isinstance(source, Analysis) else load_analysis(source)
    return {"folder": str(analysis.folder), "settings": analysis.settings,
            "games": analysis.summary.get("games"),
            "decisions": analysis.summary.get("decisions"),
            "strategies": json.loads(analysis.strategies.to_json(orient="records")),
            "phases": json.loads(analysis.phases.to_json(orient="records"))}


__all__ = ["Analysis", "analysis_blocks", "analysis_record", "load_analysis"]
