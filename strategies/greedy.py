"""``greedy``: take the most points now; on a tie shed the heaviest tile.

Scoring now is what wins races to the target, and shedding weight lowers the settlement
penalty if the round is lost.
"""

from numba import njit

from sim import observation as view
from sim.layout import move_points
from sim.tiles import TILE_PIPS
from strategies import register


@register("greedy", "most points now; ties shed the heaviest tile")
@njit(inline="always")
def choose_greedy(observation, moves, n_moves, params, rng):
    layout = observation[view.LAYOUT]
    best = 0
    best_points = -1
    best_pips = -1
    for index in range(n_moves):
        move = moves[index]
        points = move_points(layout, move)
        pips = TILE_PIPS[move >> 2]
        if points > best_points or (points == best_points and pips > best_pips):
            best = index
            best_points = points
            best_pips = pips
    return best
