"""``heavy``: shed the heaviest tile; among equally heavy tiles, take the most points.

It plays for settlement: every pip left in hand when the round ends is paid (rounded to 5),
so getting rid of sixes and fives first limits the loss of every round it does not win.
It ignores what the table scores except to break ties (and to take a move that reaches
the target). No parameters.
"""

from numba import njit

from strategies import register
from strategies.heuristics.features import choose_by_features, weights

__all__ = ["choose_heavy"]


@register("heavy", "shed the most pips (plays for settlement); ties take the most points")
@njit
def choose_heavy(observation, moves, n_moves, params, rng):
    # Points never exceed 35 and pips differ by whole units: 0.01 x points only breaks ties.
    return choose_by_features(observation, moves, n_moves, weights(shed=1.0, points=0.01))
