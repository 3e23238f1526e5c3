"""``python -m sim.kernels.precompile``: the background process that compiles the shared kernel.

Started by ``sim.kernels.shared.start_background`` (see there for why); it takes the lock,
compiles the kernel of every built-in strategy (its trace function, then its batch one,
so that a lineup never moves to a half-compiled kernel) and releases the lock. A failure is
kept in a marker beside the kernel, so that it is not retried on every run, and in the log.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

import numpy as np

from sim.kernels import generate as kernels
from sim.kernels.runner import lineup_of, play_batch, trace_events
from sim.kernels.shared import (
    LOCK_NAME,
    PRECOMPILE_ENV,
    builtin_strategies,
    failed_marker,
    lock_held,
)
from strategies import Strategy, StrategySpec


def compile_shared(builtins: Sequence[Strategy]) -> None:
    """Compile (or load) the kernel of ``builtins``: its trace function, then its batch one."""
    specs = [StrategySpec(s, tuple(s.params.values())) for s in builtins[:2]]
    lineup = lineup_of(2, specs)
    trace_events(lineup, 1, 0, kernel_strategies=builtins)
    play_batch(lineup, 1, np.arange(4, dtype=np.int64), kernel_strategies=builtins)


def main() -> int:
    """Take the lock, compile, release; 0 also when another process holds the lock."""
    os.environ[PRECOMPILE_ENV] = "0"  # never start another from here
    with kernels.compile_notice(None):  # a background process: nothing to say
        return _compile_once()


def _compile_once() -> int:
    try:
        os.nice(19)
    except (AttributeError, OSError):
        pass
    builtins = builtin_strategies()
    path = kernels.kernel_path(builtins)[0]
    lock = path.parent / LOCK_NAME
    if lock_held(path.parent):
        return 0
    # The lock appears with its owner's pid already in it (a link of a written file), so
    # no reader ever sees it empty and takes it for stale.
    claim = lock.with_name(f"{LOCK_NAME}.{os.getpid()}")
    claim.write_text(str(os.getpid()))
    try:
        os.link(claim, lock)
    except FileExistsError:
        return 0  # another process took it first
    finally:
        claim.unlink()
    try:
        compile_shared(builtins)
    except Exception:
        failed_marker(path).write_text(traceback.format_exc())
        traceback.print_exc()
        return 1
    finally:
        lock.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
