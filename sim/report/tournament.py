"""A played tournament's result: its pairing runs, win-rate matrix, ratings and ranking,
computed from the pairings' streaming summaries, with the charts and CSVs written beside
them, and what its ``tournament.json`` records of them.

Why apart from ``sim.tournament`` (which plays the pairings, keeps the folder's manifest
and resumes): the result is built the same way whether a tournament was just played, is
opened again (``sim.tournament.load``) or is checked by ``sniff verify``; and it reads
only the rooms below the report (tables, charts, ratings), so it lives with them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sim.display.formatting import shown_name
from sim.errors import SniffError
from sim.files import write_atomic
from sim.store.rundata import TOURNAMENT_MANIFEST

if TYPE_CHECKING:  # imported where a tournament is read
    import pandas as pd

    from sim.stats.ranking import Ranking
    from sim.stats.ratings import Ratings
    from sim.store.io import Run

__all__ = ["OUTPUT_FILES", "Tournament", "recorded_results", "tournament_result"]

OUTPUT_FILES = ("matrix.png", "ratings.png", "matrix.csv", "ranking.csv")


@dataclass
class Tournament:
    """A played tournament: its folder, pairing runs, matrix and ratings.

    Attributes:
        folder: the tournament's folder.
        manifest: its manifest (``tournament.json``): config, pairings, status.
        runs: each pairing's run, in order.
        matrix: long form, see sim.report.tables.pairwise_matrix.
        ratings: the fitted ratings.
        files: each output file written (name -> path); empty when none were written.
        ranking: rank ranges, tie groups, goodness of fit.
    """

    folder: Path
    manifest: dict
    runs: list[Run]  # per pairing, in order
    matrix: pd.DataFrame  # long form, see sim.report.tables.pairwise_matrix
    ratings: Ratings
    files: dict
    ranking: Ranking | None = None  # rank ranges, tie groups, goodness of fit

    @property
    def games(self):
        """All games of all pairings as one DataFrame, with a ``pairing`` column (for
        tournaments that fit in memory: each pairing's ``Run.games`` refuses one that would
        not; the matrix, ratings and ``lines`` are computed from streaming summaries)."""
        import pandas as pd

        from sim.store.folders import size_text
        from sim.store.scan import PEAK_FACTOR, available_memory, frame_bytes

        need = sum(frame_bytes(run, "games") for run in self.runs if run.path) * PEAK_FACTOR
        if need > (free := available_memory()):
            raise SniffError(f"{self.folder}: the games of all its pairings need about "
                             f"{size_text(need)} of memory, more than the {size_text(free)} "
                             "available; query each pairing instead (run.query(SQL), "
                             "`sniff query PAIRING \"SQL\"`)")
        frames = []
        for pairing, run in zip(self.manifest["pairings"], self.runs):
            frame = run.games.copy()
            for column in frame.columns:
                if isinstance(frame[column].dtype, pd.CategoricalDtype):
                    frame[column] = frame[column].astype(str)
            frame.insert(0, "pairing", pairing["name"])
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def lines(self) -> list[str]:
        config = self.manifest["config"]
        games = sum(run.summary.games for run in self.runs)
        kind = "triple" if config["players"] == 3 else "pairing"
        how = "duplicate deals" if config["duplicate"] else "seats rotated"
        size = (f"until +-{config['precision']:.2%} (at most {config['games_per_pair']:,} "
                "games each)" if config.get("precision") else
                f"{config['games_per_pair']:,} games each")
        out = [f"tournament: {len(config['strategies'])} strategies, {config['players']} "
               f"players, {len(self.runs)} {kind}{'' if len(self.runs) == 1 else 's'}, {size} "
               f"({how}); {games:,} games in all"]
        table = self.ratings.table
        width = max(len(s) for s in table["strategy"])
        if self.ranking is not None:
            from sim.stats.ranking import ranking_lines

            out += ranking_lines(self.ranking)
            out += [f"  note: {note}" for note in self.ratings.notes]
        else:
            out.append("ranking: Bradley-Terry ratings fitted to all games (Elo scale, "
                       "average 1500), 95% CI")
            for _, row in table.iterrows():
                out.append(f"  {int(row['rank'])}. {row['strategy']:<{width}}  "
                           f"{row['rating']:6.0f} ({row['low']:.0f}-{row['high']:.0f})   "
                           f"games {int(row['games']):,}, wins {int(row['wins']):,}")
            out += [f"  note: {note}" for note in self.ratings.notes]
        names = list(table["strategy"])
        cell = {(r["row"], r["column"]): r["share"] for _, r in self.matrix.iterrows()}
        undecided = sum(run.summary.unfinished for run in self.runs)
        out.append("pairwise win rate of the row against the column (share of the games "
                   "decided between the two, so each cell and its mirror add to 100%"
                   + (f"; {undecided:,} games undecided at the round cap left out"
                      if undecided else "") + "):")
        column = max(8, width)
        out.append("  " + " " * width + "".join(f"  {n:>{column}}" for n in names))
        for a in names:
            values = "".join(f"  {'-':>{column}}" if a == b else
                             f"  {100 * cell[(a, b)]:{column - 1}.1f}%" for b in names)
            out.append(f"  {a:<{width}}{values}")
        out.append(f"  data: {shown_name(self.folder)}/ (pairs/, {', '.join(OUTPUT_FILES)}, "
                   f"{TOURNAMENT_MANIFEST}); full report: sniff report "
                   f"{shlex.quote(str(self.folder))}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def recorded_results(result: Tournament) -> dict:
    """What ``tournament.json`` records of the result: the ratings, and the fit and ranking."""
    recorded = {"ratings": result.ratings.to_dict()}
    if result.ranking is not None:
        recorded["fit"] = {key: result.ranking.fit.to_dict()[key]
                           for key in ("statistic", "df", "p_value", "warning")}
        recorded["ranking"] = result.ranking.to_dict()
    return recorded


def tournament_result(folder: Path, manifest: dict, runs: list, write: bool = True) -> Tournament:
    """Matrix and ratings from the pairing runs' wins (their streaming summaries, never a
    table held in memory); charts and CSVs beside them."""
    from sim.display import charts
    from sim.report.tables import contests, pairwise_matrix
    from sim.stats.ranking import csv_table, rank
    from sim.stats.ratings import fit_ratings
    from sim.store.rundata import open_runs

    data = open_runs(runs)
    for run_data, pairing in zip(data, manifest["pairings"]):
        run_data.name = pairing["name"]
        run_data.tournament = folder
    matrix = pairwise_matrix(data)
    played = contests(data)
    ratings = fit_ratings(played)
    ranked = rank(played, ratings, seed=int(manifest.get("config", {}).get("seed", 0)))
    names = list(ratings.table["strategy"])
    if not write:
        return Tournament(folder, manifest, runs, matrix, ratings, {}, ranked)
    writers = {  # each written whole beside its name, never through a link (sim.files)
        "matrix.png": lambda t: charts.save(charts.pairwise_matrix(matrix, names), t),
        "ratings.png": lambda t: charts.save(charts.ratings(ratings.table), t),
        "matrix.csv": lambda t: matrix.to_csv(t, index=False),
        "ranking.csv": lambda t: csv_table(ranked).to_csv(t, index=False),
    }
    files = {}
    for name, writer in writers.items():
        write_atomic(folder / name, writer)
        files[name] = folder / name
    return Tournament(folder, manifest, runs, matrix, ratings, files, ranked)

