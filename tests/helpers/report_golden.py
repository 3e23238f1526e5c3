"""The report's figures on a fixed set of small runs: made once, compared ever after.

Why: ``sniff report`` was rewritten to aggregate over a run's parts instead of holding its
tables in pandas. The figures must not change with it, so
``tests/golden/report-figures.json`` holds every figure of the reports of these runs as the
code at the branch point (39a7345, the in-memory report) computed them, and
``tests/sim/report/test_aggregate.py`` plays the same runs again and compares figure for figure
(floats to a relative 1e-9: the sums may now be added in another order).

Made with (from the repository root, at 39a7345, where this file was tests/helpers/report_golden.py;
today, as a module of the tests package)::

    .venv/bin/python -m tests.helpers.report_golden tests/golden/report-figures.json

The runs: 2, 3 and 4 players, a ``--duplicate`` run, a 2-player tournament of three
strategies (reported in the aggregate and with ``--pairings``) and a 2-player openings
folder; chunks are small so that deals, rotations and score states cross part boundaries.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

SEED = 5
RUNS = {
    "two": {"players": 2, "strategies": "greedy,random", "games": 300, "chunk_size": 70},
    "three": {"players": 3, "strategies": "greedy,random,random", "games": 600,
              "chunk_size": 250},
    "four": {"players": 4, "strategies": "greedy,random", "games": 1200, "chunk_size": 500},
    "dup": {"players": 4, "strategies": "greedy,random", "games": 1200, "duplicate": True,
            "chunk_size": 300},
    "dup3": {"players": 3, "strategies": "greedy,random,heavy", "games": 600,
             "duplicate": True, "chunk_size": 100},
}
TOURNAMENT = {"players": 2, "strategies": "greedy,random,heavy", "games_per_pair": 200,
              "seed": SEED, "chunk_size": 70}
OPENINGS = {"players": 2, "strategies": "greedy", "deals": 10, "seed": 3}
# report name -> (folders, build options)
REPORTS = {
    "two": (["two"], {"placement_sample": 0}),
    "three": (["three", "dup3"], {"placement_sample": 0}),
    "four-dup": (["four", "dup"], {"placement_sample": 24}),
    "tournament": (["tournament"], {}),
    "tournament-pairings": (["tournament"], {"pairings": True}),
    "openings": (["openings"], {}),
}
VOLATILE = {"created_at", "path"}


def make_runs(root: Path) -> None:
    """Play every run of the fixture into ``root``."""
    import sim
    from sim.openings.study import run_openings
    from sim.tournament import run_tournament

    for name, options in RUNS.items():
        sim.simulate(**options, seed=SEED, out=root / name)
    run_tournament(**TOURNAMENT, out=root / "tournament")
    run_openings(**OPENINGS, out=root / "openings")


def _clean(value, root: str):
    """JSON-ready, with this machine's paths and the report's time taken out."""
    if isinstance(value, dict):
        return {k: _clean(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_clean(v, root) for v in value]
    if isinstance(value, str):
        return value.replace(root, "ROOT")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def report_figures(root: Path) -> dict:
    """Every report of ``REPORTS`` as its ``report.json`` numbers (and, for an openings
    folder, whose figures are in the page, its Markdown)."""
    from sim.report.build import build

    out = {}
    for name, (folders, options) in REPORTS.items():
        report = build([root / folder for folder in folders], **options)
        figures = report.to_dict()
        if report.openings:
            written = report.write(root / f"report-{name}")
            text = Path(written["report.md"]).read_text(encoding="utf-8")
            # the section of the page (not the title or the time it was made)
            figures["markdown"] = text[text.index("## Opening tiles"):
                                       text.index("## How the numbers are computed")]
        out[name] = json.loads(json.dumps(_clean(figures, str(root))))
    return out


def differences(expected, actual, where: str = "", tolerance: float = 1e-9) -> list[str]:
    """Where two figure trees differ: floats beyond ``tolerance`` (relative), anything
    else at all."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{where}.{k}: missing" for k in expected if k not in actual]
        out += [f"{where}.{k}: not expected" for k in actual if k not in expected]
        for key in expected:
            if key in actual:
                out += differences(expected[key], actual[key], f"{where}.{key}", tolerance)
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(actual)} items, expected {len(expected)}"]
        return [line for index, (a, b) in enumerate(zip(expected, actual))
                for line in differences(a, b, f"{where}[{index}]", tolerance)]
    numbers = (int, float)
    if (isinstance(expected, numbers) and isinstance(actual, numbers)
            and not isinstance(expected, bool) and not isinstance(actual, bool)):
        if math.isclose(expected, actual, rel_tol=tolerance, abs_tol=1e-12):
            return []
        return [f"{where}: {actual!r}, expected {expected!r}"]
    return [] if expected == actual else [f"{where}: {actual!r}, expected {expected!r}"]


def main(target: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_runs(root)
        figures = report_figures(root)
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    Path(target).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
