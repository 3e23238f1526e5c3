"""The openings study's outputs: the corrections behind its table and the heatmap that outlines
the significant cells, read back from a folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sim.openings.study import run_openings


def test_report_of_an_openings_folder_alone_and_its_corrections(tmp_path: Path):
    """`sniff report FOLDER` detects an openings folder; its marks and pairs are Holm's."""
    import numpy as np
    from matplotlib.patches import Rectangle
    from statsmodels.stats.multitest import multipletests

    from sim.core.tiles import N_TILES
    from sim.openings.output import heatmap_figure, is_openings_folder, load_openings, significant

    folder = tmp_path / "openings"
    run_openings(players=2, strategies="greedy", deals=60, seed=3, out=folder)
    assert is_openings_folder(folder) and not is_openings_folder(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "report", str(folder), "-o", str(tmp_path / "rep")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "rep" / "report.md").read_text()
    assert "## Opening tiles" in markdown and "Tile against tile" in markdown
    assert "## Summary" not in markdown  # no runs: only the openings section

    table, summary = load_openings(folder)
    for metric in ("differential", "p_win"):
        holm = multipletests(table[f"{metric}_vs_avg_p"], method="holm")[0]
        assert (significant(table, metric) == holm).all()
    figure = heatmap_figure(table, summary)
    assert len(figure.axes) >= 2  # the differential and the game-win panels (and colour bars)
    outlined = [sum(isinstance(p, Rectangle) for p in axes.patches) for axes in figure.axes[:2]]
    assert outlined == [int(significant(table, "differential").sum()),
                        int(significant(table, "p_win").sum())]

    pairs = pd.read_csv(folder / "tile-pairs.csv")
    for metric in ("differential", "p_win"):
        rows = pairs[pairs["metric"] == metric]
        assert len(rows) == N_TILES * (N_TILES - 1) // 2
        expected = multipletests(rows["p_value"], method="holm")[1]
        assert np.allclose(rows["p_adjusted"], expected)
        assert (rows["estimate"] >= 0).all()
        assert (rows["different"] == (rows["p_adjusted"] < 0.05)).all()
    # one pair recomputed from the games: per-deal difference of the two tiles
    games = pd.read_parquet(folder / "games")
    forced = games[games["forced"]].pivot(index="deal_id", columns="opening_tile",
                                          values="differential")
    row = pairs[pairs["metric"] == "differential"].iloc[0]
    diff = forced[row["tile_a"]] - forced[row["tile_b"]]
    assert row["estimate"] == pytest.approx(diff.mean())
    assert row["se"] == pytest.approx(diff.std(ddof=1) / np.sqrt(len(diff)))
