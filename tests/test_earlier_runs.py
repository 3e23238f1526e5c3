"""Run folders written by earlier code still verify, report and resume.

tests/fixtures/run-on-main was written by the code on main at 55805d0, and
tests/fixtures/run-on-COMMIT by the code on main at each earlier stop of the project (each
commit of ``sim.kernels.rewrites.SINCE_STOPS``: 5a87044, b65694f), each interrupted after
two of its three parts (their READMEs say how). Each code digest is that code's: a resume is
accepted only while ``sim.kernels.rewrites`` maps every rewrite since to the code then, and
the games it adds must be those a fresh run plays.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import ROOT, load_unverified, run_main

import sim
from sim.kernels.rewrites import SINCE_STOPS

# main at 55805d0, then every stop: a stop listed in rewrites is covered without another edit
FIXTURES = [ROOT / "tests" / "fixtures" / name
            for name in ("run-on-main", *(f"run-on-{commit}" for commit in SINCE_STOPS))]
PLAN = ["--players", "2", "--strategies", "greedy,random", "--games", "60", "--seed", "7",
        "--chunk-size", "20"]


@pytest.fixture(params=FIXTURES, ids=lambda path: path.name)
def earlier(request, tmp_path) -> Path:
    folder = tmp_path / "earlier"
    shutil.copytree(request.param, folder)
    return folder


def test_the_fixture_is_an_interrupted_run_of_main(earlier) -> None:
    manifest = json.loads((earlier / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["config"]["games"] == 60
    assert len(load_unverified(earlier).games) == 40  # a copy: not verified here


def test_it_verifies(earlier, capsys) -> None:
    code, out, err = run_main(["verify", str(earlier)], capsys)
    assert code == 0 and "2 of 3 chunks sound, 40 games" in out, (out, err)


def test_it_reports(earlier, tmp_path, capsys) -> None:
    code, out, err = run_main(["report", str(earlier), "-o", str(tmp_path / "report")],
                              capsys)
    assert code == 0, err
    page = (tmp_path / "report" / "report.md").read_text()
    assert "greedy" in page and "random" in page and "40" in page


def test_it_resumes_to_the_tables_of_a_fresh_run(earlier, tmp_path, capsys) -> None:
    code, _, err = run_main(["simulate", "--out", str(earlier), "--resume", "-q"], capsys)
    assert code == 0, err
    fresh = tmp_path / "fresh"
    code, _, err = run_main(["simulate", *PLAN, "--out", str(fresh), "-q"], capsys)
    assert code == 0, err
    got, want = sim.load(earlier), sim.load(fresh)
    assert got.games["game_id"].tolist() == list(range(60))
    assert got.games.equals(want.games) and got.rounds.equals(want.rounds)
    code, out, err = run_main(["verify", str(earlier)], capsys)
    assert code == 0 and "3 of 3 chunks sound, 60 games" in out, (out, err)
