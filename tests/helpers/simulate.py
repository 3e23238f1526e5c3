"""A small ``sniff simulate`` run that several test files read: its settings, its plan and
its tables (``tests/sim/run/test_simulation.py``, ``tests/sim/store/test_tables.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

import sim
from sim.run.plan import resolve_plan
from sim.run.simulation import execute
from tests.helpers import ROOT

GAMES = 3000
CHUNK = 500
SEED = 11


def plan_of(**options):
    base = {"players": 4, "strategies": "greedy,random", "games": GAMES, "seed": SEED,
            "chunk_size": CHUNK}
    return resolve_plan({**base, **options})


def frames(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    run = sim.load(folder)
    return run.games, run.rounds


def play_base_run(tmp_path_factory) -> Path:
    """The 4-player run of ``GAMES`` games in chunks of ``CHUNK`` (a module's fixture)."""
    folder = tmp_path_factory.mktemp("runs") / "base"
    execute(plan_of(), folder)
    return folder


def documented_columns(table: str, players: int) -> list[str]:
    """Column names from docs/data-format.md's section ``## `table` ...`` (the ``games`` or
    ``rounds`` table, or the ``--no-rounds`` columns), seat/team patterns expanded."""
    text = (ROOT / "docs" / "data-format.md").read_text()
    section = text.split(f"\n## `{table}` ", 1)[1].split("\n## ", 1)[0]
    names = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
    teams = 2 if players == 4 else players
    out = []
    for name in names:
        if "{s}" in name:
            out += [name.replace("{s}", str(s)) for s in range(players)]
        elif "{t}" in name:
            out += [name.replace("{t}", str(t)) for t in range(teams)]
        else:
            out.append(name)
    return out
