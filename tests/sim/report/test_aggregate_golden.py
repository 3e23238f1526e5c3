"""The streaming report gives the figures the in-memory report gave.

``tests/golden/report-figures.json`` holds every figure of the reports of a fixed set of
small runs (2, 3 and 4 players, ``--duplicate``, a tournament in the aggregate and with
``--pairings``, an openings folder) as computed by the code at 39a7345, before the readers
streamed; ``tests/report_golden.py`` says how it was made. Here the same runs are played
again and every figure compared (floats to a relative 1e-9).
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import TESTS
from tests.helpers.report_golden import REPORTS, differences, make_runs, report_figures

GOLDEN = TESTS / "golden" / "report-figures.json"


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("golden-runs")
    make_runs(root)
    return report_figures(root)


@pytest.mark.parametrize("name", list(REPORTS))
def test_the_report_has_the_figures_of_the_in_memory_report(figures, name):
    expected = json.loads(GOLDEN.read_text())[name]
    found = differences(expected, figures[name], name)
    assert not found, f"{len(found)} figure(s) differ:\n" + "\n".join(found[:40])


def test_the_comparison_sees_a_changed_figure(figures):
    """The comparison itself fails on a changed number (so the test above can fail)."""
    expected = json.loads(GOLDEN.read_text())["two"]
    changed = json.loads(json.dumps(figures["two"]))
    changed["summary"][0]["points_per_round"] *= 1 + 1e-6
    assert differences(expected, changed)
