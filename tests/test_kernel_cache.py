"""Two kernels compiled in different processes, loaded from the cache into one process,
must each run their own strategies (numba names closures per process; see sim/core/engine.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cache import cache_base

PLUGINS = Path(__file__).parent / "plugins"
# Only kernels of its own: it need not wait for the shared one (tests/conftest.py).
pytestmark = pytest.mark.no_shared_kernel

PLAY = """
import os
import sys
import numpy as np
from sim.core import engine
from sim.kernels.runner import lineup_of, play_batch
from sim.kernels.shared import own_kernels
from strategies import load_plugin, parse_spec

def checksum(names):
    lineup = lineup_of(2, [parse_spec(n) for n in names])
    with own_kernels():  # never the shared kernel, even where the suite compiled it
        games = play_batch(lineup, 3, np.arange(300)).games
    return int(games[:, engine.GAME_WINNER_TEAM].sum()), int(games[:, engine.GAME_SCORES].sum())

load_plugin("my_strategy")
for step in sys.argv[1:]:
    names, cache = step.split("@")
    os.environ["SNIFF_CACHE_DIR"] = cache  # each kernel from its own cache folder
    print(step, *checksum(names.split("+")))
"""


def start(*steps: str) -> subprocess.Popen:
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", PLAY, *steps], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(process: subprocess.Popen) -> dict[str, str]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_kernels_compiled_apart_still_differ_when_loaded_together(tmp_path: Path):
    # The plugin's kernel is compiled here, in an empty cache (nothing else writes there), by
    # a process of its own. The kernel of greedy and random comes from the suite's cache:
    # compiled by the other process started here, or earlier by the process of another test
    # (test_shared_kernel plays that kernel too), never by the plugin's process; the suite
    # then compiles it once, not twice.
    suite_cache = str(cache_base())
    base = start(f"greedy+random@{suite_cache}")
    plugin = start(f"doubles_first+random@{tmp_path}")
    base, plugin = result(base), result(plugin)
    together = result(start(f"greedy+random@{suite_cache}", f"doubles_first+random@{tmp_path}"))
    assert together[f"greedy+random@{suite_cache}"] == base[f"greedy+random@{suite_cache}"]
    assert together[f"doubles_first+random@{tmp_path}"] == plugin[
        f"doubles_first+random@{tmp_path}"]


def test_each_kernels_game_loop_has_names_of_its_own():
    """The guard itself, checked without compiling: the loop's functions carry the module
    of their dispatcher in their qualified names, which numba's cache symbols are made
    from. (The test above, with this numba, passes even without the guard: it shows the
    kernels load together correctly, not that two compiles could not collide.)"""
    import types

    from numba import njit

    from sim.core import loop as game_loop

    names = []
    for module in ("sniff_kernel_a", "sniff_kernel_b"):
        space = types.ModuleType(module)
        exec("def choose_move(function, observation, moves, n_moves, params, rng):\n"
             "    return 0\n", space.__dict__)
        loop = game_loop.make_game_player(njit(space.choose_move))
        names.append([function.py_func.__qualname__ for function in loop])
    assert all(module in name for module, row in zip(("sniff_kernel_a", "sniff_kernel_b"),
                                                      names) for name in row)
    assert not set(names[0]) & set(names[1])
