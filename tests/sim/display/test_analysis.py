"""`sniff report` shows a `sniff analyze` folder: its section, charts and figures.

One tiny analysis (a few games, a small budget) serves every test: the section is read
from the folder's files, so its figures must be those the analysis wrote.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

import sim
from sim.analyze.folder import set_status
from sim.analyze.settings import AnalyzeSettings
from sim.analyze.study import plan_analysis, run_analysis
from tests.helpers.cli import invoke, one_line


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    base = tmp_path_factory.mktemp("report-analysis")
    run = base / "run"
    sim.simulate(players=2, strategies="greedy,random", games=6, seed=3, out=run)
    settings = AnalyzeSettings(budget=4, games=3, part_games=3, bootstrap=100, worst=3)
    run_analysis(plan_analysis([run], settings), base / "analysis")
    return run, base / "analysis"


def test_an_analysis_folder_is_a_report_of_its_own(analysed, tmp_path):
    _, folder = analysed
    code, out, err = invoke(["report", str(folder), "-o", str(tmp_path / "rep")])
    assert code == 0, err
    assert "report of analysis" in out
    markdown = (tmp_path / "rep" / "report.md").read_text()
    assert "## Analysis analysis: the win chance each move gave up" in markdown
    assert "How the numbers are computed" not in markdown  # that section is about runs
    for chart in ("analysis-analysis-phases.png", "analysis-analysis-loss.png"):
        assert (tmp_path / "rep" / chart).read_bytes()[:4] == b"\x89PNG"
        assert f"({chart})" in markdown
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    strategies = pd.read_csv(folder / "strategies.csv")
    shown = {row["strategy"]: row for row in data["analyses"][0]["strategies"]}
    assert set(shown) == set(strategies["strategy"])
    for _, row in strategies.iterrows():
        assert shown[row["strategy"]]["error_rate"] == pytest.approx(row["error_rate"])
        assert f"| {row['strategy']} | {row['games']:,} | {row['decisions']:,} |" in markdown
    assert "report.html" in out and (tmp_path / "rep" / "report.html").is_file()


def test_the_section_is_added_beside_runs(analysed, tmp_path):
    run, folder = analysed
    code, _, err = invoke(["report", str(run), "--analysis", str(folder),
                           "--placement-sample", "0", "-o", str(tmp_path / "rep")])
    assert code == 0, err
    markdown = (tmp_path / "rep" / "report.md").read_text()
    assert "## Summary" in markdown or "Summary" in markdown
    assert "## Analysis analysis" in markdown


def refused(args: list[str], text: str) -> None:
    code, _, err = invoke(args)
    one_line(code, err, text)


def test_an_incomplete_or_changed_analysis_is_refused_in_one_line(analysed, tmp_path):
    _, folder = analysed
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    set_status(copy, "interrupted")
    refused(["report", str(copy), "-o", str(tmp_path / "a")], "the analysis is not complete")
    set_status(copy, "complete")
    path = copy / "strategies.csv"
    path.write_text(path.read_text().replace("greedy", "greedY"))
    refused(["report", str(copy), "-o", str(tmp_path / "b")], "bytes changed")
    refused(["report", "--analysis", str(tmp_path), "-o", str(tmp_path / "c"), str(folder)],
            "not a sniff analyze folder")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
