"""A run folder written by other code (tests/fixtures/run-on-6dc88fb: the code before the
game loop was compiled once) still verifies and reports, and a resume is refused in one line
that names the code that wrote it: its remaining games would not be the ones it started."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import ROOT, load_unverified, run_main

FIXTURE = ROOT / "tests" / "fixtures" / "run-on-6dc88fb"


@pytest.fixture
def earlier(tmp_path) -> Path:
    folder = tmp_path / "earlier"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_the_fixture_is_an_interrupted_run_of_other_code(earlier) -> None:
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


def test_a_resume_is_refused_in_one_line_naming_the_code_that_wrote_it(earlier, capsys) -> None:
    recorded = json.loads((earlier / "manifest.json").read_text())["kernel"]
    code, _, err = run_main(["simulate", "--out", str(earlier), "--resume", "-q"], capsys)
    assert code == 2
    line = err.strip()
    assert "\n" not in line and line.startswith("sniff: error: cannot resume")
    assert f"code {recorded}" in line and "sniff 0.1.0" in line and "--overwrite" in line
    code, out, err = run_main(["verify", str(earlier)], capsys)  # the folder is untouched
    assert code == 0 and "2 of 3 chunks sound, 40 games" in out, (out, err)
