"""Sound sniff folders and links put into copies of them, for the tests of links in a folder
(``sniff verify`` names them; writers refuse them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import sim
from sim.openings.study import run_openings
from sim.tournament import run_tournament


def sound_folders(base: Path, openings_deals: int) -> dict[str, Path]:
    """In ``base``: a plain run of 2 chunks (``run``), an openings folder (``openings``) and
    a tournament (``tournament``), each sound; by name."""
    sim.simulate(2, "greedy,random", 200, 3, chunk_size=100, out=base / "run")
    run_openings(2, "random", openings_deals, seed=5, out=base / "openings")
    run_tournament(2, "greedy,random,heavy", 60, seed=3, out=base / "tournament",
                   chunk_size=60)
    return {name: base / name for name in ("run", "openings", "tournament")}


def linked_out(folder: Path, name: str, outside: Path) -> Path:
    """``folder/name`` moved to ``outside`` (same bytes) and replaced by a link to it."""
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(folder / name, outside)
    (folder / name).symlink_to(outside, target_is_directory=outside.is_dir())
    return outside
