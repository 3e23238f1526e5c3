"""What a seat's earlier draws and passes say about the tiles it still holds.

The view's ``LACKS`` keeps only the values open at a seat's last draw (and its passes
since): a tile drawn then may show any earlier value. But the tiles it held *before* that
draw still lack the values open at every earlier draw and pass, and the public record
says how many tiles each draw added to the hand unseen (every tile drawn but the one
placed at once). So a hand in which more tiles show an earlier value than the later draws
could have brought is impossible: the seat would have placed one of them instead of
drawing or passing.

Periods: 0 is the dealt hand, ``q >= 1`` the seat's q-th run of draws this round. A tile
that came in period ``r`` was in the hand at every later draw and pass, so it lacks
``forbidden[r]``: the values open at draw runs ``q >= r`` and at passes made since period
``r``. The earliest period a tile can have come in is the first ``r`` whose values it does
not show. Hall's condition for such nested choices: for every ``r >= 1``, at most
``kept[r] + kept[r + 1] + ...`` tiles of the hand can only have come in period ``r`` or
later. The check uses only the hand now, so it is necessary, not sufficient (the tiles the
seat has placed since came from the same periods); it never rejects the true deal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, record
from sim.core import observation as view
from sim.core.layout import EMPTY_LAYOUT, open_values_mask, place_tile
from sim.core.tiles import N_TILES
from strategies.heuristics.features import tiles_with_values

__all__: list[str] = []  # nothing here is used outside its room

MAX_PERIODS = N_TILES // 2 + 1  # at most 14 draws in a round, so at most 14 runs


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def draw_periods(observation):
    """Per seat, the tiles each period excludes and the hidden tiles each run kept.

    Returns ``(runs, forbidden, kept)``: ``runs[s]`` the seat's draw runs this round;
    ``forbidden[s, r]`` the mask of tiles a tile that came in period ``r`` cannot be
    (``r <= runs[s]``); ``kept[s, r]`` the tiles run ``r`` added unseen.
    """
    runs = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
    values = np.zeros((engine.MAX_PLAYERS, MAX_PERIODS), dtype=np.int64)
    kept = np.zeros((engine.MAX_PLAYERS, MAX_PERIODS), dtype=np.int64)
    layout = EMPTY_LAYOUT
    for index in range(observation[view.RECORD]):
        kind, seat, move = record.event(observation, view.RECORD, index)
        if kind == record.DRAW:
            if record.starts_draw_run(observation, view.RECORD, index):
                runs[seat] += 1
            run = runs[seat]
            # Every tile held at a draw lacks the open values, whichever period it came in.
            for period in range(run + 1):
                values[seat, period] |= open_values_mask(layout)
            if record.draw_kept(observation, view.RECORD, index):
                kept[seat, run] += 1
        elif kind == record.PASS:
            for period in range(runs[seat] + 1):
                values[seat, period] |= open_values_mask(layout)
        else:
            layout = place_tile(layout, move >> 2, move & 3)
    forbidden = np.zeros((engine.MAX_PLAYERS, MAX_PERIODS), dtype=np.int64)
    for seat in range(engine.MAX_PLAYERS):
        for period in range(runs[seat] + 1):
            forbidden[seat, period] = tiles_with_values(values[seat, period])
    return runs, forbidden, kept


@njit
def hand_fits_draws(hand: int, runs: int, forbidden, kept) -> bool:
    """Could ``hand`` be held now by a seat with these draw periods (one seat's rows)?"""
    if runs == 0:
        return True
    late = np.zeros(MAX_PERIODS, dtype=np.int64)  # tiles that came in period r at the earliest
    rest = hand
    while rest:
        bit = rest & -rest
        rest ^= bit
        earliest = 0
        while earliest <= runs and forbidden[earliest] & bit:
            earliest += 1
        if earliest > runs:
            return False
        late[earliest] += 1
    need = 0
    room = 0
    for period in range(runs, 0, -1):
        need += late[period]
        room += kept[period]
        if need > room:
            return False
    return True
