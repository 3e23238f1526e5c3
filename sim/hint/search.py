"""The compiled part of ``sniff hint``: every legal move played out on the same sampled deals.

Plain ``@njit`` functions, compiled only through the cached module that ``sim.hint.kernel``
generates (whose file name carries a hash of this file, the engine's and the strategies'),
for the reason ``sim.kernels.generate`` gives: numba's cache of a function does not notice edits to
the functions it calls in other files.

The search itself (``strategies.search.paired``: every move on the same deals, paired
differences) is compiled once, alone, and :func:`search_moves` calls it through its address
(``sim.core.calls.PAIRED_SLOT``, filled by ``sim.kernels.generate.load_paired``): the hint's
and the analysis's modules then compile no play-out loop of their own.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core.calls import PAIRED_SLOT, RAISED, SEARCH_PAIRED, call_search, slot
from sim.core.layout import count_ends, legal_moves, open_values_mask, place_tile, tile_moves
from sim.core.rng import stream_key
from strategies.heuristics.blocker import choose_blocker
from strategies.heuristics.defensive import choose_defensive
from strategies.heuristics.greedy import choose_greedy
from strategies.heuristics.heavy import choose_heavy
from strategies.heuristics.partner import choose_partner
from strategies.heuristics.weighted import choose_weighted
from strategies.learned.player import choose_learned
from strategies.search.paired import (
    N_VALUES,
    SALT_HINT,
    VALUE_WIN,
)

__all__ = ["N_VALUES", "search_moves", "VALUE_WIN"]

# The one-ply heuristics whose choice a hint shows, in this order: a heuristic's place is
# its row of ``heuristic_choices``' parameters and choices and the number of its stream.
HEURISTICS = ("greedy", "heavy", "defensive", "blocker", "partner", "weighted", "learned")
GREEDY, HEAVY, DEFENSIVE, BLOCKER, PARTNER, WEIGHTED, LEARNED = range(len(HEURISTICS))


@njit
def search_moves(observation, moves, n_moves, budget, policy, seed, values) -> float:
    """``strategies.search.paired.search_moves`` through its compiled-alone wrapper:
    every move played out on the same ``budget`` deals into ``values[move, deal, kind]``;
    returns the number of consistent deals of the hidden hands (0: none, nothing played)."""
    address: int = slot(PAIRED_SLOT)  # type: ignore[call-arg]  # numba intrinsic: typingctx is implied
    if address == 0:
        raise RuntimeError("the paired search is not loaded (sim.kernels.generate.load_paired)")
    params = np.empty(2, dtype=np.float64)
    params[0] = budget
    params[1] = policy
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = seed
    size = n_moves * budget * N_VALUES
    flat = np.zeros(size + 1, dtype=np.float64)
    if call_search(address, SEARCH_PAIRED, observation, moves, n_moves, params, rng,
                   flat) == RAISED:
        raise RuntimeError("the paired search failed")
    values[:n_moves] = flat[:size].reshape((n_moves, budget, N_VALUES))
    return flat[size]


@njit
def heuristic_choices(observation, moves, n_moves, params, seed, out) -> None:
    """The index each one-ply heuristic (``HEURISTICS`` order, one row of ``params`` each)
    would choose here, into ``out``; each starts from the same stream of ``seed``."""
    rng = np.zeros(1, dtype=np.uint64)
    for which in range(len(HEURISTICS)):
        rng[0] = stream_key(seed, which, 1, SALT_HINT)
        out[which] = choose_heuristic(which, observation, moves, n_moves, params[which], rng)


@njit
def choose_heuristic(which, observation, moves, n_moves, row, rng) -> int:
    """The choice of the heuristic ``which`` (``GREEDY`` ... ``LEARNED``) with parameters
    ``row``."""
    if which == GREEDY:
        return choose_greedy(observation, moves, n_moves, row, rng)
    if which == HEAVY:
        return choose_heavy(observation, moves, n_moves, row, rng)
    if which == DEFENSIVE:
        return choose_defensive(observation, moves, n_moves, row, rng)
    if which == BLOCKER:
        return choose_blocker(observation, moves, n_moves, row, rng)
    if which == PARTNER:
        return choose_partner(observation, moves, n_moves, row, rng)
    if which == WEIGHTED:
        return choose_weighted(observation, moves, n_moves, row, rng)
    if which == LEARNED:
        return choose_learned(observation, moves, n_moves, row, rng)
    return -1


@njit
def moves_of(layout, hand, drawn, moves) -> int:
    """The legal moves as the engine generates them: every placement of the hand, or with
    ``drawn`` >= 0 only those of the tile just drawn (it must be placed at once)."""
    if drawn >= 0:
        return tile_moves(layout, drawn, moves)
    return legal_moves(layout, hand, moves)


@njit
def place(layout, tile, arm) -> int:
    """``sim.core.layout.place_tile``, callable from Python through the cached module."""
    return place_tile(layout, tile, arm)


@njit
def count(layout) -> int:
    return count_ends(layout)


@njit
def open_values(layout) -> int:
    return open_values_mask(layout)
