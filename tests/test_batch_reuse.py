"""What the batch relies on beside the engine: its waiting rows' buffers reused once no one
holds them (reference counts, ``sim/kernels/batch.py``), and the way a step runs (threads
or one) chosen from costs kept per process (``sim/kernels/sharing.py``). Each test fails if
the reliance breaks: a view of a Decisions that a reused buffer overwrote, a cost one batch
learned that the next batch of the process does not start from.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from sim.kernels.batch import GameBatch
from sim.kernels.decisions import OUTSIDE

ROOT = Path(__file__).resolve().parents[1]


def test_a_kept_view_of_a_dropped_decisions_keeps_its_values() -> None:
    """A caller that keeps only views of a Decisions' fields (not the Decisions) holds the
    buffers through them: later steps never write into what it reads."""
    batch = GameBatch(2, [OUTSIDE, "greedy"], 200, 3)
    rng = np.random.default_rng(1)
    kept = []
    steps = 0
    while not batch.done and steps < 12:
        shown = batch.pending()
        view = shown.observations[: min(3, len(shown))]
        kept.append((view, view.copy()))
        pick = (rng.random(len(shown)) * shown.n_moves).astype(np.int64)
        moves = shown.moves[np.arange(len(shown)), pick]
        del shown
        batch.advance(moves)
        steps += 1
    assert steps >= 6
    for view, copy in kept:
        np.testing.assert_array_equal(view, copy)


CHILD = """
from sim.kernels.sharing import TIMED_FROM, note_cost, shared_step
n = TIMED_FROM
assert shared_step(n)                  # untried: the threads first
note_cost(True, n, 1.0)                # on the threads: slow
assert not shared_step(n)              # then one thread, to compare
note_cost(False, n, 0.001)             # one thread: fast
# another batch of the process starts from what the first learned: one thread
assert [shared_step(n) for _ in range(5)] == [False] * 5
note_cost(False, n - 1, 100.0)         # a step too small to be timed changes nothing
assert not shared_step(n)
print("ok")
"""


def test_the_way_a_step_runs_is_learned_once_per_process() -> None:
    """The costs are the process's, not a batch's: a batch made after another starts from
    what that one learned (in a child process, so that this one's costs stay its own)."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-P", "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
