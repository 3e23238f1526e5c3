"""Compile once (sim.kernels.generate): the game loop is compiled once and plays any lineup;
each strategy is compiled alone, cached by its own code, and called through its address."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.cache import cache_base
from sim.core import engine
from sim.errors import SniffError
from sim.kernels import generate as kernels
from sim.kernels.runner import lineup_of, play_batch
from strategies import StrategyError, kept_registry, load_plugin, parse_spec
from tests.helpers import TESTS

PLUGINS = TESTS / "plugins"

PLAY = """
import os
import sys
import numpy as np
from sim.core import engine
from sim.kernels.runner import lineup_of, play_batch
from strategies import load_plugin, parse_spec

def checksum(names):
    lineup = lineup_of(2, [parse_spec(n) for n in names])
    games = play_batch(lineup, 3, np.arange(300)).games
    return int(games[:, engine.GAME_WINNER_TEAM].sum()), int(games[:, engine.GAME_SCORES].sum())

load_plugin(sys.argv[1])
for names in sys.argv[2:]:
    print(names, *checksum(names.split("+")))
"""


def play(cache: Path | str, plugin_folder: Path, plugin: str, *lineups: str
         ) -> tuple[dict[str, str], str]:
    """Each lineup's checksum, played in a process of its own with ``cache``; and what it
    said on stderr."""
    env = dict(os.environ, SNIFF_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(plugin_folder), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", PLAY, plugin, *lineups], env=env,
                          capture_output=True, text=True, timeout=600, cwd=plugin_folder)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines()), done.stderr


def compiled_files(cache: Path) -> set[str]:
    return {p.name for p in (cache / "kernels" / "__pycache__").glob("*.nbi")}


def test_a_new_strategy_compiles_only_itself_and_an_edit_only_itself_again(tmp_path: Path):
    # The suite's cache holds the engine and greedy/random (tests/conftest.py): a copy of it
    # is "a machine whose engine is cached".
    cache = tmp_path / "cache"
    shutil.copytree(cache_base(), cache, ignore=shutil.ignore_patterns("*.lock"))
    folder = tmp_path / "plugin"
    folder.mkdir()
    # a plugin no cache has seen: its bytes name its compiled wrapper
    source = (PLUGINS / "my_strategy.py").read_text() + f"# {tmp_path.name}\n"
    (folder / "my_strategy.py").write_text(source)
    before = compiled_files(cache)
    first, said = play(cache, folder, "my_strategy", "doubles_first+random", "greedy+random")
    new = compiled_files(cache) - before
    assert len(new) == 1 and next(iter(new)).startswith("sniff_choose_doubles_first"), new
    assert "compiling strategy doubles_first" in said and "game engine" not in said
    # An edit of one constant: a new wrapper module for that strategy alone, and other games.
    (folder / "my_strategy.py").write_text(source.replace("100.0 *", "1.0 *"))
    before = compiled_files(cache)
    edited, said = play(cache, folder, "my_strategy", "doubles_first+random", "greedy+random")
    new = compiled_files(cache) - before
    assert len(new) == 1 and next(iter(new)).startswith("sniff_choose_doubles_first")
    assert edited["doubles_first+random"] != first["doubles_first+random"]
    assert edited["greedy+random"] == first["greedy+random"]
    # Unchanged again: nothing compiled, the first games back.
    (folder / "my_strategy.py").write_text(source)
    before = compiled_files(cache)
    again, said = play(cache, folder, "my_strategy", "doubles_first+random")
    assert compiled_files(cache) == before and "compiling" not in said
    assert again["doubles_first+random"] == first["doubles_first+random"]


def test_strategies_loaded_together_each_play_their_own_games():
    with kept_registry():
        names = ["greedy+random", "random+greedy", "greedy+greedy"]
        alone = {}
        for pair in names:
            lineup = lineup_of(2, [parse_spec(n) for n in pair.split("+")])
            alone[pair] = play_batch(lineup, 3, np.arange(200)).games
        mixed = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
        again = play_batch(mixed, 3, np.arange(200)).games
    assert np.array_equal(again, alone["greedy+random"])
    assert not np.array_equal(alone["greedy+random"], alone["random+greedy"])
    assert alone["greedy+greedy"][:, engine.GAME_WINNER_TEAM].min() >= 0


def test_a_strategy_that_raises_stops_the_run_in_one_line_naming_it(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.delitem(sys.modules, "raiser", raising=False)  # registers again on import
    with kept_registry():
        load_plugin("raiser")
        lineup = lineup_of(2, [parse_spec("raiser"), parse_spec("random")])
        with pytest.raises(SniffError, match=r"^strategy 'raiser' \(module raiser\) raised "
                                             r"ValueError: no idea what to play inside the "
                                             r"compiled engine \(game \d+, seat \d\)"):
            play_batch(lineup, 3, np.arange(50))


def test_a_plugin_that_does_not_compile_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "broken_plugin.py").write_text(
        "from numba import njit\nfrom strategies import register\n\n"
        "@register('broken', 'returns text')\n@njit\n"
        "def choose(observation, moves, n_moves, params, rng):\n    return 'no'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(kernels, "notice", None)
    with kept_registry():
        load_plugin("broken_plugin")
        lineup = lineup_of(2, [parse_spec("broken"), parse_spec("random")])
        with pytest.raises(StrategyError, match="strategy 'broken' .*must return an integer"):
            play_batch(lineup, 3, np.arange(5))
