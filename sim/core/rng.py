"""Counter-based random streams: every game and every round draws from its own stream.

A stream is a uint64 counter advanced by a fixed odd step and passed through the splitmix64
finaliser, so any stream can be recreated from its key alone. Keys are derived from
``(seed, deal id, round)`` for deals and leader draws, and from ``(seed, game id)`` for
strategies. Nothing depends on which thread plays a game or in which chunk, which is what
makes a run bit-identical for any thread count or chunking, and lets a deal be replayed by
its number (common random numbers, duplicate games, openings).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "GOLDEN", "MIX_1", "MIX_2", "next_random", "random_below", "random_unit", "SALT_STRATEGY",
    "seed_word", "stream_key"
]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)
SALT_DEAL = np.uint64(0xD1B54A32D192ED03)
SALT_STRATEGY = np.uint64(0x8CB92BA72F3D8DD7)


def seed_word(seed: int) -> np.uint64:
    """A run seed (any Python int) as the uint64 word the kernels key their streams by."""
    return np.uint64(seed % 2**64)


@njit(inline="always")
def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


@njit
def stream_key(seed, a, b, salt):
    """A stream's starting counter from the run seed and two integers (e.g. deal, round)."""
    z = mix64(np.uint64(seed) ^ salt)
    z = mix64(z ^ (np.uint64(a) * GOLDEN))
    return mix64(z ^ (np.uint64(b) * MIX_1))


@njit(inline="always")
def next_random(rng):
    """Next 64 random bits of the stream held in ``rng[0]`` (a one-element uint64 array)."""
    rng[0] += GOLDEN
    return mix64(rng[0])


@njit(inline="always")
def random_below(rng, bound):
    """A uniform integer in ``[0, bound)``, for ``bound`` well below 2**32."""
    return np.int64(((next_random(rng) >> np.uint64(32)) * np.uint64(bound)) >> np.uint64(32))


@njit(inline="always")
def random_unit(rng):
    """A uniform float in ``[0, 1)`` with 53 random bits."""
    return np.float64(next_random(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
