"""An openings folder's derived files recomputed from its tables, for ``sniff verify``.

``summary.json`` records the sha256 of ``openings.parquet`` and ``tile-pairs.csv``, but a
record can be rewritten with the file; ``ranking.md`` is recorded nowhere. Each is a
function of the games parts (the per-tile table and the summary's figures tallied again,
the pairs of the games, the ranking of ``openings.parquet`` and the summary its footer
binds), so verify computes them again and compares: an edited figure, pair or ranking
line is one line naming the file, even with its hash updated to match.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from sim.files import read_regular
from sim.openings.folder import NOT_FIGURES, PAIRS, SUMMARY, TABLE, read_summary, table_files
from sim.openings.output import ranking_markdown
from sim.openings.pairs import tile_pairs

__all__ = ["derived_problems"]

RANKING = "ranking.md"
MAX_RANKING = 16 * 2**20  # some kilobytes
PAIR_COLUMNS = ["deal_id", "forced", "opening_tile_id", "differential", "side_won"]


def _same_frame(expected: pd.DataFrame, found: pd.DataFrame) -> bool:
    if list(expected.columns) != list(found.columns) or len(expected) != len(found):
        return False
    for column in expected.columns:
        a, b = expected[column].to_numpy(), found[column].to_numpy()
        if np.issubdtype(a.dtype, np.number) and np.issubdtype(b.dtype, np.number):
            if not np.allclose(a.astype(float), b.astype(float), rtol=1e-9, atol=1e-12,
                               equal_nan=True):
                return False
        elif not (a.astype(str) == b.astype(str)).all():
            return False
    return True


def _table_problem(folder: Path, tables: dict, summary: dict) -> str | None:
    """``openings.parquet`` and the figures of ``summary.json`` against what the games parts
    give (tallied again, part by part), or None: a column no ranking prints
    (``p_win_vs_avg``), or a games part forged with its hash updated, shows up here."""
    from sim.openings.tally import OpeningsTally

    tally = OpeningsTally()
    for path in tables["games"]:
        tally.add(pd.read_parquet(path))
    table, figures = tally.table(None)
    if not _same_frame(table, pd.read_parquet(tables["openings"][0]).reset_index(drop=True)):
        return (f"{folder / TABLE}: does not match the games table (the per-tile figures "
                "recomputed from its parts): the table or a games part was edited")
    differ = [key for key in figures if key not in ("config", *NOT_FIGURES)
              and _json(figures[key]) != _json(summary.get(key))]
    if differ:
        return (f"{folder / SUMMARY}: its {differ[0]} does not match the games table "
                "(recomputed from its parts): the summary or a games part was edited")
    return None


def _json(value) -> str:
    return json.dumps(json.loads(json.dumps(value)), sort_keys=True)


def derived_problems(folder: Path | str) -> list[str]:
    """One line per derived file (``openings.parquet`` and the summary's figures,
    ``tile-pairs.csv``, ``ranking.md``) that does not match what the folder's checked
    tables give; [] when all do (or the folder has none)."""
    folder = Path(folder)
    tables = table_files(folder)  # every file checked against summary.json first
    summary = read_summary(folder)
    if not tables.get("games"):  # a folder from before the games table: nothing to tally
        return []
    problems = [line for line in (_table_problem(folder, tables, summary),) if line]
    ranking = folder / RANKING
    if os.path.lexists(ranking):
        table = pd.read_parquet(tables["openings"][0])
        figures = {k: v for k, v in summary.items() if k not in NOT_FIGURES}
        try:
            text = read_regular(ranking, MAX_RANKING, RANKING).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text != ranking_markdown(table, figures):
            problems.append(f"{ranking}: does not match the ranking of openings.parquet and "
                            "summary.json (recomputed); the file was edited")
    if "pairs" in tables:
        games = pd.concat([pd.read_parquet(path, columns=PAIR_COLUMNS)
                           for path in tables["games"]], ignore_index=True)
        if not _same_frame(tile_pairs(games), pd.read_csv(tables["pairs"][0])):
            problems.append(f"{folder / PAIRS}: does not match the tile pairs of the games "
                            "table (recomputed); the file was edited")
    return problems
