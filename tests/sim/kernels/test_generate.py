"""Compile once (sim.kernels.generate): the game loop is compiled once and plays any lineup;
each strategy is compiled alone, cached by its own code, and called through its address.

What a run records as its code, and what a moved or re-documented module keeps.

A run records the digest of the code its lineup plays; ``--resume`` refuses when it changed.
The digest must see every change to what the code computes, and nothing else: not a module
moved to another package, an import renamed, a docstring or comment edited, nor a strategy
the lineup does not play.
"""

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
from sim.kernels import generate
from sim.kernels import generate as kernels
from sim.kernels.runner import lineup_of, lineup_strategies, play_batch
from strategies import StrategyError, kept_registry, load_plugin, parse_spec
from strategies import get as get_strategy
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



SOURCE = '''"""A module."""
from sim.core import tiles


def f(x):
    """Twice x."""
    return 2 * x  # doubled
'''


def test_code_hash_ignores_imports_docstrings_and_layout():
    moved = SOURCE.replace("from sim.core import tiles", "from sim import tiles as t")
    redocumented = SOURCE.replace('"""Twice x."""', '"""Double."""').replace("# doubled", "")
    reflowed = SOURCE.replace("return 2 * x", "return (\n        2 * x\n    )")
    base = generate.code_hash(SOURCE)
    assert generate.code_hash(moved) == base
    assert generate.code_hash(redocumented) == base
    assert generate.code_hash(reflowed) == base


def test_code_hash_sees_a_change_of_code():
    assert generate.code_hash(SOURCE.replace("2 * x", "3 * x")) != generate.code_hash(SOURCE)
    assert generate.code_hash(SOURCE.replace("def f(x)", "def g(x)")) != generate.code_hash(
        SOURCE)


def test_the_digest_covers_the_engine_and_the_strategies_that_play():
    modules = generate.code_modules([get_strategy("expert")])
    assert {"sim.core.engine", "sim.core.layout", "strategies.search.expert",
            "strategies.search.playout", "strategies.search.determinize"} <= set(modules)
    assert "strategies" not in modules  # the registry holds no compiled code
    greedy = generate.code_modules([get_strategy("greedy")])
    assert "strategies.search.expert" not in greedy and "strategies.heuristics.greedy" in greedy
    assert generate.code_digest([get_strategy("greedy")]) != generate.code_digest(
        [get_strategy("greedy"), get_strategy("expert")])


def test_a_lineup_code_does_not_depend_on_seat_order():
    one = lineup_of(2, [parse_spec("blocker"), parse_spec("greedy")])
    other = lineup_of(2, [parse_spec("greedy"), parse_spec("blocker")])
    assert [s.name for s in lineup_strategies(one)] == ["blocker", "greedy"]
    assert generate.code_digest(lineup_strategies(one)) == generate.code_digest(
        lineup_strategies(other))


def test_a_model_module_of_another_template_is_rewritten(tmp_path, monkeypatch):
    """``learned:model=PATH`` modules are cached by the model's bytes: one written by another
    version of the template is rewritten on the next use; a current one is left alone."""
    import hashlib

    from strategies.learned import model_files
    from strategies.learned.player import shipped_path

    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    path = shipped_path(2)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    module = tmp_path / "learned" / f"sniff_learned_{digest}.py"
    module.parent.mkdir(parents=True)
    old = model_files.MODULE_TEMPLATE.replace(
        "strategies.learned.net", "strategies.elsewhere_net")
    module.write_text(old.format(source="elsewhere", copy="x", players=2))
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    model_files.model_strategy(get_strategy("learned"), str(path))
    text = module.read_text()
    assert "from strategies.learned.net import load_model" in text
    assert "strategies.elsewhere_net" not in text
    stamp = module.stat().st_mtime_ns
    model_files.model_strategy(get_strategy("learned"), str(path))
    assert module.stat().st_mtime_ns == stamp  # the current template is left alone
