"""What the tests of ``sniff verify`` share: its one-line refusals, copies of a run to
edit, and the runs it checks (``tests/sim/cli/test_verify.py``,
``tests/sim/openings/test_folder.py``, ``tests/sim/audit/test_reproduce.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import sim
from sim.compare.play import compare
from tests.helpers.cli import error_lines, run_main


def one_line(code: int, err: str, text: str) -> None:
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def copy_of(run: Path, tmp_path: Path, name: str = "copy") -> Path:
    target = tmp_path / name
    shutil.copytree(run, target)
    return target


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def verify(folder: Path, capsys) -> tuple[int, str, str]:
    return run_main(["verify", str(folder)], capsys)


def play_runs(base: Path, names: tuple[str, ...] = ("compare", "precision", "plain")
              ) -> dict[str, Path]:
    """A compare run (decided H1), a --precision run (stopped at 1,200 of at most 6,000
    games) and a plain run, in ``base``: those ``names`` asks for."""
    if "compare" in names:
        compare("greedy", "random", players=2, out=base / "compare", seed=1)
    if "precision" in names:
        sim.simulate(2, "greedy,greedy", seed=2, chunk_size=600, out=base / "precision",
                     precision=0.03, max_games=6000)
    if "plain" in names:
        sim.simulate(2, "greedy,random", 200, 3, chunk_size=100, out=base / "plain")
    return {path.name: path for path in base.iterdir()}


def reledger(run: Path) -> None:
    """Every part's ledger record recomputed from its file as it is now (size, sha256): a
    part rewritten by a test stays consistent with every hash, so what a reader then finds
    is the rewrite itself, not a changed byte count."""
    from sim.checks import integrity

    records = integrity.read_ledger(run)
    for record in records.values():
        for table, part in record["parts"].items():
            record["parts"][table] = integrity.part_record(run / table / part["file"],
                                                           part["rows"])
    (run / integrity.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in records.values()))
