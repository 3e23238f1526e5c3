"""Two kernels compiled in different processes, loaded from the cache into one process,
must each run their own strategies (numba names closures per process; see sim/core/engine.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLUGINS = Path(__file__).parent / "plugins"

PLAY = """
import sys
import numpy as np
from sim.core import engine
from sim.kernels.runner import lineup_of, play_batch
from strategies import load_plugin, parse_spec

def checksum(names):
    lineup = lineup_of(2, [parse_spec(n) for n in names])
    games = play_batch(lineup, 3, np.arange(300)).games
    return int(games[:, engine.GAME_WINNER_TEAM].sum()), int(games[:, engine.GAME_SCORES].sum())

load_plugin("my_strategy")
for step in sys.argv[1:]:
    print(step, *checksum(step.split("+")))
"""


def start(cache: Path, *steps: str) -> subprocess.Popen:
    env = dict(os.environ, SNIFF_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", PLAY, *steps], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(process: subprocess.Popen) -> dict[str, str]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_kernels_compiled_apart_still_differ_when_loaded_together(tmp_path: Path):
    # The two kernels compile at once, in two processes (two kernels of their own, in an
    # empty cache: nothing else writes there), so the test waits for one compile, not two.
    base, plugin = start(tmp_path, "greedy+random"), start(tmp_path, "doubles_first+random")
    base, plugin = result(base), result(plugin)
    together = result(start(tmp_path, "greedy+random", "doubles_first+random"))
    assert together["greedy+random"] == base["greedy+random"]
    assert together["doubles_first+random"] == plugin["doubles_first+random"]


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
