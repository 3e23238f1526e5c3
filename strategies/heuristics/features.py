"""Public inferences and move features shared by the heuristic strategies.

Everything here reads only the observation (``sim.core.observation``): the own hand, the table,
the hand sizes and what each seat is publicly known to lack. The inferences good players
use are computed once, here:

- unseen tiles: ``ALL_TILES & ~(HAND | PLAYED)`` (other hands and the boneyard);
- the tiles a seat can hold: the unseen tiles that show none of the values it is known to
  lack (it drew or passed while they were open);
- the partner's seat with 4 players, ``(seat + 2) % 4``;
- how well an opponent can answer a layout: its hand is modelled as a uniform random subset
  (of its hand size) of the tiles it can hold, which gives closed-form expectations (the
  hypergeometric law) with no sampling.

The heuristics (``heavy``, ``defensive``, ``blocker``, ``partner``, ``weighted``) are all
weightings of the features below, scored by :func:`choose_by_features`, so each idea is
written once. Features are measured on the table and hand *after* the move:

    points          points the move scores now
    shed            pips of the tile placed (what it saves at settlement)
    reply           expected best score of the next seat's reply (always an opponent)
    follow          best points the own remaining hand could score on the new table
    doubles         doubles still held (hard to place: one value only)
    suits           distinct pip values still held (more values, fewer forced draws)
    block           sum over opponents of the probability it cannot place on the new
                    table (so must draw or pass): high when the open ends show values
                    the opponents are known to lack
    partner         expected best score of the partner on the new table (4 players)
    partner_stuck   how much the partner's known lacks raise the probability that it
                    cannot place on the new table (4 players)

A move that reaches the target wins at once, so :func:`choose_by_features` always takes it.

Nothing here allocates: strategies run inside the engine's turn loop, which numba compiles
without reference counting (``_nrt=False``, inherited by callees that do not ask for it).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from sim.core import observation as view
from sim.core.layout import (
    ARM_OPEN,
    ARM_VALUE,
    EMPTY_LAYOUT,
    N_ARMS,
    arm_field,
    bit_index,
    count_ends,
    move_points,
    place_tile,
    points_for_count,
    popcount,
)
from sim.core.tiles import ALL_TILES, DOUBLES_MASK, N_PIPS, PIP_MASK, TILE_PIPS

__all__ = [
    "best_points", "expected_best_reply", "fill_levels", "held_values", "partner_of",
    "playable_tiles", "possible_tiles", "stuck_probability", "tile_best_points",
    "tiles_with_values", "unseen_tiles"
]

FEATURE_NAMES = (
    "points", "shed", "reply", "follow", "doubles", "suits", "block", "partner", "partner_stuck",
)


class Weights(NamedTuple):
    """The weight of each feature in a move's value, in ``FEATURE_NAMES`` order (build one
    with :func:`weights`: numba ignores a ``NamedTuple``'s defaults)."""

    points: float
    shed: float
    reply: float
    follow: float
    doubles: float
    suits: float
    block: float
    partner: float
    partner_stuck: float


@njit(inline="always")
def weights(
    points=0.0, shed=0.0, reply=0.0, follow=0.0, doubles=0.0, suits=0.0, block=0.0,
    partner=0.0, partner_stuck=0.0,
) -> Weights:
    """:class:`Weights` by keyword, every feature not named weighing 0."""
    return Weights(
        np.float64(points), np.float64(shed), np.float64(reply), np.float64(follow),
        np.float64(doubles), np.float64(suits), np.float64(block), np.float64(partner),
        np.float64(partner_stuck),
    )

WIN_NOW = 1e9
# A count never exceeds 36 (four outer doubles 6-6, 5-5, 4-4, 3-3), so points // 5 <= 7;
# expected_best_reply keeps a 6-bit tally per level in one int64 and allows up to 9.
MAX_LEVEL = 9


@njit(inline="always")
def unseen_tiles(observation) -> int:
    """Tiles in other hands or the boneyard, as the deciding player sees it."""
    return ALL_TILES & ~(observation[view.HAND] | observation[view.PLAYED])


@njit
def tiles_with_values(values: int) -> int:
    """Mask of the tiles that show any pip value in the 7-bit mask ``values``."""
    mask = 0
    for value in range(N_PIPS):
        if values >> value & 1:
            mask |= PIP_MASK[value]
    return mask


@njit
def possible_tiles(observation, seat: int) -> int:
    """Unseen tiles that ``seat`` can hold: none shows a value it is known to lack."""
    return unseen_tiles(observation) & ~tiles_with_values(observation[view.LACKS + seat])


@njit(inline="always")
def partner_of(seat: int, players: int) -> int:
    """The partner's seat with 4 players; -1 with 2 or 3 (everyone plays alone)."""
    return (seat + 2) % 4 if players == 4 else -1


@njit
def playable_tiles(layout: int, tiles: int) -> int:
    """The tiles of ``tiles`` that fit some open end of ``layout``."""
    if layout == EMPTY_LAYOUT:
        return tiles
    mask = 0
    for arm in range(N_ARMS):
        field = arm_field(layout, arm)
        if field & ARM_OPEN:
            mask |= tiles & PIP_MASK[field & ARM_VALUE]
    return mask


@njit
def tile_best_points(layout: int, tile: int) -> int:
    """Most points ``tile`` can score on any open end of ``layout`` it fits (0 if none)."""
    best = 0
    for arm in range(N_ARMS):
        field = arm_field(layout, arm)
        if field & ARM_OPEN and (PIP_MASK[field & ARM_VALUE] >> tile) & 1:
            points = points_for_count(count_ends(place_tile(layout, tile, arm)))
            if points > best:
                best = points
    return best


@njit
def best_points(layout: int, hand: int) -> int:
    """Most points any tile of ``hand`` can score on ``layout`` now."""
    best = 0
    rest = playable_tiles(layout, hand)
    while rest:
        low_bit = rest & -rest
        best = max(best, tile_best_points(layout, bit_index(low_bit)))
        rest ^= low_bit
    return best


@njit
def none_held(pool: int, marked: int, hand_size: int) -> float:
    """P(a uniform ``hand_size``-subset of ``pool`` tiles holds none of ``marked``)."""
    if hand_size <= 0 or marked <= 0:
        return 1.0
    if pool - marked < hand_size:
        return 0.0
    probability = 1.0
    for i in range(hand_size):
        probability *= (pool - marked - i) / (pool - i)
    return probability


@njit(inline="always")
def tile_level(layout: int, tile: int) -> int:
    """Best points of ``tile`` on ``layout``, in fives (at most ``MAX_LEVEL``)."""
    return min(tile_best_points(layout, tile) // 5, MAX_LEVEL)


@njit
def fill_levels(layout: int, tiles: int, row) -> None:
    """``row[t] = tile_level(layout, t)`` for the tiles of ``tiles`` that fit ``layout``.

    A table to hand :func:`expected_best_reply`: the reading of choices asks about many
    candidate sets on the same few tables, and working the levels out is a large part of
    each answer.
    """
    rest = playable_tiles(layout, tiles)
    while rest:
        low_bit = rest & -rest
        tile = bit_index(low_bit)
        row[tile] = tile_level(layout, tile)
        rest ^= low_bit


@njit
def expected_best_reply(layout: int, candidates: int, hand_size: int, levels=None) -> float:
    """Expected best points of a seat whose hand is ``hand_size`` tiles of ``candidates``.

    ``E[max] = 5 * sum_j P(max >= 5j)`` and ``P(max >= 5j) = 1 - P(no tile scoring >= 5j)``,
    the latter hypergeometric. Exact for a hand drawn uniformly from ``candidates``.
    ``levels``, when given, is :func:`fill_levels`'s table of ``layout`` (same result).
    """
    pool = popcount(candidates)
    hand_size = min(hand_size, pool)
    if hand_size <= 0:
        return 0.0
    tally = 0  # 6 bits per level: tiles whose best placement scores 5 * level
    top = 0
    rest = playable_tiles(layout, candidates)
    while rest:
        low_bit = rest & -rest
        tile = bit_index(low_bit)
        if levels is None:
            level = tile_level(layout, tile)
        else:
            level = np.int64(levels[tile])  # type: ignore[assignment]  # numba: int64 scalars
        if level > 0:
            tally += 1 << (6 * level)
            top = max(top, level)
        rest ^= low_bit
    expected = 0.0
    at_least = 0
    for level in range(top, 0, -1):
        at_least += (tally >> (6 * level)) & 63
        expected += 5.0 * (1.0 - none_held(pool, at_least, hand_size))
    return expected


@njit
def stuck_probability(layout: int, candidates: int, hand_size: int) -> float:
    """P(a hand of ``hand_size`` tiles of ``candidates`` has nothing to place on ``layout``)."""
    pool = popcount(candidates)
    return none_held(pool, popcount(playable_tiles(layout, candidates)), min(hand_size, pool))


@njit
def held_values(hand: int) -> int:
    """Number of distinct pip values among the tiles of ``hand``."""
    count = 0
    for value in range(N_PIPS):
        if hand & PIP_MASK[value]:
            count += 1
    return count


@njit
def move_value(observation, move, weight, levels=None) -> float:
    """Sum of the features of ``move``, each times its :class:`Weights` entry in ``weight``
    (``levels``, optional, holds :func:`fill_levels`'s table of the layout after each
    move, indexed by move).

    A feature whose weight is 0 is not computed, so a strategy pays only for what it uses.
    """
    points, shed, reply, follow = weight.points, weight.shed, weight.reply, weight.follow
    doubles, suits, block = weight.doubles, weight.suits, weight.block
    partner, partner_stuck = weight.partner, weight.partner_stuck
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    tile = move >> 2
    layout = place_tile(observation[view.LAYOUT], tile, move & 3)
    hand = observation[view.HAND] & ~(1 << tile)
    if levels is None:
        table = None
    else:
        table = levels[move]
    value = points * points_for_count(count_ends(layout)) + shed * TILE_PIPS[tile]
    if reply != 0.0:
        opponent = (seat + 1) % players  # the next seat always plays against us
        value += reply * expected_best_reply(
            layout, possible_tiles(observation, opponent),
            observation[view.HAND_SIZE + opponent], table,
        )
    if follow != 0.0:
        value += follow * best_points(layout, hand)
    if doubles != 0.0:
        value += doubles * popcount(hand & DOUBLES_MASK)
    if suits != 0.0:
        value += suits * held_values(hand)
    if block != 0.0:
        for other in range(players):
            if view.team_of(other, players) != view.team_of(seat, players):
                value += block * stuck_probability(
                    layout, possible_tiles(observation, other),
                    observation[view.HAND_SIZE + other],
                )
    mate = partner_of(seat, players)
    if mate >= 0 and (partner != 0.0 or partner_stuck != 0.0):
        candidates = possible_tiles(observation, mate)
        size = observation[view.HAND_SIZE + mate]
        if partner != 0.0:
            value += partner * expected_best_reply(layout, candidates, size, table)
        if partner_stuck != 0.0:
            # Only what the partner's known lacks add: a table few unseen tiles fit blocks
            # every seat alike, which is the opponents' problem as much as the partner's.
            value += partner_stuck * (
                stuck_probability(layout, candidates, size)
                - stuck_probability(layout, unseen_tiles(observation), size)
            )
    return value


@njit
def choose_by_features(observation, moves, n_moves, weight, levels=None) -> int:
    """Index of the move with the highest weighted feature sum (``weight``: the
    :class:`Weights` of :func:`weights`; ``levels`` as in :func:`move_value`).

    A move that reaches the target wins on the spot and beats everything; ties go to the
    heavier tile (less to pay at settlement), then to the first move.
    """
    team = view.team_of(observation[view.SEAT], observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    best = 0
    best_value = -np.inf
    best_pips = -1
    for index in range(n_moves):
        move = moves[index]
        value = move_value(observation, move, weight, levels)
        if move_points(observation[view.LAYOUT], move) >= needed:
            value += WIN_NOW
        pips = TILE_PIPS[move >> 2]
        if value > best_value or (value == best_value and pips > best_pips):
            best = index
            best_value = value
            best_pips = pips
    return best
