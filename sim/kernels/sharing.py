"""Whether a step of a :class:`sim.kernels.batch.GameBatch` shares its games among the threads.

A parallel region wakes every thread. On a quiet machine that costs microseconds and two
threads play a step in little more than half the time of one; on a busy one (other
processes on every core) a woken thread may wait for a time slice, and a step on the threads
can take many times longer than on one. So each way's cost per game is kept, as a moving
average over the steps of this process, and the cheaper way chosen. The other way is tried
again every ``EXPLORE`` timed steps times how many times slower it looked (so a try costs
the same share of the time however bad that way was), and a cost measured once under load
does not keep a batch on the slow way after the load has gone (the model before this one
counted its tries per batch, which a 4,096-game batch never reached, and stuck to one
thread). Only the speed depends on it: every game is the same on any thread.
"""

from __future__ import annotations

import numba

__all__: list[str] = []  # nothing here is used outside sim.kernels

BLOCK_SIZE = 32  # games a thread takes at a time in a step shared among the threads
PARALLEL_FROM = 2 * BLOCK_SIZE  # below two blocks one thread does all the work anyway
TIMED_FROM = 512  # steps this large are timed (smaller ones are mostly fixed costs)
# Timed steps between tries of the way that looks slower, per times slower: rare enough
# that the tries cost little of a batch's time on a quiet machine, frequent enough that a
# load that comes or goes is noticed within a few batches (docs/speed.md, The batch).
EXPLORE = 32
WEIGHT = 0.5  # of the newest step in the moving average

# seconds per game of a step on all threads (True) and on one (False); steps timed.
#
# Process-global on purpose: a batch lives for few steps (an environment's reset makes a
# new one), so costs kept per batch were never learned. What this relies on: that every
# batch of the process costs about the same per game on each way, so one batch's cost
# stands for another's (the same machine, load and thread count; lineups of like cost);
# and that steps are timed one at a time (a batch steps from one Python thread). What
# would break it, only in speed, never in the games: batches of very different cost per
# game in one process (an ``expert`` lineup and a ``random`` one), whose costs then mix
# in one average and may choose the slower way for both; batches stepped from several
# threads at once, whose parallel steps compete for the same cores and whose updates of
# these two globals may be lost; a fork, whose child starts with its parent's costs.
_cost: dict[bool, float | None] = {True: None, False: None}
_timed = [0]


def shared_step(n_games: int) -> bool:
    """Whether to play a step of ``n_games`` games on all the threads."""
    if n_games < PARALLEL_FROM or numba.get_num_threads() < 2:
        return False
    shared, alone = _cost[True], _cost[False]
    if shared is None or alone is None:
        # Untried: the threads first, then (a large step) one thread, to compare.
        return shared is None or n_games < TIMED_FROM
    faster = shared <= alone
    every = EXPLORE * max(1, round(max(shared, alone) / min(shared, alone)))
    if n_games >= TIMED_FROM and _timed[0] % every == every - 1:
        return not faster
    return faster


def note_cost(shared: bool, n_games: int, seconds: float) -> None:
    """Record how long a step of ``n_games`` took, played the way ``shared`` says."""
    if n_games < TIMED_FROM:
        return
    _timed[0] += 1
    known = _cost[shared]
    cost = seconds / n_games
    _cost[shared] = cost if known is None else (1 - WEIGHT) * known + WEIGHT * cost
