"""``random``: a uniformly random legal placement — the baseline every heuristic must beat."""

from numba import njit

from sim.core.rng import random_below
from strategies import register

__all__ = ["choose_random"]


@register("random", "uniformly random legal placement")
@njit(inline="always")
def choose_random(observation, moves, n_moves, params, rng):
    return random_below(rng, n_moves)
