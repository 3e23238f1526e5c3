"""``blocker``: play toward open ends the opponents are known to lack, away from their counts.

An opponent that cannot place must draw (fattening its hand for settlement) or pass (giving
us the turn). For each move it adds, per opponent, the probability that the opponent has
nothing to place on the new table — high when the open ends show values it drew or passed
on — and subtracts the expected best score of the next opponent's reply.

Parameters: ``block`` (default 8): points a sure block of one opponent is worth;
``reply`` (default 0.5): weight of the next opponent's expected reply;
``shed`` (default 0.1): weight of the pips shed.
"""

from numba import njit

from strategies import register
from strategies.heuristics.features import choose_by_features, weights

__all__ = ["blocker_choice", "choose_blocker"]


@njit
def blocker_choice(observation, moves, n_moves, params, levels=None):
    """``blocker``'s pick; ``levels`` as in ``strategies.heuristics.features.move_value``."""
    return choose_by_features(observation, moves, n_moves, weights(
        points=1.0, block=params[0], reply=-params[1], shed=params[2],
    ), levels)


@register(
    "blocker",
    "points now, plus the chance each opponent cannot place, minus its expected reply",
    params={"block": 8.0, "reply": 0.5, "shed": 0.1},
)
@njit
def choose_blocker(observation, moves, n_moves, params, rng):
    return blocker_choice(observation, moves, n_moves, params)
