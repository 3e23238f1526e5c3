"""The way a batch's step runs (threads or one) is chosen from costs kept per process
(``sim/kernels/sharing.py``): the test fails if a cost one batch learned is not what the
next batch of the process starts from.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import ROOT

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
