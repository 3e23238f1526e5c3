"""What a strategy is shown: one player's public view of the game, as an int64 array.

The engine copies this view out of the full game state before every decision, so a strategy
cannot read another player's hand or the boneyard order: they are simply not in the array.

Slots of an observation (``OBSERVATION_SIZE`` int64)::

    SEAT            the deciding seat (0-based)
    PLAYERS         2, 3 or 4
    HAND            own hand, 28-bit tile mask (sim.core.tiles)
    LAYOUT          the table, bit fields of sim.core.layout
    BONEYARD_SIZE   tiles left to draw
    PLAYED          mask of the tiles on the table this round
    TARGET          points that win the game
    ROUND           round number, from 1
    FORCED          1 when the moves are the placements of a tile just drawn (no choice of tile)
    LEADER          seat that led this round
    SCORE + t       score of team t (the team of a seat: sim.core.seating)
    HAND_SIZE + s   number of tiles in seat s's hand
    LACKS + s       7-bit mask of pip values seat s is publicly known to lack: the values that
                    were open when it last drew (drawn tiles that could not be played show no
                    open value), plus those open whenever it passed since. Reset each round
                    and whenever the seat draws again (a drawn tile may bring any other value).
    RECORD ...      the round's public record so far: every placement, draw and pass in
                    order (``RECORD_SIZE`` slots, packed as ``sim.core.record`` documents)

Public inferences a strategy may derive itself: unseen tiles are
``ALL_TILES & ~(HAND | PLAYED)``; the partner of seat s with 4 players is ``(s + 2) % 4``.
"""

from __future__ import annotations

from numba import njit

from sim.core import seating
from sim.core.record import RECORD_SIZE

__all__ = [
    "BONEYARD_SIZE", "FORCED", "HAND", "HAND_SIZE", "LACKS", "LAYOUT", "LEADER",
    "OBSERVATION_SIZE", "PLAYED", "PLAYERS", "RECORD", "ROUND", "SCORE", "SEAT", "TARGET",
    "team_count", "team_of"
]

SEAT = 0
PLAYERS = 1
HAND = 2
LAYOUT = 3
BONEYARD_SIZE = 4
PLAYED = 5
TARGET = 6
ROUND = 7
FORCED = 8
LEADER = 9
SCORE = 12
HAND_SIZE = 16
LACKS = 20
RECORD = 24
OBSERVATION_SIZE = RECORD + RECORD_SIZE


# The seating rules live in sim.core.seating; these are their compiled forms for the engine and
# the strategies (``view.team_of(seat, players)`` inside a ``choose``).
team_of = njit(inline="always")(seating.team_of)
team_count = njit(inline="always")(seating.team_count)
