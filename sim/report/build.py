"""``sniff report``: the numbers of one or more simulate runs, with an interval on each.

Why a separate computing step: :func:`build` turns run folders (or in-memory runs) into a
:class:`Report` of plain pandas DataFrames and dicts, so a notebook gets exactly the numbers
the HTML shows; ``sim.display.charts`` draws them and ``sim.report.html`` lays them out. The parts:
``sim.store.rundata`` opens the runs, ``sim.report.tables`` computes the tables,
``sim.report.placements`` traces the placement-score sample. Every figure is computed from the
Parquet tables themselves (the ``games`` and ``rounds`` columns of docs/data-format.md),
never from the manifest's summary, so the report is only as good as the data and the tests
can check it against a direct pandas computation.

Definitions (docs/report.md repeats them for users):

- A *side* is a lineup position of a run (with 4 players a partnership), followed wherever
  seat rotation put it; a *strategy* is a side's label (``greedy``, or ``greedy+heavy`` for
  a mixed partnership).
- Win rates count undecided games (round cap) as games not won; intervals are 95% Wilson.
- The difference of two sides' win rates in one run uses the per-game values
  ``[a won] - [b won]`` (the two rates come from the same games); duplicate runs add the
  per-deal (paired) estimate. Differences between runs are independent-sample differences
  (Newcombe interval), shown only for sides that met the same opposition.
- Placement scores are not in the tables (the batch kernel keeps per-round totals): they
  come from a sample of the run's games traced again by the same compiled engine, checked
  game by game against the run's final scores, and are labelled as a sample.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from sim.errors import SettingError, SniffError
from sim.report.aggregate import read_figures
from sim.report.effects import run_effects, tournament_effects
from sim.report.placements import DEFAULT_PLACEMENT_SAMPLE, sample_ids, sample_placements
from sim.report.states import field_convergence_table, run_tables
from sim.report.tables import (
    comparison_rows,
    contests,
    difference_rows,
    distributions,
    field_rows,
    leader_rows,
    pairwise_matrix,
    rateable,
    seat_rows,
    sort_stronger_first,
    summary_rows,
)
from sim.stats.multiple import add_adjusted
from sim.stats.ranking import Ranking, rank
from sim.stats.ratings import Ratings, fit_ratings
from sim.store.rundata import RunData, open_runs

# --- the report


@dataclass
class Report:
    """Every number of a report: DataFrames a notebook can use, charts and HTML draw.

    Attributes:
        runs: the runs the report covers.
        summary: each run's strategies with win rates and intervals.
        by_seat: win rates by seat.
        by_leader: win rates by who led round 1.
        differences: the differences between the strategies' win rates.
        comparisons: the pairwise comparisons with adjusted p-values.
        distributions: per run, the distributions drawn as charts.
        placements: per run, the placement figures.
        matrix: a tournament's win matrix, or None.
        ratings: a tournament's ratings, or None.
        ratings_note: why there are no ratings, or None.
        created_at: when the report was made (UTC, ISO 8601).
        title: the report's title.
        openings: `sniff openings` folders to include.
        analyses: sim.analyze.section.Analysis, each a section.
        ranking: rank ranges, tie groups, goodness of fit.
        score_states: sim.stats.score_states columns (score-states.csv).
        convergence: running win rates, a ``run`` column.
        compact: runs shown only in the aggregates.
        field_table: each strategy against the field (tournaments).
        effects: sim.report.effects, per run.
    """

    runs: list[RunData]
    summary: pd.DataFrame
    by_seat: pd.DataFrame
    by_leader: pd.DataFrame
    differences: pd.DataFrame
    comparisons: pd.DataFrame
    distributions: dict[str, dict]
    placements: dict[str, dict]
    matrix: pd.DataFrame | None = None
    ratings: Ratings | None = None
    ratings_note: str | None = None
    created_at: str = ""
    title: str = "sniff report"
    openings: list[Path] = field(default_factory=list)  # `sniff openings` folders to include
    analyses: list = field(default_factory=list)  # sim.analyze.section.Analysis, each a section
    ranking: Ranking | None = None  # rank ranges, tie groups, goodness of fit
    score_states: pd.DataFrame | None = None  # sim.stats.score_states columns (score-states.csv)
    convergence: pd.DataFrame | None = None  # running win rates, a ``run`` column
    compact: list[str] = field(default_factory=list)  # runs shown only in the aggregates
    field_table: pd.DataFrame | None = None  # each strategy against the field (tournaments)
    effects: dict[str, dict] = field(default_factory=dict)  # sim.report.effects, per run

    @property
    def players(self) -> int:
        return self.runs[0].players if self.runs else 0

    def to_dict(self) -> dict:
        """The numbers as plain JSON-ready values (``report.json``)."""

        def records(frame: pd.DataFrame | None) -> list[dict]:
            if frame is None:
                return []
            return json.loads(frame.to_json(orient="records"))

        return {
            "format": "sniff-report/1", "title": self.title, "created_at": self.created_at,
            "runs": [run.describe() for run in self.runs],
            "summary": records(self.summary), "by_seat": records(self.by_seat),
            "by_first_leader": records(self.by_leader),
            "differences": records(self.differences), "comparisons": records(self.comparisons),
            "distributions": {
                name: {key: (records(value) if isinstance(value, pd.DataFrame) else value)
                       for key, value in dist.items()}
                for name, dist in self.distributions.items()},
            "placements": {
                name: {key: (records(value) if isinstance(value, pd.DataFrame) else value)
                       for key, value in sample.items()}
                for name, sample in self.placements.items()},
            "pairwise": records(self.matrix),
            "ratings": self.ratings.to_dict() if self.ratings is not None else None,
            "ratings_note": self.ratings_note,
            "ranking": self.ranking.to_dict() if self.ranking is not None else None,
            "field": records(self.field_table), "compact": list(self.compact),
            "effects": {
                name: {key: (records(value) if isinstance(value, pd.DataFrame) else value)
                       for key, value in parts.items()}
                for name, parts in self.effects.items()},
            **({"analyses": [_analysis_record(item) for item in self.analyses]}
               if self.analyses else {}),
        }

    def write(self, out: str | os.PathLike) -> dict[str, Path]:
        """Charts (PNG), ``report.html`` (self-contained), ``report.md`` and ``report.json``."""
        from sim.report.write import write_report

        return write_report(self, Path(out))


MAX_PLACEMENT_SAMPLE = 100_000  # games traced again per run: minutes at most


def build(paths: Sequence, placement_sample: int | None = None,
          title: str | None = None, notice=None, openings: Sequence = (),
          pairings: bool = False, progress=None, analyses: Sequence = ()) -> Report:
    """The report of run folders (or ``sim.store.io.Run`` objects, tournament or openings folders).

    A tournament's pairings are shown in the aggregate only (each strategy against the
    field, the matrix, ratings, differences, effects pooled over the pairings): ``pairings``
    adds one section per pairing, as for a simulate run. Why: a tournament of 8 strategies
    has 28 pairings, and their sections (7 charts each, and a traced sample) made a
    13 MB page that took minutes; the aggregates answer the tournament's question.

    ``placement_sample``: games per run traced again for the placement-score frequencies
    (0 skips them; default 300 for simulate runs, 0 for a tournament's pairings, which are
    traced only when a size is given, and then only with ``pairings``). Tracing is
    single-threaded, slow for look-ahead strategies, and the first trace with a kernel
    compiles its tracer (once, cached after that). ``notice(text)`` hears what is
    being done. ``openings``: folders of ``sniff openings`` whose per-tile section the
    report adds; an openings folder among ``paths`` is taken as one too.

    The runs are read once, chunk by chunk (``sim.report.aggregate``): memory stays at a
    chunk whatever their size; ``progress(done, total)`` hears every chunk read.
    """
    _check_sample(placement_sample)
    openings, paths = _split_openings(paths, openings)
    analyses, paths = _split_analyses(paths, analyses)
    if not paths:
        if not openings and not analyses:
            raise SniffError("give at least one run folder")
        report = _openings_only(openings, title)
        report.analyses = analyses
        if not openings:
            names = ", ".join(item.name for item in analyses)
            report.title = title or f"sniff report: analysis {names}"
        return report
    from sim.audit.stops import require_recorded_stop

    runs = open_runs(paths)
    for run in runs:  # a compare run's decision, replayed over its parts (as verify does)
        require_recorded_stop(run.run)
    compact = [run.name for run in runs if run.tournament is not None and not pairings]
    if compact and placement_sample:
        raise SettingError("placement samples are shown in each pairing's section: add "
                           "{pairings} to trace a tournament's pairings (or leave out "
                           "{placement_sample})")
    read_figures(runs, {run.name: _sample_size(run, placement_sample) for run in runs},
                 progress)
    report = _run_report(runs, compact, placement_sample, notice)
    report.title = title or "sniff report: " + ", ".join(run.name for run in runs[:4]) + (
        f" and {len(runs) - 4} more" if len(runs) > 4 else "")
    report.openings = [Path(folder) for folder in openings]
    report.analyses = analyses
    report.effects = {run.name: run_effects(run) for run in runs if run.name not in compact}
    report.score_states, report.convergence = run_tables(runs)
    if compact:  # a tournament in the aggregate: each strategy against the field
        report.convergence = _field_convergence(report.convergence, runs, compact)
    if rateable(runs):
        _add_ratings(report, runs)
    if any(run.tournament is not None for run in runs):
        order = list(report.ratings.table["strategy"]) if report.ratings is not None else ()
        report.field_table = field_rows(runs, order)
    report.effects.update(tournament_effects(runs, list(report.field_table["strategy"])
                                             if report.field_table is not None else ()))
    return report


def _check_sample(placement_sample: int | None) -> None:
    """Refuse a placement sample that is not a whole number 0..``MAX_PLACEMENT_SAMPLE``."""
    if placement_sample is not None and (
            isinstance(placement_sample, bool) or not isinstance(placement_sample, int)
            or not 0 <= placement_sample <= MAX_PLACEMENT_SAMPLE):
        raise SettingError(f"{{placement_sample}} must be 0 or more games, at most "
                           f"{MAX_PLACEMENT_SAMPLE:,}, got {placement_sample}")


def _split_openings(paths: Sequence, openings: Sequence) -> tuple[list, list]:
    """The openings folders (those given and those among ``paths``) and the run folders;
    each openings folder read now, so a bad one is refused before anything is written."""
    from sim.openings.bound import derived_problems
    from sim.openings.output import is_openings_folder, load_openings

    openings = list(openings) + [p for p in paths if is_openings_folder(p)]
    paths = [p for p in paths if not is_openings_folder(p)]
    for folder in openings:
        if not is_openings_folder(folder):
            raise SniffError(f"not a sniff openings folder (no openings.parquet): {folder}")
        load_openings(folder)  # readable: refused now, before anything is written
        # what verify recomputes from the games parts (the table, the summary's figures,
        # tile-pairs.csv, ranking.md): a file edited with its sha256 updated is refused
        # as verify refuses it, not shown
        problems = derived_problems(folder)
        if problems:
            raise SniffError(problems[0])
    return openings, paths


def _split_analyses(paths: Sequence, analyses: Sequence) -> tuple[list, list]:
    """The analysis folders (those given and those among ``paths``), each read and checked
    now (a bad one is refused before anything is written), and the other paths."""
    from sim.analyze.folder import is_analysis_folder
    from sim.analyze.section import load_analysis

    folders = list(analyses) + [p for p in paths if is_analysis_folder(p)]
    paths = [p for p in paths if not is_analysis_folder(p)]
    return [load_analysis(Path(folder)) for folder in folders], paths


def _analysis_record(analysis) -> dict:
    from sim.analyze.section import analysis_record

    return analysis_record(analysis)


def _run_report(runs: list[RunData], compact: list[str], placement_sample: int | None,
                notice) -> Report:
    """The per-run tables of runs whose figures are read (``read_figures``), and the
    placement samples traced; ratings, effects and the field come after."""
    frame = pd.DataFrame
    return Report(
        runs=runs,
        summary=frame([row for run in runs for row in summary_rows(run)]),
        by_seat=frame([row for run in runs for row in seat_rows(run)]),
        by_leader=frame([row for run in runs for row in leader_rows(run)]),
        differences=_adjusted(frame([row for run in runs for row in difference_rows(run)]),
                              "pairwise differences", by="unit"),
        comparisons=_adjusted(frame(comparison_rows(runs)), "comparisons across runs"),
        distributions={run.name: distributions(run) for run in runs  # shown per run only
                       if run.name not in compact},
        placements={run.name: _sample_with_notice(
            run, _sample_size(run, placement_sample), notice) for run in runs},
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        compact=compact,
    )


def _add_ratings(report: Report, runs: list[RunData]) -> None:
    """The pairwise matrix, and the ratings and ranking fitted to it (or why there are
    none); the differences then read strongest first."""
    matrix = report.matrix = pairwise_matrix(runs)
    try:
        ratings = report.ratings = fit_ratings(contests(runs))
    except SniffError as error:
        report.ratings_note = f"no ratings: {error}"
        return
    unmet = matrix[(matrix["games"] == 0) & (matrix["row"] < matrix["column"])]
    if len(unmet):
        pairs = ", ".join(f"{a} and {b}" for a, b in zip(unmet["row"], unmet["column"]))
        ratings.notes.append(
            f"never met: {pairs}; their rating gap rests on the model alone (through "
            "the opponents they shared)")
    report.ranking = rank(contests(runs), ratings)
    report.differences = sort_stronger_first(
        report.differences, list(ratings.table["strategy"]))


def _field_convergence(paths: pd.DataFrame, runs: list[RunData],
                       compact: list[str]) -> pd.DataFrame:
    """Per-run convergence for runs shown in full, one field panel per compact tournament."""
    parts = [paths[~paths["run"].isin(compact)]]
    folders = dict.fromkeys(r.tournament for r in runs
                            if r.name in compact and r.tournament is not None)
    for folder in folders:
        members = [r for r in runs if r.tournament == folder and r.name in compact]
        path = field_convergence_table(members)
        path.insert(0, "run", f"tournament {folder.name}: each strategy against the field "
                              "(x: games per pairing)")
        parts.append(path)
    return pd.concat([p for p in parts if len(p)], ignore_index=True)


def _sample_size(run: RunData, asked: int | None) -> int:
    """Games to trace: as asked, else 300 for a simulate run and none for a pairing."""
    if asked is not None:
        return asked
    return 0 if run.tournament is not None else DEFAULT_PLACEMENT_SAMPLE


def _openings_only(openings: Sequence, title: str | None) -> Report:
    """A report of ``sniff openings`` folders alone (``sniff report OPENINGS_FOLDER``)."""
    names = ", ".join(Path(folder).name for folder in openings)
    return Report(runs=[], summary=pd.DataFrame(), by_seat=pd.DataFrame(),
                  by_leader=pd.DataFrame(), differences=pd.DataFrame(),
                  comparisons=pd.DataFrame(), distributions={}, placements={},
                  created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                  title=title or f"sniff report: openings {names}",
                  openings=[Path(folder) for folder in openings])


def _adjusted(frame: pd.DataFrame, family: str, by: str | None = None) -> pd.DataFrame:
    """Holm-adjusted p-values (``p_holm``) beside the raw ones, and the family named."""
    if frame.empty or "p_value" not in frame.columns:
        return frame
    return add_adjusted(frame, "p_value", "holm", by=by, family=family)


def default_folder(base: Path = Path("results")) -> Path:
    """A new numbered report folder under ``base``."""
    from sim.store.folders import new_folder

    return new_folder("report", base)


def _sample_with_notice(run: RunData, size: int, notice) -> dict:
    if notice is not None and size > 0:
        notice(f"{run.name}: tracing {len(sample_ids(run, size))} games again for the "
               "placement scores")
    return sample_placements(run, size)


__all__ = ["build", "default_folder", "Report"]
