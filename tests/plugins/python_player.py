"""An example Python player (docs/strategies.md, "Python players"): a NumPy policy that
decides a whole batch of games at once.

It plays the legal move whose tile has the most pips, a uniformly random one among ties
(drawn from the per-decision ``seeds`` the engine hands over, so a run is reproducible).
"""

import numpy as np

from sim.core.tiles import TILE_PIPS
from strategies import register_python

# Pips of the tile of each action id (tile * 4 + arm).
ACTION_PIPS = np.repeat(TILE_PIPS, 4)


@register_python("heavy_numpy", "most pips first, ties at random (a NumPy policy)")
def policy(observations, masks, seeds):
    noise = (seeds[:, None] >> np.arange(0, 56, 2, dtype=np.uint64).repeat(4)[None, :]) & 3
    value = np.where(masks, ACTION_PIPS * 4 + noise.astype(np.int64), -1)
    return value.argmax(axis=1)


@register_python("greedy_numpy", "greedy's choice from Python: the engine's move order")
def greedy_policy(observations, masks, seeds, moves):
    """``greedy`` (most points now, then the heaviest tile; ties to the first move in the
    engine's order, as every compiled strategy sees them): the same games as greedy."""
    from sim.core import observation as view
    from sim.core.layout import move_points

    best = np.empty(len(moves), dtype=np.int64)
    for row, (observation, legal) in enumerate(zip(observations, moves)):
        legal = legal[legal >= 0]
        keys = [move_points(observation[view.LAYOUT], move) * 16 + TILE_PIPS[move >> 2]
                for move in legal]
        best[row] = legal[int(np.argmax(keys))]  # the first of the best
    return best
