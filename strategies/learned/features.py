"""The inputs of ``learned``'s value network: one candidate move's afterstate as the mover sees it.

:func:`encode` reads only the strategy's observation (``sim.core.observation``) and the move,
so nothing hidden can reach the network by construction. Every input lies roughly in
[0, 1]; there is no input scaling.

The inputs are documented once, as named blocks below (``OWN_HAND`` ... ``OWN_FITTING``:
each block's first input and what it holds; ``BLOCKS`` lists them in order, and a test holds
them to cover every input once); :func:`encode` writes every input by its block's name.

These ``N_BASE_INPUTS`` (107) inputs are feature version 1. Version 3 appends the round's
public record (``strategies.learned.record_inputs``): a network reads the first
``inputs_for(version, players)`` inputs of the buffer, so a version-1 model plays as it
always did. The version is written into every model file; a model of a version this sniff
does not know is refused.
"""

from __future__ import annotations

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
from strategies.value.round_value import win_chance

__all__ = ["BLOCKS", "encode", "FEATURE_VERSION", "FEATURE_VERSIONS", "N_BASE_INPUTS"]

FEATURE_VERSIONS = (1, 3)  # 2 was an experiment (docs/learned.md), never shipped
FEATURE_VERSION = 3  # what sniff learn trains by default

# The inputs of feature version 1, block by block: each name is its block's first input;
# the comment says how many inputs a block of more than one has, and what it holds. Seats
# are relative to the mover (1 = next to play); a seat not at the table reads 0.
OWN_HAND = 0  # 28: own hand after the move, one bit per tile
TABLE = OWN_HAND + N_TILES  # 28: tiles on the table after the move
OPEN_ENDS = TABLE + N_TILES  # 7: open ends showing pip value v after the move (arms / 2)
COUNT = OPEN_ENDS + 7  # the count after the move / 36
POINTS = COUNT + 1  # points the move scores now / 10
OWN_HAND_SIZE = POINTS + 1  # own hand size after the move / 7
HAND_SIZES = OWN_HAND_SIZE + 1  # 3: hand size of seat 1, 2, 3 / 7
BONEYARD = HAND_SIZES + 3  # boneyard size / 14
LACKS = BONEYARD + 1  # 3 x 7: values seat 1, 2, 3 is publicly known to lack
OWN_NEED = LACKS + 21  # what the own side still needs after the move / target
OTHER_NEEDS = OWN_NEED + 1  # 2: what the others need / target (4 players: 1 side; 3: seats 1, 2)
WIN_CHANCE = OTHER_NEEDS + 2  # P(own side wins) from the score after the move (win_chance)
NEXT_REPLY = WIN_CHANCE + 1  # expected best reply of the next seat / 10
OPPONENTS_STUCK = NEXT_REPLY + 1  # sum over opponents of P(it cannot place on the new table)
PARTNER_REPLY = OPPONENTS_STUCK + 1  # partner's expected best score on the new table / 10
PARTNER_STUCK = PARTNER_REPLY + 1  # how much the partner's known lacks raise P(it cannot place)
OWN_NEXT = PARTNER_STUCK + 1  # best points the own remaining hand could score next / 10
DOUBLES_HELD = OWN_NEXT + 1  # doubles still held / 7
VALUES_HELD = DOUBLES_HELD + 1  # distinct pip values still held / 7
TILE_PIPS_PLACED = VALUES_HELD + 1  # pips of the tile placed / 12
FORCED = TILE_PIPS_PLACED + 1  # 1 when the moves are a drawn tile's placements
DOMINO = FORCED + 1  # 1 when the move empties the hand (domino)
UNSEEN_FITTING = DOMINO + 1  # unseen tiles that fit the new table / 10
OWN_FITTING = UNSEEN_FITTING + 1  # own remaining tiles that fit the new table / 7
N_BASE_INPUTS = OWN_FITTING + 1

# (name, first input, inputs) of every block above, in order
BLOCKS = (
    ("OWN_HAND", OWN_HAND, N_TILES), ("TABLE", TABLE, N_TILES), ("OPEN_ENDS", OPEN_ENDS, 7),
    ("COUNT", COUNT, 1), ("POINTS", POINTS, 1), ("OWN_HAND_SIZE", OWN_HAND_SIZE, 1),
    ("HAND_SIZES", HAND_SIZES, 3), ("BONEYARD", BONEYARD, 1), ("LACKS", LACKS, 21),
    ("OWN_NEED", OWN_NEED, 1), ("OTHER_NEEDS", OTHER_NEEDS, 2),
    ("WIN_CHANCE", WIN_CHANCE, 1), ("NEXT_REPLY", NEXT_REPLY, 1),
    ("OPPONENTS_STUCK", OPPONENTS_STUCK, 1), ("PARTNER_REPLY", PARTNER_REPLY, 1),
    ("PARTNER_STUCK", PARTNER_STUCK, 1), ("OWN_NEXT", OWN_NEXT, 1),
    ("DOUBLES_HELD", DOUBLES_HELD, 1), ("VALUES_HELD", VALUES_HELD, 1),
    ("TILE_PIPS_PLACED", TILE_PIPS_PLACED, 1), ("FORCED", FORCED, 1), ("DOMINO", DOMINO, 1),
    ("UNSEEN_FITTING", UNSEEN_FITTING, 1), ("OWN_FITTING", OWN_FITTING, 1),
)


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
            out[OWN_HAND + t] = 1.0
        if played >> t & 1:
            out[TABLE + t] = 1.0
    for arm in range(N_ARMS):
        field = arm_field(layout, arm)
        if field & ARM_OPEN:
            out[OPEN_ENDS + (field & ARM_VALUE)] += 0.5
    count = count_ends(layout)
    points = points_for_count(count)
    out[COUNT] = count / 36.0
    out[POINTS] = points / 10.0
    out[OWN_HAND_SIZE] = popcount(hand) / 7.0
    for r in range(1, players):
        other = (seat + r) % players
        out[HAND_SIZES + r - 1] = observation[view.HAND_SIZE + other] / 7.0
        lacks = observation[view.LACKS + other]
        for v in range(7):
            if lacks >> v & 1:
                out[LACKS + 7 * (r - 1) + v] = 1.0
    out[BONEYARD] = observation[view.BONEYARD_SIZE] / 14.0
    target = float(observation[view.TARGET])
    team = view.team_of(seat, players)
    need_own = target - (observation[view.SCORE + team] + points)
    out[OWN_NEED] = need_own / target
    need_other = 1e9
    slot = 0
    for r in range(1, players):
        other_team = view.team_of((seat + r) % players, players)
        if other_team != team and (players != 4 or r == 1):
            need = target - observation[view.SCORE + other_team]
            out[OTHER_NEEDS + slot] = need / target
            slot += 1
            need_other = min(need_other, need)
    own_seats = 2.0 if players == 4 else 1.0
    out[WIN_CHANCE] = win_chance(players, need_own, need_other, 2.0 * own_seats / players - 1.0,
                            target)
    opponent = (seat + 1) % players
    out[NEXT_REPLY] = expected_best_reply(
        layout, possible_tiles(observation, opponent), observation[view.HAND_SIZE + opponent]
    ) / 10.0
    block = 0.0
    for other in range(players):
        if view.team_of(other, players) != team:
            block += stuck_probability(layout, possible_tiles(observation, other),
                                       observation[view.HAND_SIZE + other])
    out[OPPONENTS_STUCK] = block
    mate = partner_of(seat, players)
    if mate >= 0:
        candidates = possible_tiles(observation, mate)
        size = observation[view.HAND_SIZE + mate]
        out[PARTNER_REPLY] = expected_best_reply(layout, candidates, size) / 10.0
        out[PARTNER_STUCK] = (stuck_probability(layout, candidates, size)
                   - stuck_probability(layout, unseen_tiles(observation), size))
    out[OWN_NEXT] = best_points(layout, hand) / 10.0
    out[DOUBLES_HELD] = popcount(hand & DOUBLES_MASK) / 7.0
    out[VALUES_HELD] = held_values(hand) / 7.0
    out[TILE_PIPS_PLACED] = TILE_PIPS[tile] / 12.0
    out[FORCED] = float(observation[view.FORCED])
    out[DOMINO] = 1.0 if hand == 0 else 0.0
    out[UNSEEN_FITTING] = popcount(playable_tiles(layout, unseen_tiles(observation))) / 10.0
    out[OWN_FITTING] = popcount(playable_tiles(layout, hand)) / 7.0
