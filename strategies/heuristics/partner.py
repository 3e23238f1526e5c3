"""``partner``: greedy with partnership sense (4 players).

Points now, minus the next opponent's expected best reply (keep the opponents off fives),
plus the chance that each opponent cannot place (block them, not the partner), plus the
partner's expected best score on the table we leave (leave counts the partner can make),
minus how much the partner's known lacks raise its chance of being unable to place (do not
play toward the values the partner drew or passed on). With 2 or 3 players there is no
partner and the partner terms are zero.

Parameters: ``reply`` (default 0.7): weight of the next opponent's expected reply;
``block`` (default 6): points a sure block of one opponent is worth; ``partner`` (default
0.2): weight of the partner's expected score; ``stuck`` (default 5): points lost when the
table surely blocks the partner because of its known lacks; ``shed`` (default 0.1): weight
of the pips shed.
"""

from numba import njit

from strategies import register
from strategies.heuristics.features import choose_by_features, weights

__all__ = ["choose_partner", "partner_choice"]


@njit
def partner_choice(observation, moves, n_moves, params, levels=None):
    """``partner``'s pick; ``levels`` as in ``strategies.heuristics.features.move_value``."""
    return choose_by_features(observation, moves, n_moves, weights(
        points=1.0, reply=-params[0], block=params[1], partner=params[2],
        partner_stuck=-params[3], shed=params[4],
    ), levels)


@register(
    "partner",
    "greedy with partnership sense: keep opponents off fives, feed and spare the partner",
    params={"reply": 0.7, "block": 6.0, "partner": 0.2, "stuck": 5.0, "shed": 0.1},
)
@njit
def choose_partner(observation, moves, n_moves, params, rng):
    return partner_choice(observation, moves, n_moves, params)
