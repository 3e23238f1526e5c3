"""``--precision``: play until every win rate is known to within +-precision.

The run is checked every ``PRECISION_STEP`` games of the game-id sequence and stops at the
first check where every side's 95% Wilson interval is narrow enough (:func:`precision_stop`),
so the games played are a prefix of the same sequence for any chunk size or thread count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.errors import SettingError
from sim.stats.intervals import wilson_half_width

__all__ = ["check_precision", "DEFAULT_MAX_GAMES", "precision_stop"]

# Justified circle: type-only, never run; plan and summary import this module at run time.
if TYPE_CHECKING:
    from sim.run.plan import Plan
    from sim.store.summary import Summary

PRECISION_STEP = 600  # games between stop checks; a multiple of 2, 3 and 4 (see below)
DEFAULT_MAX_GAMES = 1_000_000  # the cap of a --precision run without --max-games


# The narrowest half-width asked for: +-0.01 percentage points takes some 100 million games
# (0.98 / sqrt(n) at a 50% win rate); a smaller one, such as 1e-320, could only play to the cap.
MIN_PRECISION = 1e-4


def check_precision(precision: float | None) -> float | None:
    """A precision target checked (None: no target), or a SettingError."""
    if precision is None:
        return None
    if isinstance(precision, bool) or not isinstance(precision, int | float) or not (
            MIN_PRECISION <= precision < 0.5):
        raise SettingError(f"{{precision}} must be a half-width from {MIN_PRECISION:g} (about "
                           f"100 million games) to below 0.5, e.g. 0.005 for +-0.5 "
                           f"percentage points; got {precision}")
    return float(precision)


def cap_options(options: dict, resume: bool = False) -> dict:
    """Map ``max_games`` (the cap of a ``--precision`` run) onto ``games``, the plan's length.

    A ``--precision`` run plans ``--max-games`` games and stops at the first check where it
    is precise enough, so ``--games`` (a fixed count) and ``--precision`` exclude each other.
    """
    options = dict(options)
    max_games = options.pop("max_games", None)
    if options.get("precision") is not None and options.get("games") is not None:
        raise SettingError("{games} and {precision} exclude each other: {precision} plays "
                           "until the win rates are precise enough; give its cap as "
                           "{max_games}")
    if max_games is not None:
        if options.get("games") is not None:
            raise SettingError("{games} and {max_games} exclude each other")
        if options.get("precision") is None and not resume:
            raise SettingError("{max_games} is the cap of a {precision} run; without "
                               "{precision} give the number of games as {games}")
        options["games"] = max_games
    elif options.get("precision") is not None and not resume:
        options["games"] = DEFAULT_MAX_GAMES
    return options


def precision_stop(
    wins_before: np.ndarray, games_before: int, winner_side: np.ndarray, precision: float,
    step: int = PRECISION_STEP,
) -> tuple[int, float] | None:
    """Where a ``--precision`` run stops inside a chunk: ``(games, half-width)``, or None.

    The run is checked after every ``step`` games of the game-id sequence (not at chunk
    ends), and stops at the first check where every side's 95% Wilson win-rate interval has
    a half-width of at most ``precision``. So the games played are always a prefix
    ``0..n-1`` of the same sequence, and ``n`` is the same for any chunk size or thread
    count. ``step`` is a multiple of 2, 3 and 4: a stop never splits a rotation cycle or a
    duplicate deal. Stopping on the width (not on the estimate) keeps the interval honest:
    the width depends on the win rate only through ``p (1 - p)``.

    ``wins_before``/``games_before``: the run's counts before this chunk; ``winner_side``:
    the chunk's games in id order (-1 undecided).
    """
    n = winner_side.size
    first = (games_before // step + 1) * step
    checks = np.arange(first, games_before + n + 1, step)
    if checks.size == 0:
        return None
    sides = wins_before.size
    decided = winner_side >= 0
    one_hot = np.zeros((n, sides), dtype=np.int64)
    one_hot[np.flatnonzero(decided), winner_side[decided]] = 1
    wins = wins_before[None, :] + np.cumsum(one_hot, axis=0)[checks - games_before - 1]
    for games, row in zip(checks, wins):
        half = max(wilson_half_width(int(w), int(games)) for w in row)
        if half <= precision:
            return int(games), half
    return None


def stopped_games(manifest: dict | None) -> int | None:
    """Games of a run that stopped early, for precision (its last part is cut there) or on a
    sequential test's decision (after a whole chunk), else None."""
    stopped = (manifest or {}).get("stopped")
    if stopped and stopped.get("reason") in ("precision", "sprt"):
        return int(stopped["games"])
    return None


def truncate_chunk(tables: dict, end_game: int) -> dict:
    """A chunk's tables without the games from ``end_game`` on (a stop for precision)."""
    import pyarrow.compute as pc

    return {name: table.filter(pc.less(table["game_id"], end_game))
            for name, table in tables.items()}


def stop_record(plan: Plan, reason: str, games: int, chunks: int, half_width: float) -> dict:
    """The manifest's ``stopped``: why a --precision run ended, after how many games."""
    return {"reason": reason, "games": int(games), "chunks": int(chunks),
            "half_width": float(half_width), "precision": plan.precision,
            "max_games": plan.games, "step": PRECISION_STEP}


def widest_half_width(summary: Summary) -> float:
    return max(wilson_half_width(int(w), summary.games) for w in summary.wins)
