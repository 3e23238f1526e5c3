"""Test plugins that look for what a strategy must not see, and that break the rules.

``probe`` scans every array the engine hands it and reports, through an object-mode call,
what it found: the tiles named anywhere in the moves buffer (all ``MAX_MOVES`` slots, not
only the legal ones), its own hand and the table, the random stream it was given, and its
parameters. The test then checks that nothing names a tile outside its own hand and the
public record, and that each seat's stream is its own. ``out_of_range`` returns an index
past the legal moves.
"""

from __future__ import annotations

from numba import njit, objmode

from sim.core import observation as view
from sim.core.rng import random_below
from strategies import register

SEEN: list[tuple[int, ...]] = []


def record(*values: int) -> None:
    SEEN.append(tuple(int(v) for v in values))


@register("probe", "test probe: reports what it is shown, plays at random",
          params={"marker": 7.0})
@njit
def choose_probe(observation, moves, n_moves, params, rng):
    named = 0
    for slot in range(moves.shape[0]):
        tile = moves[slot] >> 2
        if 0 <= tile < 28:
            named |= 1 << tile
    legal = 0
    for slot in range(n_moves):
        legal |= 1 << (moves[slot] >> 2)
    seat = observation[view.SEAT]
    hand = observation[view.HAND]
    played = observation[view.PLAYED]
    stream = rng[0]
    marker = params[0]
    width = rng.shape[0]
    with objmode():
        record(seat, hand, played, named, legal, stream, width, marker)
    return random_below(rng, n_moves)


@register("out_of_range", "test plugin: chooses one past the last legal move")
@njit
def choose_out_of_range(observation, moves, n_moves, params, rng):
    return n_moves
