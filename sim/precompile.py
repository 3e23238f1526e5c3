"""``python -m sim.precompile``: the background process that compiles what a machine
lacks, so that no later command waits for a compile.

Started by ``sim.kernels.shared.start_background`` (see there for why); it takes the lock,
compiles every entry point of the game loop, every built-in strategy and ``sniff hint``'s
search, leaves a marker that it is done, and releases the lock. A failure is kept in a marker
beside it, so that it is not retried on every run, and in the log.
"""

from __future__ import annotations

import os
import sys
import traceback

import numpy as np

from sim.files import write_atomic
from sim.kernels import cachefiles
from sim.kernels import generate as kernels
from sim.kernels.shared import (
    LOCK_NAME,
    PRECOMPILE_ENV,
    builtin_strategies,
    done_marker,
    failed_marker,
    lock_held,
)

__all__ = ["POSITION"]

PARTS = ("engine", "hint", "strategies")


def compile_everything(order: tuple[str, ...] = PARTS) -> None:
    """Compile (or load) every entry point of the game loop, the hint search and every
    built-in strategy, by playing a game of each kind, in ``order`` (``sniff serve`` wants
    the hint search first: it compiles the game's own path itself meanwhile)."""
    for part in order:
        {"engine": _engine, "hint": _hint, "strategies": _strategies}[part]()


def _strategies() -> None:
    for strategy in builtin_strategies():
        kernels.chooser(strategy)


def _engine() -> None:
    from sim.core.layout import EMPTY_LAYOUT
    from sim.kernels.batch import GameBatch
    from sim.kernels.decisions import OUTSIDE
    from sim.kernels.runner import lineup_of, play_batch, trace_events
    from strategies import parse_spec

    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    play_batch(lineup, 1, np.arange(4, dtype=np.int64))
    trace_events(lineup, 1, 0)
    engine = kernels.engine_kernel(("first_deals", "opening_points"))  # sniff openings'
    engine.first_deals(np.uint64(1), np.arange(2, dtype=np.int64), 2)
    engine.opening_points()
    engine.layout_rule(1, EMPTY_LAYOUT, 0, 0)  # sniff serve's table, as its layout_rule calls
    for n_games in (1, 2):  # one game (an environment's, sniff play) and a batch's step
        batch = GameBatch(2, [lineup.seats[0], OUTSIDE], n_games, 1)
        while not batch.done:
            batch.advance(batch.pending().moves[:, 0].copy())


# A position with a choice, read as `sniff hint` reads one: the search compiles on it
# without playing a game first (which would compile the game loop before the search).
POSITION = """players: 2
seat: 0
scores: 10 20
hand: 1-2 3-4 5-5 0-6 0-0
table: 2-6, 6-6 R, 6-1 R
sizes: 5 6
boneyard: 14
lacks: 1=3,4
"""


def _hint() -> None:
    from sim.hint.estimate import analyse
    from sim.hint.position import parse_position

    analyse(parse_position(POSITION), budget=2)


def main(argv: list[str]) -> int:
    """At the lowest priority, take the lock, compile, release; 0 also when another process
    holds the lock. ``argv``: the parts to compile first (of ``PARTS``), the rest after."""
    os.environ[PRECOMPILE_ENV] = "0"  # never start another from here
    try:
        os.nice(19)
    except (AttributeError, OSError):
        pass
    first = tuple(part for part in argv if part in PARTS)
    with kernels.compile_notice(None):  # a background process: nothing to say
        return compile_once(first + tuple(part for part in PARTS if part not in first))


def compile_once(order: tuple[str, ...] = PARTS) -> int:
    """Under the lock, :func:`compile_everything` and leave the done marker (or the failed
    one, with the traceback); 0 also when another process holds the lock."""
    directory = cachefiles.cache_dir()
    lock = directory / LOCK_NAME
    if lock_held(directory):
        return 0
    # The lock appears with its owner's pid already in it (a link of a written file), so
    # no reader ever sees it empty and takes it for stale.
    claim = lock.with_name(f"{LOCK_NAME}.{os.getpid()}")
    try:  # made here, exclusively and unfollowed: a name planted in the cache is not written
        descriptor = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return 0
    with os.fdopen(descriptor, "w") as handle:
        handle.write(str(os.getpid()))
    try:
        os.link(claim, lock)
    except FileExistsError:
        return 0  # another process took it first
    finally:
        claim.unlink()
    try:
        compile_everything(order)
        _mark(done_marker(), "done\n")
    except Exception:
        _mark(failed_marker(), traceback.format_exc())
        traceback.print_exc()
        return 1
    finally:
        lock.unlink(missing_ok=True)
    return 0


def _mark(path, text: str) -> None:
    """Leave a marker, whole and never through a link (``sim.files.write_atomic``); a cache
    where it cannot be left gets none (the compile runs again next time)."""
    try:
        write_atomic(path, lambda temporary: temporary.write_text(text))
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
