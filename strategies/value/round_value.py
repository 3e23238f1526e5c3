"""The value of a round's end for one side: its chance to win the game from there.

A play-out (``expert``, ``sniff hint``) ends a round on a determinized deal; what that
end is worth to the deciding side is its probability of winning the game from the new
score state with the next leader, from the logistic model fitted to simulated games
(``strategies.value.score_table``, made by ``scripts/score_table.py``), or 1 / 0 when a side
reached the target inside the round.
``Value.POINTS`` values it in points instead (own side's points minus the others', plus or
minus ``POINTS_WIN_BONUS`` for a won game), as ``rollout`` does.
"""

from __future__ import annotations

import math
from enum import IntEnum, unique

from numba import njit

from sim.core import engine
from sim.core import observation as view
from strategies.value.score_table import COEFFICIENTS, N_FEATURES

__all__ = ["outcome", "Value", "value_features", "win_chance", "win_probability"]

POINTS_WIN_BONUS = 50.0


@unique
class Value(IntEnum):
    """What a play-out's end is worth to a side: the kinds of ``expert``'s ``value``
    parameter, whose choices are these names in lower case (``expert:value=points``)."""

    WIN = 0  # the chance to win the game from the new scores and leader
    POINTS = 1  # the side's points minus the others', POINTS_WIN_BONUS more for a won game
    LEARNED = 2  # learned's network, a few placements into the play-out (expert only)


@njit(inline="always")
def _terms(need_own: float, need_other: float, target: float):
    """The model's variables: d and s of the shares still needed (clamped), and sqrt(s)."""
    x = min(max(need_own / target, 0.02), 3.0)
    y = min(max(need_other / target, 0.02), 3.0)
    d = y - x
    s = x + y
    return d, s, math.sqrt(s)


@njit
def value_features(need_own: float, need_other: float, lead: float, target: float, out) -> None:
    """The win model's inputs: what each side still needs, as a share of the target.

    ``lead`` is +1 when the own side leads the next round, -1 when another does. The terms
    are odd under swapping the sides (d and lead change sign, s does not), so with two
    sides the model gives P(own) + P(other) = 1 by construction; ``out[0]`` = 1 lets the
    3-player model (one against the best placed of two) have a base rate.
    """
    d, s, root = _terms(need_own, need_other, target)
    out[0] = 1.0
    out[1] = d
    out[2] = d / s
    out[3] = d / root
    out[4] = d * d * d / (s * s)
    out[5] = lead
    out[6] = lead / s
    out[7] = lead / root


@njit(inline="always")
def win_chance(players: int, need_own: float, need_other: float, lead: float,
               target: float) -> float:
    """The score table's logistic of :func:`value_features`, inlined: no scratch array, and
    ``lead`` may be any value in [-1, 1] (``learned``'s input for a leader not yet drawn).

    It is the same model as :func:`win_probability`'s sum at lead +1 or -1, but its terms
    are multiplied in another order, so the two may differ in the last bits: ``learned``'s
    networks were trained on this one's floats (its input ``WIN_CHANCE``, ``sniff learn``'s
    labels), ``expert``'s decisions were measured on the other's; each keeps its own.
    """
    d, s, root = _terms(need_own, need_other, target)
    row = players - 2
    c = COEFFICIENTS
    logit = (c[row, 0] + c[row, 1] * d + c[row, 2] * d / s + c[row, 3] * d / root
             + c[row, 4] * d * d * d / (s * s) + c[row, 5] * lead + c[row, 6] * lead / s
             + c[row, 7] * lead / root)
    return 1.0 / (1.0 + math.exp(-logit))


@njit
def win_probability(state, team: int, lead: float, features) -> float:
    """P(``team`` wins the game) at the start of a round with these scores and this lead.

    ``lead`` is +1 (own side leads), -1 (another side) or, for a random draw of the leader,
    the own side's expected sign, whose probability is averaged from both.
    """
    players = state[engine.PLAYERS]
    target = float(state[engine.TARGET])
    own = target - state[engine.SCORES + team]
    other = 1e9
    for rival in range(view.team_count(players)):
        if rival != team:
            other = min(other, target - state[engine.SCORES + rival])
    row = players - 2
    if lead == 1.0 or lead == -1.0:
        value_features(own, other, lead, target, features)
        logit = 0.0
        for index in range(N_FEATURES):
            logit += COEFFICIENTS[row, index] * features[index]
        return 1.0 / (1.0 + math.exp(-logit))
    share = (lead + 1.0) / 2.0  # probability that the own side leads
    return share * win_probability(state, team, 1.0, features) + (
        1.0 - share
    ) * win_probability(state, team, -1.0, features)


@njit
def outcome(state, start, team: int, value_kind: int, features) -> float:
    """The value of a finished play-out for ``team`` (``start``: the state before it), as
    ``value_kind`` (``Value.WIN`` or ``Value.POINTS``) values it."""
    players = state[engine.PLAYERS]
    winner = state[engine.WINNER_TEAM]
    if value_kind == Value.POINTS:
        teams = view.team_count(players)
        others = 0.0
        for other in range(teams):
            if other != team:
                others += state[engine.SCORES + other] - start[engine.SCORES + other]
        value = (state[engine.SCORES + team] - start[engine.SCORES + team]) - others / (
            teams - 1
        )
        if winner >= 0:
            value += POINTS_WIN_BONUS if winner == team else -POINTS_WIN_BONUS
        return value
    if winner >= 0:
        return 1.0 if winner == team else 0.0
    domino = -1
    for seat in range(players):
        if state[engine.HANDS + seat] == 0:
            domino = seat
    if domino >= 0:
        lead = 1.0 if view.team_of(domino, players) == team else -1.0
    else:
        own_seats = 2.0 if players == 4 else 1.0
        lead = 2.0 * own_seats / players - 1.0
    return win_probability(state, team, lead, features)
