"""The reading's inputs of ``learned``'s network (feature version 2): who holds what.

``READ_DEALS`` deals are drawn as ``expert`` draws them
(``strategies.inference.inferred_deals``: consistent with the public lacks and draw
history, kept in proportion to how well the model player, holding the deal's hand,
explains the opponents' choices), once per decision. From the next seat's hands in them:

    BASE_INPUTS + t (t = 0..27)  share of the deals in which the next seat holds tile t
    BASE_INPUTS + 28             mean over the deals of its best points on the new table / 10
    BASE_INPUTS + 29             share of the deals in which it cannot place on the new table
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import place_tile
from sim.core.tiles import N_TILES
from strategies.determinize import prepare
from strategies.features import best_points, playable_tiles
from strategies.inference import inferred_deals, model_of
from strategies.learned_features import BASE_INPUTS

READ_DEALS = 16
READ_TRIES = 4
READ_STRENGTH = 0.9


@njit(_nrt=True)
def read_next_hands(observation, rng, out):
    """The next seat's hand in each read deal; writes the hold shares into ``out``."""
    for t in range(N_TILES):
        out[BASE_INPUTS + t] = 0.0
    hands = np.zeros(READ_DEALS, dtype=np.int64)
    players = observation[view.PLAYERS]
    nxt = (observation[view.SEAT] + 1) % players
    if observation[view.HAND_SIZE + nxt] == 0:
        return hands
    plan, counts = prepare(observation)
    deals = inferred_deals(observation, plan, counts, READ_DEALS, READ_TRIES, READ_STRENGTH,
                           model_of(players), rng)
    share = 1.0 / READ_DEALS
    for d in range(READ_DEALS):
        hand = deals[d, engine.HANDS + nxt]
        hands[d] = hand
        for t in range(N_TILES):
            if hand >> t & 1:
                out[BASE_INPUTS + t] += share
    return hands


@njit
def encode_read_move(observation, move: int, hands, out) -> None:
    """The two per-move inputs: the next seat's best points and its chance to be stuck."""
    layout = place_tile(observation[view.LAYOUT], move >> 2, move & 3)
    points = 0.0
    stuck = 0.0
    for d in range(READ_DEALS):
        if hands[d] == 0:
            continue
        points += best_points(layout, hands[d])
        if playable_tiles(layout, hands[d]) == 0:
            stuck += 1.0
    out[BASE_INPUTS + 28] = points / READ_DEALS / 10.0
    out[BASE_INPUTS + 29] = stuck / READ_DEALS
