"""``sniff analyze --scheduler local:2``: parts valued as Dask tasks give the tables of an
analysis here.

The reference analysis in this process compiles (or loads) the analysis's search first, so
the two worker processes load it from the cache instead of compiling.
"""

from __future__ import annotations

import pandas as pd

import sim
from sim.analyze.folder import CSV_FILES, read_record, table_files
from sim.analyze.settings import AnalyzeSettings
from sim.analyze.study import plan_analysis, run_analysis
from tests.helpers.cli import invoke


def test_a_local_cluster_gives_the_tables_of_an_analysis_here(tmp_path):
    run = tmp_path / "run"
    sim.simulate(players=2, strategies="greedy,random", games=6, seed=4, out=run)
    settings = AnalyzeSettings(budget=4, games=3, part_games=2, worst=3)
    here = tmp_path / "here"
    run_analysis(plan_analysis([run], settings), here)
    there = tmp_path / "there"
    code, out, err = invoke(["analyze", str(run), "--games", "3", "--budget", "4",
                             "--part-games", "1", "--worst", "3", "-o", str(there), "-q",
                             "--scheduler", "local:2"])
    assert code == 0, err
    assert read_record(there)["status"] == "complete"
    assert len(table_files(there)["decisions"]) == 3  # one part per game, each a task
    for name in CSV_FILES:
        assert (there / name).read_bytes() == (here / name).read_bytes(), name
    rows = [pd.concat(pd.read_parquet(path) for path in table_files(folder)["decisions"])
            .reset_index(drop=True) for folder in (here, there)]
    pd.testing.assert_frame_equal(*rows)
    assert "greedy" in out and "random" in out
