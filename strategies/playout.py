"""Playing a round out on a determinized deal: the shared machinery of the search players.

``rollout``, ``expert`` and ``sniff hint`` all place a candidate move on a sampled deal and
let heuristic policies play the round to its end with the engine's own turn loop (so
play-outs follow exactly the rules real games follow). That loop is compiled once, here,
around one dispatcher of every play-out policy, instead of once per search player.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import popcount
from sim.core.rng import next_random
from strategies import MAX_PARAMS
from strategies.blocker import choose_blocker
from strategies.greedy import choose_greedy
from strategies.heavy import choose_heavy
from strategies.partner import choose_partner
from strategies.random import choose_random
from strategies.weighted import DEFAULTS as WEIGHTED_DEFAULTS
from strategies.weighted import choose_weighted

POLICIES = ("greedy", "blocker", "partner", "weighted", "random", "heavy")
# A seat's play-out function code: the policy's index in POLICIES, plus, when the policy
# should play only the first placements after the candidate, LIMIT_UNIT times the number
# of tiles on the table up to which it plays (greedy plays the rest).
LIMIT_UNIT = 16

# Each policy plays out with its registered defaults (kept in step by a test).
POLICY_PARAMS = np.zeros((len(POLICIES), MAX_PARAMS), dtype=np.float64)
POLICY_PARAMS[1, :3] = (8.0, 0.5, 0.1)
POLICY_PARAMS[2, :5] = (0.7, 6.0, 0.2, 5.0, 0.1)
POLICY_PARAMS[3, :8] = tuple(WEIGHTED_DEFAULTS.values())


@njit(inline="always")
def choose_policy(code, observation, moves, n_moves, params, rng):
    """Dispatcher of the play-out policies, in ``POLICIES`` order (``code``: see
    ``LIMIT_UNIT``; past its limit of tiles on the table a seat plays ``greedy``)."""
    function = code % LIMIT_UNIT
    limit = code // LIMIT_UNIT
    if limit > 0 and popcount(observation[view.PLAYED]) > limit:
        function = 0
    if function == 1:
        return choose_blocker(observation, moves, n_moves, params, rng)
    if function == 2:
        return choose_partner(observation, moves, n_moves, params, rng)
    if function == 3:
        return choose_weighted(observation, moves, n_moves, params, rng)
    if function == 4:
        return choose_random(observation, moves, n_moves, params, rng)
    if function == 5:
        return choose_heavy(observation, moves, n_moves, params, rng)
    return choose_greedy(observation, moves, n_moves, params, rng)


# The engine's turn loop around the play-out policies: play-outs follow the real rules.
_, _, play_out = engine.make_game_player(choose_policy)


@njit(_nrt=True)
def playout_buffers(policy: int):
    """Scratch arrays of play-outs with ``policy`` in every seat: ``(state, moves,
    observation, round_row, events, seat_functions, seat_params, rng)``."""
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
    seat_functions = np.full(engine.MAX_PLAYERS, policy, dtype=np.int64)
    seat_params = np.zeros((engine.MAX_PLAYERS, MAX_PARAMS), dtype=np.float64)
    for seat in range(engine.MAX_PLAYERS):
        seat_params[seat, :] = POLICY_PARAMS[policy]
    rng = np.zeros(1, dtype=np.uint64)
    return state, moves, observation, round_row, events, seat_functions, seat_params, rng


@njit
def limit_policy(seat_functions, plies: int, played: int) -> None:
    """Let the seats' policies play only the first ``plies`` placements after the
    candidate (``played`` tiles on the table before it); greedy plays the rest."""
    if plies > 0:
        for seat in range(seat_functions.size):
            seat_functions[seat] = seat_functions[seat] % LIMIT_UNIT + LIMIT_UNIT * (
                played + plies)


@njit
def give_streams(deal, rng) -> None:
    """Each seat's play-out stream, drawn into the deal: every candidate played on it then
    meets the same random numbers (common random numbers)."""
    for seat in range(engine.MAX_PLAYERS):
        deal[engine.STREAMS + seat] = np.int64(next_random(rng))


@njit
def play_round_from(
    state, deal, seat, move, seat_functions, seat_params, moves, observation, rng, round_row,
    events,
) -> None:
    """Place ``move`` for ``seat`` on a copy of ``deal`` (into ``state``), play the round out."""
    state[:] = deal
    players = state[engine.PLAYERS]
    round_row[:] = 0
    round_row[engine.ROUND_DOMINO_SEAT] = -1
    if not engine.apply_placement(state, seat, move, round_row, events):
        if state[engine.HANDS + seat] == 0:
            engine.settle_round(state, round_row, events, engine.END_DOMINO, seat)
        else:
            play_out(
                state, (seat + 1) % players, -1, seat_functions, seat_params, moves,
                observation, rng, round_row, events,
            )
