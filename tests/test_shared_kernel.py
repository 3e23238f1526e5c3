"""The shared kernel (sim.kernels.shared, sim.kernels.precompile): every built-in strategy compiled
once, in the background, then used by every lineup of built-in strategies."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from sim.core import engine
from sim.kernels import generate as kernels
from sim.kernels import runner
from sim.kernels import shared as shared_kernel
from sim.kernels.precompile import compile_shared
from strategies import get, parse_spec

REAL_POPEN = subprocess.Popen  # the fixture replaces it


@pytest.fixture
def spawned(monkeypatch, tmp_path):
    """Background compiles turned on, in an empty cache, with ``Popen`` recorded instead."""
    monkeypatch.setenv(shared_kernel.PRECOMPILE_ENV, "1")
    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels, "notice", None)
    calls: list[list[str]] = []
    monkeypatch.setattr(shared_kernel.subprocess, "Popen",
                        lambda command, **options: calls.append(command))
    return calls


def own_set() -> list:
    return [get("greedy"), get("random")]


def test_until_compiled_a_lineup_keeps_its_own_kernel_and_one_compile_starts(spawned, tmp_path):
    assert shared_kernel.kernel_set(own_set()) == own_set()
    assert spawned == [[sys.executable, "-m", "sim.kernels.precompile"]]
    # The next batch, before the child has taken its lock: nothing more starts.
    shared_kernel.kernel_set(own_set())
    assert len(spawned) == 1
    # The background process holds the lock (here: this live process): nothing more starts.
    (tmp_path / "kernels" / shared_kernel.LOCK_NAME).write_text(str(os.getpid()))
    assert shared_kernel.kernel_set(own_set()) == own_set()
    assert len(spawned) == 1


def test_a_dead_holder_s_lock_is_cleared_and_the_compile_starts_again(spawned, tmp_path):
    dead = REAL_POPEN([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / "kernels" / shared_kernel.LOCK_NAME
    lock.parent.mkdir(parents=True)
    lock.write_text(str(dead.pid))
    shared_kernel.kernel_set(own_set())
    assert len(spawned) == 1 and not lock.exists()


def test_a_failed_compile_is_not_retried_and_the_switch_turns_it_off(spawned, monkeypatch):
    path = kernels.kernel_path(shared_kernel.builtin_strategies())[0]
    shared_kernel.failed_marker(path).write_text("Traceback ...")
    shared_kernel.kernel_set(own_set())
    shared_kernel.failed_marker(path).unlink()
    monkeypatch.setenv(shared_kernel.PRECOMPILE_ENV, "0")
    shared_kernel.kernel_set(own_set())
    assert spawned == []


def test_a_plugin_lineup_never_moves_to_the_shared_kernel(spawned):
    # A strategy from another module, as a plugin registers it (not registered here: the
    # registry is shared with the other tests).
    plugin = dataclasses.replace(get("greedy"), name="doubles_first", module="my_strategy")
    with_plugin = [plugin, *own_set()]
    assert shared_kernel.kernel_set(with_plugin) == with_plugin
    assert spawned == []


def test_once_compiled_every_builtin_lineup_plays_the_same_games_in_the_shared_kernel(
    monkeypatch,
):
    builtins = shared_kernel.builtin_strategies()
    compile_shared(builtins)  # the suite's KERNEL (test_strategies) is this same kernel
    assert kernels.is_compiled(kernels.kernel_path(builtins)[0], shared_kernel.FUNCTIONS)
    lineup = runner.lineup_of(4, [parse_spec("random"), parse_spec("greedy")])
    shared = runner.compile_lineup(lineup)
    assert [int(f) for f in shared[1]] == [
        [s.name for s in builtins].index(name) for name in ("random", "greedy")]
    ids = np.arange(300, dtype=np.int64)
    in_shared = runner.play_batch(lineup, 5, ids)
    monkeypatch.setattr(shared_kernel, "kernel_set", lambda strategies: list(strategies))
    alone = runner.compile_lineup(lineup)
    assert alone[0] is not shared[0]  # its own kernel, with the same code for this lineup
    in_own = runner.play_batch(lineup, 5, ids)
    assert np.array_equal(in_shared.games, in_own.games)
    assert np.array_equal(in_shared.round_rows, in_own.round_rows)
    assert in_shared.games[:, engine.GAME_ROUNDS].sum() > 300
