"""An example strategy plugin, registered from outside the ``strategies`` package.

It is the "Writing a strategy" example of docs/strategies.md: score the most points now;
with nothing to score, get rid of doubles (they fit one value only), then the heaviest tile.
"""

from numba import njit

from sim.core import observation as view
from sim.core.layout import move_points
from sim.core.tiles import DOUBLES_MASK, TILE_PIPS
from strategies import register


@register(
    "doubles_first",
    "most points now; else shed doubles first, then the heaviest tile",
    params={"double_bonus": 8.0},
)
@njit
def choose(observation, moves, n_moves, params, rng):
    layout = observation[view.LAYOUT]
    best = 0
    best_value = -1.0
    for index in range(n_moves):
        tile = moves[index] >> 2
        # Points first (x100 outweighs any pip count), then pips, plus a bonus for doubles.
        value = 100.0 * move_points(layout, moves[index]) + TILE_PIPS[tile]
        if (DOUBLES_MASK >> tile) & 1:
            value += params[0]
        if value > best_value:
            best = index
            best_value = value
    return best
