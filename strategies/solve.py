"""Exact solving of a determinized deal's last placements, GIB's way in bridge.

On a deal the search has drawn, every hand and the boneyard's order are known, so the rest
of the round is a game of perfect information. Once few tiles remain it is small enough to
search exactly instead of playing it out with a heuristic: :func:`solve_round` returns the
value of the round's end (``strategies.round_value.outcome``, the deciding side's chance
to win the game) under best play, by alpha-beta over an explicit stack (no recursion,
so the kernels that compile it in stay cacheable).

Two kinds of "best play" (``opponents``):

- ``MINIMAX`` (-1): the other side picks the move worst for the deciding side, as GIB's
  double-dummy solver assumes of bridge defenders;
- a model player of ``strategies.inference`` (``MODEL_BLOCKER``, ``MODEL_PARTNER``): the
  other side plays that heuristic (its one move per turn), and only the own side's moves
  are searched: the best reply to a model of the opponents, the one the reading of their
  choices already assumes (what ``expert:solve`` uses).

Either way the own side (partner included) is assumed to see every hand, the known flaw
of solving determinized deals (strategy fusion): the values are optimistic where what to
do depends on tiles the player cannot see. Draws take the deal's boneyard in order and a
drawn tile that fits is placed at once on any end it fits, as the engine does
(``sim.core.engine``); a seat that cannot place passes; the round is blocked at the first
pass after which nobody can place. Teams of two sides only (2 or 4 players).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import can_play, legal_moves, move_points, open_values_mask, tile_moves
from sim.core.tiles import N_TILES
from strategies.inference import model_choice
from strategies.round_value import outcome

MINIMAX = -1
MAX_DEPTH = 64  # placements left in a round: at most 28 tiles


@njit
def _next_turn(state, seat: int, moves, round_row, events) -> int:
    """From ``seat``, draw and pass as the rules say until a seat has a placement.

    Returns that seat, with its legal moves in ``moves`` (a drawn tile's ends only when it
    had to draw), or -1 when the round ends blocked (``state`` then settled).
    """
    players = state[engine.PLAYERS]
    while True:
        layout = state[engine.LAYOUT]
        n_moves = legal_moves(layout, state[engine.HANDS + seat], moves)
        if n_moves == 0 and state[engine.BONEYARD_POS] < N_TILES:
            state[engine.LACKS + seat] = open_values_mask(layout)
            while state[engine.BONEYARD_POS] < N_TILES:
                tile = state[engine.DECK + state[engine.BONEYARD_POS]]
                state[engine.BONEYARD_POS] += 1
                state[engine.HANDS + seat] |= 1 << tile
                n_moves = tile_moves(layout, tile, moves)
                if n_moves > 0:
                    break
        if n_moves > 0:
            return seat
        state[engine.LACKS + seat] |= open_values_mask(layout)
        blocked = True
        for other in range(players):
            if can_play(layout, state[engine.HANDS + other]):
                blocked = False
                break
        if blocked:
            engine.settle_round(state, round_row, events, engine.END_BLOCKED, -1)
            return -1
        seat = (seat + 1) % players


@njit
def _order_by_points(layout: int, moves, n_moves: int) -> None:
    """Highest-scoring moves first (insertion sort): alpha-beta cuts more when the best
    move is tried early."""
    for index in range(1, n_moves):
        move = moves[index]
        points = move_points(layout, move)
        slot = index
        while slot > 0 and move_points(layout, moves[slot - 1]) < points:
            moves[slot] = moves[slot - 1]
            slot -= 1
        moves[slot] = move


@njit(_nrt=True)
def solve_buffers():
    """Scratch arrays of :func:`solve_round`: ``(states, moves, counts, seats, best,
    bounds, observation)``, a row of each per depth (the view: for the model player)."""
    states = np.zeros((MAX_DEPTH + 1, engine.STATE_SIZE), dtype=np.int64)
    moves = np.full((MAX_DEPTH + 1, engine.MAX_MOVES), engine.NO_MOVE, dtype=np.int64)
    counts = np.zeros((MAX_DEPTH + 1, 2), dtype=np.int64)  # moves, next one to try
    seats = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    best = np.zeros(MAX_DEPTH + 1, dtype=np.float64)
    bounds = np.zeros((MAX_DEPTH + 1, 2), dtype=np.float64)  # alpha, beta
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    return states, moves, counts, seats, best, bounds, observation


@njit
def _open_node(depth, seat, team, opponents, states, moves, counts, seats, best, bounds,
               observation) -> None:
    """Node ``depth`` (its state in ``states[depth]``, ``seat`` to place): its moves, in
    the order to try them, and its starting value."""
    players = states[depth, engine.PLAYERS]
    n_moves = 0
    for slot in range(engine.MAX_MOVES):
        if moves[depth, slot] == engine.NO_MOVE:
            break
        n_moves += 1
    own = view.team_of(seat, players) == team
    if not own and opponents != MINIMAX and n_moves > 1:
        engine.fill_observation(states[depth], seat, 0, observation)
        index = model_choice(opponents, observation, moves[depth], n_moves)
        move = moves[depth, index]
        for slot in range(1, n_moves):
            moves[depth, slot] = engine.NO_MOVE
        moves[depth, 0] = move
        n_moves = 1
    else:
        _order_by_points(states[depth, engine.LAYOUT], moves[depth], n_moves)
    counts[depth, 0] = n_moves
    counts[depth, 1] = 0
    seats[depth] = seat
    best[depth] = -1.0 if own else 2.0


@njit
def solve_round(start, seat: int, team: int, opponents: int, buffers, round_row, events,
                features) -> float:
    """The value for ``team`` of the round from ``start`` (``seat`` to play next) under
    best play (see the module's text); ``start`` is left as it was."""
    states, moves, counts, seats, best, bounds, observation = buffers
    players = start[engine.PLAYERS]
    states[0, :] = start
    first = _next_turn(states[0], seat, moves[0], round_row, events)
    if first < 0:
        return outcome(states[0], start, team, 0, features)
    _open_node(0, first, team, opponents, states, moves, counts, seats, best, bounds,
               observation)
    bounds[0, 0] = -1.0
    bounds[0, 1] = 2.0
    depth = 0
    while True:
        own = view.team_of(seats[depth], players) == team
        if counts[depth, 1] < counts[depth, 0] and bounds[depth, 0] < bounds[depth, 1]:
            move = moves[depth, counts[depth, 1]]
            counts[depth, 1] += 1
            child = depth + 1
            states[child, :] = states[depth]
            mover = seats[depth]
            value = -1.0
            if engine.apply_placement(states[child], mover, move, round_row, events):
                value = 1.0 if states[child, engine.WINNER_TEAM] == team else 0.0
            elif states[child, engine.HANDS + mover] == 0:
                engine.settle_round(states[child], round_row, events, engine.END_DOMINO,
                                    mover)
                value = outcome(states[child], start, team, 0, features)
            else:
                following = _next_turn(states[child], (mover + 1) % players, moves[child],
                                       round_row, events)
                if following < 0:
                    value = outcome(states[child], start, team, 0, features)
                else:
                    _open_node(child, following, team, opponents, states, moves, counts,
                               seats, best, bounds, observation)
                    bounds[child, 0] = bounds[depth, 0]
                    bounds[child, 1] = bounds[depth, 1]
                    depth = child
                    continue
        else:
            value = best[depth]
            for slot in range(counts[depth, 0]):
                moves[depth, slot] = engine.NO_MOVE
            if depth == 0:
                return value
            depth -= 1
            own = view.team_of(seats[depth], players) == team
        if own:
            if value > best[depth]:
                best[depth] = value
            if value > bounds[depth, 0]:
                bounds[depth, 0] = value
        else:
            if value < best[depth]:
                best[depth] = value
            if value < bounds[depth, 1]:
                bounds[depth, 1] = value


@njit
def solve_candidate(deal, seat: int, move: int, opponents: int, state, buffers, round_row,
                    events, features) -> float:
    """Place ``move`` for ``seat`` on a copy of ``deal`` and solve the rest of the round:
    its value for ``seat``'s side (``expert:solve``)."""
    state[:] = deal
    team = view.team_of(seat, state[engine.PLAYERS])
    round_row[:] = 0
    if engine.apply_placement(state, seat, move, round_row, events):
        return 1.0
    if state[engine.HANDS + seat] == 0:
        engine.settle_round(state, round_row, events, engine.END_DOMINO, seat)
        return outcome(state, deal, team, 0, features)
    return solve_round(state, (seat + 1) % state[engine.PLAYERS], team, opponents, buffers,
                       round_row, events, features)
