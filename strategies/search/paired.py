"""Every legal move played out on the same sampled deals: the search of ``sniff hint`` and
``sniff analyze``.

Nothing here is new game logic. The deals come from ``strategies.search.determinize``
(every deal consistent with the public view exactly equally likely), a candidate is placed
and the round played out by ``strategies.search.expert.play_candidate`` (the engine's own
turn loop with a heuristic policy in every seat) and valued by
``strategies.value.round_value.outcome``, exactly as the ``expert`` strategy does; only the
budget is spent differently: every move gets every deal (no successive halving), so each
move's estimate has the same number of play-outs on the same deals and the differences
between moves are paired (common random numbers).

It is compiled once, alone (``sim.kernels.template``'s ``PAIRED_TEMPLATE``, of expert's
searcher's signature), and the hint's and the analysis's modules call it through its address
(``sim.hint.search.search_moves``) instead of each compiling the play-out loop again.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.rng import stream_key
from strategies.search.determinize import deal_count, prepare, sample_deal
from strategies.search.expert import play_candidate
from strategies.search.playout import give_streams, playout_buffers
from strategies.value.score_table import N_FEATURES

__all__ = ["N_VALUES", "paired_values", "SALT_HINT", "VALUE_MARGIN", "VALUE_POINTS", "VALUE_WIN"]

SALT_HINT = np.uint64(0x3C6EF372FE94F82B)
# Per play-out values written by search_moves, in this order.
VALUE_WIN = 0  # P(the mover's side wins the game), as round_value.outcome values the round's end
VALUE_POINTS = 1  # change of the mover's side's score to the round's end (placements - penalties)
VALUE_MARGIN = 2  # that change minus the average change of the other sides
N_VALUES = 3


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
def paired_values(observation, moves, n_moves, params, rng, flat) -> None:
    """:func:`search_moves` as the compiled-alone search calls it (flat buffers only):
    ``params`` = (budget, policy), ``rng[0]`` the seed, ``flat`` the values of
    ``(n_moves, budget, N_VALUES)`` in C order followed by the number of consistent deals."""
    budget = np.int64(params[0])
    size = n_moves * budget * N_VALUES
    values = flat[:size].reshape((n_moves, budget, N_VALUES))
    flat[size] = search_moves(observation, moves, n_moves, budget, np.int64(params[1]),
                              rng[0], values)
