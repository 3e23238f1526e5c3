"""``weighted``: a linear combination of named move features with weights from the user.

A heuristic can be defined on the command line without writing code, e.g.
``weighted:points=1,shed=0.3,reply=-0.7``. Each move is scored by the sum of weight times
feature, measured on the table and hand after the move (``strategies.heuristics.features``):

- ``points``: points scored now;
- ``shed``: pips of the tile placed;
- ``reply``: the next opponent's expected best score in reply (weigh it negative);
- ``follow``: the best points the own remaining hand could score on the new table;
- ``doubles``: doubles still held (weigh negative: a double fits one value only);
- ``suits``: distinct pip values still held (weigh positive: fewer forced draws);
- ``block``: summed over opponents, the probability it cannot place on the new table;
- ``partner``: the partner's expected best score on the new table (4 players, else 0).

A move that reaches the target is always taken; ties go to the heavier tile. A weight left
out keeps its default; the defaults are an all-round player, so give every weight to
define a heuristic from scratch.
"""

from numba import njit

from strategies import register
from strategies.heuristics.features import FEATURE_NAMES, choose_by_features, weights

__all__ = ["choose_weighted", "DEFAULTS"]

# Parameter order = the order of the features' Weights, checked below.
DEFAULTS = {
    "points": 1.0,
    "shed": 0.2,
    "reply": -0.6,
    "follow": 0.2,
    "doubles": -1.0,
    "suits": 0.5,
    "block": 4.0,
    "partner": 0.3,
}
assert tuple(DEFAULTS) == FEATURE_NAMES[: len(DEFAULTS)]


@register("weighted", "user-weighted sum of named move features (no code needed)", DEFAULTS)
@njit
def choose_weighted(observation, moves, n_moves, params, rng):
    return choose_by_features(observation, moves, n_moves, weights(
        points=params[0], shed=params[1], reply=params[2], follow=params[3],
        doubles=params[4], suits=params[5], block=params[6], partner=params[7],
    ))
