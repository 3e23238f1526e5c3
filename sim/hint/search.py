"""The compiled part of ``sniff hint``: every legal move played out on the same sampled deals.

Plain ``@njit`` functions, compiled only through the cached module that ``sim.hint.kernel``
generates (whose file name carries a hash of this file, the engine's and the strategies'),
for the reason ``sim.kernels.generate`` gives: numba's cache of a function does not notice edits to
the functions it calls in other files.

Nothing here is new game logic. The deals come from ``strategies.search.determinize``
(every deal consistent with the public view exactly equally likely), a candidate is placed
and the round played out by ``strategies.search.expert.play_candidate`` (the engine's own
turn loop with a heuristic policy in every seat) and valued by
``strategies.value.round_value.outcome``, exactly as the ``expert`` strategy does; only the
budget is spent differently: every move gets every deal (no successive halving), so each
move's estimate has the same number of play-outs on the same deals and the differences
between moves are paired (common random numbers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import count_ends, legal_moves, open_values_mask, place_tile, tile_moves
from sim.core.rng import stream_key
from strategies.heuristics.blocker import choose_blocker
from strategies.heuristics.defensive import choose_defensive
from strategies.heuristics.greedy import choose_greedy
from strategies.heuristics.heavy import choose_heavy
from strategies.heuristics.partner import choose_partner
from strategies.heuristics.weighted import choose_weighted
from strategies.learned.player import choose_learned
from strategies.search.determinize import deal_count, prepare, sample_deal
from strategies.search.expert import play_candidate
from strategies.search.playout import give_streams, playout_buffers
from strategies.value.score_table import N_FEATURES

SALT_HINT = np.uint64(0x3C6EF372FE94F82B)
# Per play-out values written by search_moves, in this order.
VALUE_WIN = 0  # P(the mover's side wins the game), as round_value.outcome values the round's end
VALUE_POINTS = 1  # change of the mover's side's score to the round's end (placements - penalties)
VALUE_MARGIN = 2  # that change minus the average change of the other sides
N_VALUES = 3
# The one-ply heuristics whose choice a hint shows, in this order: a heuristic's place is
# its row of ``heuristic_choices``' parameters and choices and the number of its stream.
HEURISTICS = ("greedy", "heavy", "defensive", "blocker", "partner", "weighted", "learned")
GREEDY, HEAVY, DEFENSIVE, BLOCKER, PARTNER, WEIGHTED, LEARNED = range(len(HEURISTICS))


@njit
def search_moves(observation, moves, n_moves, budget, policy, seed, values) -> float:
    """Play every move out on the same ``budget`` deals; fill ``values[move, deal, kind]``.

    Returns the number of consistent deals of the hidden hands (0: none, nothing played).
    Deal ``d`` and the play-out streams it carries are keyed by ``(seed, d)`` alone, so a
    larger budget keeps the first deals and adds more.
    """
    plan, counts = prepare(observation)
    total = deal_count(plan, counts)
    if total <= 0.0:
        return total
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    team = view.team_of(seat, players)
    teams = view.team_count(players)
    deal = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    deal_rng = np.zeros(1, dtype=np.uint64)
    state, seats, log = playout_buffers(policy)
    features = np.zeros(N_FEATURES, dtype=np.float64)
    for index in range(budget):
        deal_rng[0] = stream_key(seed, index, 0, SALT_HINT)
        sample_deal(observation, plan, counts, deal, deal_rng)
        give_streams(deal, deal_rng)
        for move in range(n_moves):
            win = play_candidate(state, deal, seat, moves[move], 0, seats, log, features)
            own = float(state[engine.SCORES + team] - deal[engine.SCORES + team])
            others = 0.0
            for rival in range(teams):
                if rival != team:
                    others += state[engine.SCORES + rival] - deal[engine.SCORES + rival]
            values[move, index, VALUE_WIN] = win
            values[move, index, VALUE_POINTS] = own
            values[move, index, VALUE_MARGIN] = own - others / (teams - 1)
    return total


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
