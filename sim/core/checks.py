"""The one check of each value every entry point takes: a player count and a run seed.

A value is checked once, where it enters (a run's settings, a ``GameBatch``, an
environment's constructor or reset, a request), and carried from there as the ``int`` the
check returns, never checked again. Plain Python (no numba, numpy or pyarrow), so that a
command's options are checked before anything heavy is imported.
"""

from __future__ import annotations

from numbers import Integral

from sim.core.seating import PLAYER_COUNTS
from sim.errors import SettingError

__all__ = ["check_players", "check_seed", "MAX_SEED"]

MAX_SEED = 2**63 - 1  # a run seed: what the random streams are keyed by (sim.core.rng)


def check_players(players: object) -> int:
    """A player count: 2, 3 or 4, as an ``int``; else a one-line ``SettingError`` naming
    ``players``."""
    if isinstance(players, Integral) and not isinstance(players, bool):
        if players in PLAYER_COUNTS:
            return int(players)
        shown: object = players
    else:
        shown = repr(players)
    raise SettingError(f"{{players}} must be 2, 3 or 4, got {shown}")


def check_seed(seed: object) -> int:
    """A run seed: an integer 0..2**63-1, as an ``int``, never wrapped around (``-3`` is not
    ``2**64 - 3``, nor ``2**64`` seed 0); else a one-line ``SettingError`` naming ``seed``."""
    if isinstance(seed, Integral) and not isinstance(seed, bool) and 0 <= int(seed) <= MAX_SEED:
        return int(seed)
    raise SettingError(f"{{seed}} must be an integer from 0 to 2**63-1, got {seed}")
