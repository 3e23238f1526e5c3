"""The inputs of ``learned``'s value network: one candidate move's afterstate as the mover sees it.

:func:`encode` reads only the strategy's observation (``sim.core.observation``) and the move,
so nothing hidden can reach the network by construction. Every input lies roughly in
[0, 1]; there is no input scaling. Seats are relative to the mover (1 = next to play).

    0..27    own hand after the move (one bit per tile)
    28..55   tiles on the table after the move
    56..62   open ends showing pip value v after the move (number of arms, / 2)
    63       the count after the move / 36
    64       points the move scores now / 10
    65       own hand size after the move / 7
    66..68   hand size of relative seat 1, 2, 3 / 7 (0 for a seat not at the table)
    69       boneyard size / 14
    70..90   values relative seat 1, 2, 3 is publicly known to lack (7 bits each)
    91       what the own side still needs after the move / target
    92, 93   what the other sides still need / target (4 players: one side; 3: seats 1, 2)
    94       P(own side wins) from the score after the move (``strategies.value.score_table``)
    95       expected best reply of the next seat / 10   (``strategies.heuristics.features``)
    96       sum over opponents of P(it cannot place on the new table)
    97       partner's expected best score on the new table / 10 (4 players)
    98       how much the partner's known lacks raise its P(cannot place) (4 players)
    99       best points the own remaining hand could score next / 10
    100      doubles still held / 7
    101      distinct pip values still held / 7
    102      pips of the tile placed / 12
    103      1 when the moves are a drawn tile's placements
    104      1 when the move empties the hand (domino)
    105      unseen tiles that fit the new table / 10
    106      own remaining tiles that fit the new table / 7

These 107 inputs are feature version 1. Version 3 appends the round's public record
(``strategies.learned.record_inputs``): a network reads the first ``inputs_for(version,
players)`` inputs of the buffer, so a version-1 model plays as it always did. The version
is written into every model file; a model of a version this sniff does not know is
refused.
"""

from __future__ import annotations

import math

from numba import njit

from sim.core import observation as view
from sim.core.layout import (
    ARM_OPEN,
    ARM_VALUE,
    N_ARMS,
    arm_field,
    count_ends,
    place_tile,
    points_for_count,
    popcount,
)
from sim.core.tiles import DOUBLES_MASK, N_TILES, TILE_PIPS
from strategies.heuristics.features import (
    best_points,
    expected_best_reply,
    held_values,
    partner_of,
    playable_tiles,
    possible_tiles,
    stuck_probability,
    unseen_tiles,
)
from strategies.value.score_table import COEFFICIENTS

FEATURE_VERSIONS = (1, 3)  # 2 was a measured experiment (docs/learned.md), never shipped
FEATURE_VERSION = 3  # what sniff learn trains by default
N_BASE_INPUTS = 107


@njit(inline="always")
def _logistic_win(players: int, need_own: float, need_other: float, lead: float,
                  target: float) -> float:
    """``strategies.value.round_value.value_features`` and the score table's logistic, inlined (no
    scratch array)."""
    x = min(max(need_own / target, 0.02), 3.0)
    y = min(max(need_other / target, 0.02), 3.0)
    d = y - x
    s = x + y
    root = math.sqrt(s)
    row = players - 2
    c = COEFFICIENTS
    logit = (c[row, 0] + c[row, 1] * d + c[row, 2] * d / s + c[row, 3] * d / root
             + c[row, 4] * d * d * d / (s * s) + c[row, 5] * lead + c[row, 6] * lead / s
             + c[row, 7] * lead / root)
    return 1.0 / (1.0 + math.exp(-logit))


@njit
def encode(observation, move: int, out) -> None:
    """Write the ``N_BASE_INPUTS`` inputs of ``move``'s afterstate into ``out`` (float64; the
    record block after them is :func:`strategies.learned.record_inputs.encode_record`'s)."""
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    tile = move >> 2
    layout = place_tile(observation[view.LAYOUT], tile, move & 3)
    hand = observation[view.HAND] & ~(1 << tile)
    played = observation[view.PLAYED] | (1 << tile)
    for index in range(N_BASE_INPUTS):
        out[index] = 0.0
    for t in range(N_TILES):
        if hand >> t & 1:
            out[t] = 1.0
        if played >> t & 1:
            out[28 + t] = 1.0
    for arm in range(N_ARMS):
        field = arm_field(layout, arm)
        if field & ARM_OPEN:
            out[56 + (field & ARM_VALUE)] += 0.5
    count = count_ends(layout)
    points = points_for_count(count)
    out[63] = count / 36.0
    out[64] = points / 10.0
    out[65] = popcount(hand) / 7.0
    for r in range(1, players):
        other = (seat + r) % players
        out[65 + r] = observation[view.HAND_SIZE + other] / 7.0
        lacks = observation[view.LACKS + other]
        for v in range(7):
            if lacks >> v & 1:
                out[70 + 7 * (r - 1) + v] = 1.0
    out[69] = observation[view.BONEYARD_SIZE] / 14.0
    target = float(observation[view.TARGET])
    team = view.team_of(seat, players)
    need_own = target - (observation[view.SCORE + team] + points)
    out[91] = need_own / target
    need_other = 1e9
    slot = 0
    for r in range(1, players):
        other_team = view.team_of((seat + r) % players, players)
        if other_team != team and (players != 4 or r == 1):
            need = target - observation[view.SCORE + other_team]
            out[92 + slot] = need / target
            slot += 1
            need_other = min(need_other, need)
    own_seats = 2.0 if players == 4 else 1.0
    out[94] = _logistic_win(players, need_own, need_other, 2.0 * own_seats / players - 1.0,
                            target)
    opponent = (seat + 1) % players
    out[95] = expected_best_reply(
        layout, possible_tiles(observation, opponent), observation[view.HAND_SIZE + opponent]
    ) / 10.0
    block = 0.0
    for other in range(players):
        if view.team_of(other, players) != team:
            block += stuck_probability(layout, possible_tiles(observation, other),
                                       observation[view.HAND_SIZE + other])
    out[96] = block
    mate = partner_of(seat, players)
    if mate >= 0:
        candidates = possible_tiles(observation, mate)
        size = observation[view.HAND_SIZE + mate]
        out[97] = expected_best_reply(layout, candidates, size) / 10.0
        out[98] = (stuck_probability(layout, candidates, size)
                   - stuck_probability(layout, unseen_tiles(observation), size))
    out[99] = best_points(layout, hand) / 10.0
    out[100] = popcount(hand & DOUBLES_MASK) / 7.0
    out[101] = held_values(hand) / 7.0
    out[102] = TILE_PIPS[tile] / 12.0
    out[103] = float(observation[view.FORCED])
    out[104] = 1.0 if hand == 0 else 0.0
    out[105] = popcount(playable_tiles(layout, unseen_tiles(observation))) / 10.0
    out[106] = popcount(playable_tiles(layout, hand)) / 7.0
