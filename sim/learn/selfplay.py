"""The compiled games of ``sniff learn``: self-play that records every decision, and evaluation.

Games are played by the engine's own turn loop (``sim.core.loop.make_game_player``), each
seat by ``sim.learn.seat.player_choice`` (``partner``, ``blocker`` or the network being
trained, as its parameter row says) called through its address, as the engine calls a
strategy: ``sim.learn.kernel`` compiles the player alone, so these games compile only the
loop around it. After the game each record a seat kept gets its Monte-Carlo return:

- ``value``: the mover side's chance to win the game at the end of that round: 1 or 0 if
  the game ended inside it, else the score table's win probability from the scores after
  settlement with the next leader (the value ``expert`` gives a round's end);
- ``outcome``: 1 if the mover's side won the game, 0 if not (0.5 for a game that hit the
  round cap).

Game ``g`` is played exactly as ``sim.kernels.runner`` plays it (same deal and strategy
streams, seats rotated by ``rotations[g]``), so the evaluation's games are the games
``sniff simulate --duplicate`` would play.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, loop
from sim.core import observation as view
from sim.core.buffers import Log, Seats
from sim.core.calls import call_choose
from sim.core.rng import SALT_STRATEGY, stream_key
from sim.learn.seat import COUNT, MAX_INPUTS, RECORD_WIDTH, RECORDS_AT
from strategies.value.round_value import win_chance

__all__: list[str] = []  # nothing here is used outside sim.learn


@njit(inline="always")
def dispatch(function, observation, moves, n_moves, params, rng):
    return call_choose(function, observation, moves, n_moves, params, rng)


_, play_round, _ = loop.make_game_player(dispatch)


@njit
def round_end_value(players, target, scores, team, domino) -> float:
    """P(``team`` wins) from the scores after a round's settlement (``domino``: the seat
    that went out, who leads next; -1: a random leader), as ``expert`` values it."""
    own = target - scores[team]
    other = 1e9
    for rival in range(view.team_count(players)):
        if rival != team:
            other = min(other, target - scores[rival])
    if domino >= 0:
        lead = 1.0 if view.team_of(domino, players) == team else -1.0
        return win_chance(players, own, other, lead, target)
    share = (2.0 if players == 4 else 1.0) / players
    return share * win_chance(players, own, other, 1.0, target) + (
        1.0 - share) * win_chance(players, own, other, -1.0, target)


@njit(_nrt=True, nogil=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def play_games(seed, game_ids, deal_ids, rotations, players, roles, round_cap, records,
               winners, player):
    """Play the games; return the number of records written into ``records``, or -1 when
    a seat's player raised (its wrapper's ``RAISED``).

    ``records``: the arrays the recording seats' decisions go to, ``(x, value, outcome)``
    (inputs, the value target, the game's outcome), one row a decision. Seat ``s`` of game
    ``g`` is played by ``roles[(s + rotations[g]) % players]``; ``winners[g]`` gets the
    winning side (the role's index with 2 or 3 players, its parity with 4) or -1 at the
    round cap. Records past ``x``'s rows are dropped. ``player``: the address of the seats'
    compiled ``sim.learn.seat.player_choice``.
    """
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    deal_rng = np.zeros(1, dtype=np.uint64)
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
    seat_functions = np.full(engine.MAX_PLAYERS, player, dtype=np.int64)
    seat_params = np.zeros((engine.MAX_PLAYERS, roles.shape[1]), dtype=np.float64)
    round_scores = np.zeros((round_cap, engine.MAX_PLAYERS), dtype=np.int64)
    round_domino = np.zeros(round_cap, dtype=np.int64)
    seats = Seats(seat_functions, seat_params, moves, observation, rng)
    log = Log(round_row, events)
    written = 0
    for game in range(game_ids.shape[0]):
        for seat in range(players):
            role = (seat + rotations[game]) % players
            header_end = np.int64(roles[role, RECORDS_AT])
            seat_params[seat, :header_end] = roles[role, :header_end]
            seat_params[seat, COUNT] = 0.0
        # The game loop of engine.play_game, keeping each round's end.
        state[:] = 0
        state[engine.PLAYERS] = players
        state[engine.TARGET] = engine.TARGET_FOR_PLAYERS[players]
        state[engine.WINNER_TEAM] = -1
        for seat in range(players):
            state[engine.STREAMS + seat] = np.int64(
                stream_key(seed, game_ids[game], seat, SALT_STRATEGY))
        leader = -1
        rounds = 0
        while rounds < round_cap:
            rounds += 1
            leader = engine.deal_round(state, seed, deal_ids[game], rounds, -1, leader,
                                       deal_rng)
            reason = play_round(state, leader, -1, seats, log)
            if state[engine.BAD_CHOICE] != 0:
                return -1
            for team in range(engine.MAX_PLAYERS):
                round_scores[rounds - 1, team] = state[engine.SCORES + team]
            round_domino[rounds - 1] = round_row[engine.ROUND_DOMINO_SEAT]
            if reason == engine.End.TARGET:
                break
            leader = round_row[engine.ROUND_DOMINO_SEAT] if reason == engine.End.DOMINO else -1
        winner = state[engine.WINNER_TEAM]
        if winner < 0:
            winners[game] = -1
        elif players == 4:
            winners[game] = (winner + rotations[game]) % 2
        else:
            winners[game] = (winner + rotations[game]) % players
        written = keep_records(seat_params, state, rounds, round_scores, round_domino,
                               records, written)
    return written


@njit(nogil=True)
def keep_records(seat_params, state, rounds, round_scores, round_domino, records,
                 written) -> int:
    """Copy the records the seats kept in a finished game to ``records`` from row
    ``written`` on, each with its value target and the game's outcome; the rows written
    in all."""
    out_x, out_value, out_outcome = records
    players = state[engine.PLAYERS]
    winner = state[engine.WINNER_TEAM]
    target = state[engine.TARGET]
    for seat in range(players):
        team = view.team_of(seat, players)
        at = np.int64(seat_params[seat, RECORDS_AT])
        for k in range(np.int64(seat_params[seat, COUNT])):
            if written >= out_x.shape[0]:
                break
            row = at + k * RECORD_WIDTH
            out_x[written, :] = seat_params[seat, row:row + out_x.shape[1]]
            played_round = np.int64(seat_params[seat, row + MAX_INPUTS])
            if seat_params[seat, row + MAX_INPUTS + 1] >= 0.0:
                value = seat_params[seat, row + MAX_INPUTS + 1]
            elif winner >= 0 and played_round == rounds:
                value = 1.0 if winner == team else 0.0
            else:
                value = round_end_value(players, target, round_scores[played_round - 1],
                                        team, round_domino[played_round - 1])
            out_value[written] = value
            out_outcome[written] = 0.5 if winner < 0 else (1.0 if winner == team else 0.0)
            written += 1
    return written
