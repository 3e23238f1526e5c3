"""``defensive``: points now minus the expected best reply of the next opponent.

The next seat always plays against us, and it moves on the table we leave. Its hand is
modelled as its hand size in tiles drawn from the unseen tiles that show no value it is
known to lack; a move is worth its points minus ``risk`` times that opponent's expected
best score in reply (``strategies.heuristics.features.expected_best_reply``).

Parameters: ``risk`` (default 1): weight of the opponent's expected reply;
``shed`` (default 0.1): weight of the pips shed, which mostly breaks ties.
"""

from numba import njit

from strategies import register
from strategies.heuristics.features import choose_by_features, weights

__all__ = ["choose_defensive"]


@register(
    "defensive",
    "points now minus the next opponent's expected best reply (from what it can hold)",
    params={"risk": 1.0, "shed": 0.1},
)
@njit
def choose_defensive(observation, moves, n_moves, params, rng):
    return choose_by_features(
        observation, moves, n_moves, weights(points=1.0, reply=-params[0], shed=params[1])
    )
