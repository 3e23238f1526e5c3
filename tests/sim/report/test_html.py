"""`sniff report --openings` puts the per-tile section of an openings run into the report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

import sim
from sim.openings.study import run_openings


def test_report_includes_the_openings_section(tmp_path: Path):
    sim.simulate(2, "greedy,random", 200, 5, out=tmp_path / "run")
    table = run_openings(players=2, strategies="greedy", deals=10, seed=3,
                         out=tmp_path / "openings")
    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "report", str(tmp_path / "run"), "--openings",
         str(tmp_path / "openings"), "--placement-sample", "0", "-o", str(tmp_path / "rep")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    markdown = (tmp_path / "rep" / "report.md").read_text()
    assert isinstance(table, pd.DataFrame) and len(table) == 28
    assert "## Opening tiles" in markdown and "Opening tiles" in html
    assert "Value of leading" in markdown
    for tile in table["tile"]:
        assert f"| {tile} |" in markdown or f"|{tile}|" in markdown.replace(" ", "")


def test_report_refuses_a_folder_that_is_not_an_openings_run(tmp_path: Path):
    sim.simulate(2, "greedy,random", 100, 5, out=tmp_path / "run")
    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "report", str(tmp_path / "run"), "--openings",
         str(tmp_path / "run"), "-o", str(tmp_path / "rep")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode != 0 and "not a sniff openings folder" in done.stderr
    assert "Traceback" not in done.stderr


def test_report_refuses_an_unreadable_openings_folder_in_one_line(tmp_path: Path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "openings.parquet").write_bytes(b"not parquet")
    (folder / "summary.json").write_text('{"config": {"players": 4}}')
    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "report", str(folder), "-o", str(tmp_path / "rep")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2 and "cannot read the openings folder" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "rep").exists()
