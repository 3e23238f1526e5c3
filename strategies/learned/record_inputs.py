"""The round's public record as inputs of ``learned``'s network (feature version 3).

What ``expert`` has and the version-1 inputs lack is the reading of the others' choices
(docs/learned.md): a player who could have scored more with a tile and did not probably
did not hold it. Drawing deals to read it costs several times the decision (docs/learned.md);
this block reads the record (``sim.core.record``) once per decision instead, in one pass
over its events, and hands the network the facts a reader starts from. Per other seat,
relative to the mover (r = 1 the next to play), at ``RECORD_START + RECORD_STRIDE * (r - 1)``:

    0..27    1 for each tile seat r placed this round by choice (not a drawn tile's
             forced placement): who played what, which version 1 does not see
    28..55   for each tile unseen by the mover now: how many of seat r's choices since it
             last kept a drawn tile would have scored more with that tile than the move it
             chose (0, 0.5 for one, 1 for two or more): the lacks its choices imply

A seat's implied lacks start again when it keeps a drawn tile, as its public lacks do: the
tile it kept may be the one it passed up. The block does not depend on the candidate move
(the mover's tile was never unseen), so the player computes it and its share of the first
layer once per decision (``strategies.learned.net.first_layer_partial``).

Nothing here reads a hidden tile: the events are the record's, the candidates the mover's
unseen tiles.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import observation as view
from sim.core import record
from sim.core.layout import (
    EMPTY_LAYOUT,
    bit_index,
    count_ends,
    place_tile,
    points_for_count,
)
from sim.core.tiles import N_TILES
from strategies.heuristics.features import playable_tiles, tile_best_points, unseen_tiles
from strategies.learned.features import N_BASE_INPUTS

__all__ = ["encode_record", "inputs_for", "MAX_INPUTS"]

RECORD_START = N_BASE_INPUTS
RECORD_STRIDE = 56
MAX_OTHER_SEATS = 3
MAX_INPUTS = RECORD_START + RECORD_STRIDE * MAX_OTHER_SEATS


def inputs_for(feature_version: int, players: int) -> int:
    """How many inputs a network of ``feature_version`` for ``players`` reads."""
    if feature_version == 1:
        return N_BASE_INPUTS
    return RECORD_START + RECORD_STRIDE * (players - 1)


@njit
def encode_record(observation, out) -> None:
    """Write the record block for the observation's player count into ``out``."""
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    end = RECORD_START + RECORD_STRIDE * (players - 1)
    for index in range(RECORD_START, end):
        out[index] = 0.0
    unseen = unseen_tiles(observation)
    passed_up = np.zeros((MAX_OTHER_SEATS + 1, N_TILES), dtype=np.int64)
    layout = EMPTY_LAYOUT
    n_events = observation[view.RECORD]
    for index in range(n_events):
        kind, who, move = record.event(observation, view.RECORD, index)
        r = (who - seat) % players
        if kind == record.DRAW:
            if r > 0 and record.draw_kept(observation, view.RECORD, index):
                passed_up[r, :] = 0
            continue
        if kind == record.PASS:
            continue
        tile = move >> 2
        after = place_tile(layout, tile, move & 3)
        if kind == record.PLACE_CHOSEN and r > 0:
            out[RECORD_START + RECORD_STRIDE * (r - 1) + tile] = 1.0
            chosen = points_for_count(count_ends(after))
            rest = playable_tiles(layout, unseen)
            while rest:
                t = bit_index(rest)
                rest &= rest - 1
                if _points_of(layout, t) > chosen:
                    passed_up[r, t] += 1
        layout = after
    for r in range(1, players):
        at = RECORD_START + RECORD_STRIDE * (r - 1) + N_TILES
        for t in range(N_TILES):
            if unseen >> t & 1 and passed_up[r, t] > 0:
                out[at + t] = 0.5 if passed_up[r, t] == 1 else 1.0


@njit(inline="always")
def _points_of(layout: int, tile: int) -> int:
    """Most points ``tile`` scores placed on ``layout`` (0 if it does not fit; as a lead,
    the count of the tile alone)."""
    if layout == EMPTY_LAYOUT:
        return points_for_count(count_ends(place_tile(layout, tile, 0)))
    return tile_best_points(layout, tile)
