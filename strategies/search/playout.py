"""Playing a round out on a determinized deal: the shared machinery of the search players.

``rollout``, ``expert`` and ``sniff hint`` all place a candidate move on a sampled deal and
let heuristic policies play the round to its end with the engine's own turn loop (so
play-outs follow exactly the rules real games follow). That loop is compiled once, here,
around one dispatcher of every play-out policy, instead of once per search player.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, loop, record
from sim.core import observation as view
from sim.core.buffers import Log, new_seats
from sim.core.calls import call_choose, slot
from sim.core.layout import can_play, legal_moves, open_values_mask, popcount, tile_moves
from sim.core.rng import next_random
from sim.core.tiles import N_TILES
from strategies import MAX_PARAMS
from strategies.heuristics.blocker import choose_blocker
from strategies.heuristics.greedy import choose_greedy
from strategies.heuristics.heavy import choose_heavy
from strategies.heuristics.partner import choose_partner
from strategies.heuristics.random import choose_random
from strategies.heuristics.weighted import DEFAULTS as WEIGHTED_DEFAULTS
from strategies.heuristics.weighted import choose_weighted
from strategies.learned.player import choose_learned

__all__ = ["POLICIES"]

# the play-out policies a search may use, by name (``--policy``)
POLICIES = ("greedy", "blocker", "partner", "weighted", "random", "heavy", "learned")
# Their functions, in that order. Every one but greedy runs through its address
# (``choose_policy``); they are named here so that a search player's code digest and its
# compiled wrapper's name follow their modules (``sim.kernels.generate``): their code decides
# the play-outs.
POLICY_FUNCTIONS = (choose_greedy, choose_blocker, choose_partner, choose_weighted,
                    choose_random, choose_heavy, choose_learned)
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
    ``LIMIT_UNIT``; past its limit of tiles on the table a seat plays ``greedy``).

    ``greedy`` is compiled in; every other policy is called through its compiled wrapper's
    address, ``sim.core.calls.SLOTS[index]`` (``sim.kernels.generate.load_policies`` fills
    it): the search players, the hint search and their tests then compile the play-out
    loop without six heuristics and a network inside it (the same games)."""
    function = code % LIMIT_UNIT
    limit = code // LIMIT_UNIT
    if limit > 0 and popcount(observation[view.PLAYED]) > limit:
        function = 0
    if function == 0:
        return choose_greedy(observation, moves, n_moves, params, rng)
    address = slot(function)
    if address == 0:
        raise RuntimeError("the play-out policies are not loaded "
                           "(sim.kernels.generate.load_policies)")
    return call_choose(address, observation, moves, n_moves, params, rng)


# The engine's turn loop around the play-out policies: play-outs follow the real rules.
_, _, play_out = loop.make_game_player(choose_policy)


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def playout_buffers(policy: int):
    """Scratch of play-outs with ``policy`` in every seat: ``(state, seats, log)``
    (``sim.core.buffers``; the log keeps no trace rows)."""
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    seats = new_seats(MAX_PARAMS)
    for seat in range(engine.MAX_PLAYERS):
        seats.functions[seat] = policy
        seats.params[seat, :] = POLICY_PARAMS[policy]
    log = Log(np.zeros(engine.ROUND_FIELDS, dtype=np.int64),
              np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64))
    return state, seats, log


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
def play_round_from(state, deal, seat, move, seats, log) -> None:
    """Place ``move`` for ``seat`` on a copy of ``deal`` (into ``state``), play the round out
    (``seats`` and ``log``: see ``playout_buffers``)."""
    state[:] = deal
    players = state[engine.PLAYERS]
    round_row = log.round_row
    round_row[:] = 0
    round_row[engine.ROUND_DOMINO_SEAT] = -1
    if not engine.apply_placement(state, seat, move, round_row, log.events):
        if state[engine.HANDS + seat] == 0:
            engine.settle_round(state, round_row, log.events, engine.END_DOMINO, seat)
        else:
            play_out(state, (seat + 1) % players, -1, seats, log)


@njit
def play_placements(state, seat, placements, seats, log):
    """Play turns from ``seat`` as the engine's turn loop does (same draws, passes, blocks,
    record and settlement), but stop after ``placements`` placements.

    Returns the seat that made the last of them, with ``seats.observation`` holding its view
    before it and ``seats.moves[0]`` the move (so that it can be valued as that seat sees
    it), or -1 when the round ended first (``state`` is then settled, as
    ``play_round_from`` leaves it).
    """
    players = state[engine.PLAYERS]
    moves, observation, rng = seats.moves, seats.observation, seats.rng
    round_row, events = log.round_row, log.events
    placed = 0
    while True:
        layout = state[engine.LAYOUT]
        hand = state[engine.HANDS + seat]
        move = -1
        forced = 0
        kind = record.PLACE_CHOSEN
        n_moves = legal_moves(layout, hand, moves)
        if n_moves == 0 and state[engine.BONEYARD_POS] < N_TILES:
            state[engine.LACKS + seat] = open_values_mask(layout)
            while state[engine.BONEYARD_POS] < N_TILES:
                tile = state[engine.DECK + state[engine.BONEYARD_POS]]
                state[engine.BONEYARD_POS] += 1
                state[engine.HANDS + seat] |= 1 << tile
                record.append(state, engine.RECORD, record.DRAW, seat, 0)
                n_moves = tile_moves(layout, tile, moves)
                if n_moves > 0:
                    forced = 1
                    kind = record.PLACE_FORCED
                    break
        if n_moves > 0:
            last = placed + 1 == placements
            if n_moves > 1 or last:
                engine.fill_observation(state, seat, forced, observation)
            index = 0
            if n_moves > 1:
                rng[0] = np.uint64(state[engine.STREAMS + seat])
                index = choose_policy(seats.functions[seat], observation, moves, n_moves,
                                      seats.params[seat], rng)
                state[engine.STREAMS + seat] = np.int64(rng[0])
                if index < 0 or index >= n_moves:
                    index = 0
            move = moves[index]
            for slot in range(n_moves):
                moves[slot] = engine.NO_MOVE
            record.append(state, engine.RECORD, kind, seat, move)
            if engine.apply_placement(state, seat, move, round_row, events):
                return -1
            if state[engine.HANDS + seat] == 0:
                engine.settle_round(state, round_row, events, engine.END_DOMINO, seat)
                return -1
            placed += 1
            if last:
                moves[0] = move
                return seat
        else:
            state[engine.LACKS + seat] |= open_values_mask(layout)
            record.append(state, engine.RECORD, record.PASS, seat, 0)
            blocked = True
            for other in range(players):
                if can_play(layout, state[engine.HANDS + other]):
                    blocked = False
                    break
            if blocked:
                engine.settle_round(state, round_row, events, engine.END_BLOCKED, -1)
                return -1
        seat += 1
        if seat == players:
            seat = 0


@njit
def play_round_until(state, deal, seat, move, placements, seats, log) -> int:
    """``play_round_from`` stopped after ``placements`` placements past the candidate
    (see ``play_placements``; with 0 the round is played out). Returns the seat of the
    last placement, its view in ``seats.observation`` and its move in ``seats.moves[0]``,
    or -1 when the round ended first."""
    if placements <= 0:
        play_round_from(state, deal, seat, move, seats, log)
        return -1
    state[:] = deal
    players = state[engine.PLAYERS]
    round_row = log.round_row
    round_row[:] = 0
    round_row[engine.ROUND_DOMINO_SEAT] = -1
    if engine.apply_placement(state, seat, move, round_row, log.events):
        return -1
    if state[engine.HANDS + seat] == 0:
        engine.settle_round(state, round_row, log.events, engine.END_DOMINO, seat)
        return -1
    return play_placements(state, (seat + 1) % players, placements, seats, log)
