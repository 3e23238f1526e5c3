"""A plugin whose choose() raises inside the compiled engine
(tests/strategies/registry/test_plugins.py)."""

from numba import njit

from strategies import register


@register("raiser", "raises inside the engine")
@njit
def choose(observation, moves, n_moves, params, rng):
    if n_moves > 1:
        raise ValueError("no idea what to play")
    return 0
