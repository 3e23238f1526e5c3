"""The background compile (sim.kernels.shared, sim.precompile): what a machine lacks
is compiled once, in one process at a time, and then no lineup of built-in strategies waits
for a compile."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from sim import precompile
from sim.kernels import cachefiles, shared
from sim.kernels import generate as kernels
from strategies import get

REAL_POPEN = subprocess.Popen  # the fixture replaces it

@pytest.fixture
def spawned(monkeypatch, tmp_path):
    """Background compiles turned on, in an empty cache, with ``Popen`` recorded instead."""
    monkeypatch.setenv(shared.PRECOMPILE_ENV, "1")
    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels, "notice", None)
    monkeypatch.setattr(shared, "_started", set())
    calls: list[tuple[list[str], dict]] = []
    monkeypatch.setattr(shared.subprocess, "Popen",
                        lambda command, **options: calls.append((command, options)))
    return calls


def test_one_compile_starts_once_per_process_and_never_from_the_working_folder(spawned):
    assert shared.start_background()
    assert not shared.start_background()  # the child may not hold its lock yet
    assert len(spawned) == 1
    command, options = spawned[0]
    assert command[1:] == ["-P", "-m", "sim.precompile"]
    assert options["env"]["PYTHONSAFEPATH"] == "1"


def test_a_live_lock_holds_it_back_and_a_dead_holder_s_lock_is_cleared(spawned, tmp_path):
    lock = cachefiles.cache_dir() / shared.LOCK_NAME
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()))
    assert not shared.start_background()
    child = REAL_POPEN([sys.executable, "-c", "pass"])
    child.wait()
    lock.write_text(str(child.pid))
    assert shared.start_background()
    assert not lock.exists()


def test_a_failed_or_finished_compile_is_not_retried_and_the_switch_turns_it_off(
        spawned, monkeypatch):
    cachefiles.cache_dir().mkdir(parents=True, exist_ok=True)
    shared.failed_marker().write_text("Traceback ...")
    assert not shared.start_background()
    shared.failed_marker().unlink()
    shared.done_marker().write_text("done\n")
    assert not shared.start_background()
    shared.done_marker().unlink()
    monkeypatch.setenv(shared.PRECOMPILE_ENV, "0")
    assert not shared.start_background()
    assert spawned == []


def test_it_compiles_every_builtin_and_every_entry_point_then_leaves_its_marker(monkeypatch):
    # In the suite's own cache: what it compiles here, the other tests load.
    monkeypatch.setattr(kernels, "notice", None)
    shared.done_marker().unlink(missing_ok=True)
    # Another test's process may be running the same compile in this cache (a benchmark of
    # tests/project/test_scripts.py): compile_once then returns at once, leaving it to that one, so
    # wait for its lock to go and ask again.
    deadline = time.monotonic() + 600
    while True:
        while shared.lock_held(cachefiles.cache_dir()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert precompile.compile_once() == 0
        if shared.done_marker().exists() or time.monotonic() > deadline:
            break
    assert shared.done_marker().exists()
    for strategy in shared.builtin_strategies():
        assert cachefiles.is_compiled(kernels.chooser_path(strategy), ("chooser",)), strategy.name
    assert cachefiles.is_compiled(kernels.engine_path(), (
        "play_batch", "trace_game", "step_batch", "advance_serial", "gather_decisions",
        "start_batch", "first_illegal"))


def test_after_it_a_lineup_never_played_before_compiles_nothing(tmp_path):
    # After the test above (same file, same worker): a new pairing of built-ins starts at
    # once, saying nothing of a compile.
    done = subprocess.run(
        [sys.executable, "-P", "-m", "sim.cli", "simulate", "--players", "3", "--strategies",
         "heavy,defensive,weighted", "--games", "300", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, env={**os.environ, shared.PRECOMPILE_ENV: "1"})
    assert done.returncode == 0, done.stderr
    assert "compiling" not in done.stderr
    assert get("heavy").name in done.stdout


def test_only_another_process_s_compile_is_waited_for(spawned):
    # The background process holds the lock while it compiles the hint search itself: it
    # must not wait for its own lock (it did, for 300 s, from an empty cache).
    lock = cachefiles.cache_dir() / shared.LOCK_NAME
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(str(os.getpid()))
    assert shared.lock_held(lock.parent) and not shared.held_by_another(lock.parent)
    child = REAL_POPEN([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(str(child.pid))
        assert shared.held_by_another(lock.parent)
    finally:
        child.kill()
        child.wait()
