"""The exact value of each move where the mover can see every hand: a search of the rest of
the round to its end.

Why: with the boneyard empty and every hidden tile's owner forced (two players: the
opponent holds every tile that is neither played nor the mover's), every deal the search
could draw is the same one, and a play-out policy then plays it the same flawed way on
every deal: more play-outs do not help, the policy's own choices bias the verdict. The
round's rest is a small game of perfect information, so it is searched instead: every
seat's every legal move, each side choosing what is best for it (the mover's side
maximising its chance to win the game, the other minimising it; alpha-beta pruning), each
round's end valued as the play-outs value it (``strategies.value.round_value.outcome``);
a position reached again by another order of moves is taken from a table.
Only positions with two sides are solved (2 or 4 players): with three, each seat plays for
itself and there is no single value to maximise and minimise.

The turns follow the engine's own functions (``apply_placement``, ``settle_round``): a
placement that reaches the target wins at once, a seat with no legal move passes, a round
where no one can place is blocked. A solve that would visit more than ``NODE_LIMIT``
positions is abandoned and the decision played out instead, so the cost stays bounded.

Plain ``@njit`` functions, compiled through the analysis's generated module
(``sim.analyze.kernel``), whose name carries this file's hash.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import can_play, legal_moves, move_points
from sim.core.tiles import N_TILES, TILE_PIPS
from strategies.search.determinize import deal_count, prepare, sample_deal
from strategies.value.round_value import outcome
from strategies.value.score_table import N_FEATURES

NODE_LIMIT = 20_000  # positions visited per decision, all its moves together
MAX_DEPTH = 64  # placements after the candidate: at most the 28 tiles, with room to spare
ABANDONED = -1.0  # what a solve past the node limit returns
SCORE_OFFSET = 1 << 20  # scores packed into a key as non-negative fields
EXACT, LOWER, UPPER = 0.0, 1.0, 2.0  # what a position's stored value is
KEY = types.UniTuple(types.int64, 4)
ENTRY = types.UniTuple(types.float64, 2)


@njit
def _end(context, state) -> float:
    stack, _, _, features, _, _, team = context
    return outcome(state, stack[0], team, 0, features)


@njit
def _key(state, seat):
    """The position's key: the hands, the table and the scores decide the rest of the
    round (the tiles played are those in no hand)."""
    hands = state[engine.HANDS] | state[engine.HANDS + 1] << 28
    more = state[engine.HANDS + 2] | state[engine.HANDS + 3] << 28
    scores = ((state[engine.SCORES] + SCORE_OFFSET)
              | (state[engine.SCORES + 1] + SCORE_OFFSET) << 21 | seat << 42)
    return (hands, more, state[engine.LAYOUT], scores)


@njit
def _order(layout, moves, n_moves) -> None:
    """The moves most likely best first (most points now, then the heaviest tile), so
    the window closes early and prunes more."""
    keys = np.empty(n_moves, dtype=np.int64)
    for index in range(n_moves):
        keys[index] = move_points(layout, moves[index]) * 16 + TILE_PIPS[moves[index] >> 2]
    for index in range(1, n_moves):
        key, move = keys[index], moves[index]
        slot = index
        while slot > 0 and keys[slot - 1] < key:
            keys[slot], moves[slot] = keys[slot - 1], moves[slot - 1]
            slot -= 1
        keys[slot], moves[slot] = key, move


@njit
def _place(context, depth, seat, move, alpha, beta) -> float:
    """The value of ``move`` by ``seat`` in ``stack[depth]``, the rest searched."""
    stack, _, scratch, _, _, _, _ = context
    child = stack[depth + 1]
    child[:] = stack[depth]
    round_row, events = scratch
    if engine.apply_placement(child, seat, move, round_row, events):
        return _end(context, child)
    if child[engine.HANDS + seat] == 0:
        engine.settle_round(child, round_row, events, engine.END_DOMINO, seat)
        return _end(context, child)
    return _turn(context, depth + 1, (seat + 1) % child[engine.PLAYERS], alpha, beta)


@njit
def _turn(context, depth, seat, alpha, beta) -> float:
    """The value for the mover's side of ``seat``'s turn in ``stack[depth]``, both sides
    playing their best: alpha-beta within ``alpha``..``beta``, positions met before
    taken from the table (exact values, or bounds where the window cut the search)."""
    stack, buffers, scratch, _, nodes, table, team = context
    nodes[0] += 1
    if nodes[0] > NODE_LIMIT or depth + 1 >= MAX_DEPTH:
        nodes[0] = NODE_LIMIT + 1
        return ABANDONED
    state = stack[depth]
    key = _key(state, seat)
    if key in table:
        value, bound = table[key]
        if bound == EXACT or (bound == LOWER and value >= beta) or (
                bound == UPPER and value <= alpha):
            return value
    players = state[engine.PLAYERS]
    layout = state[engine.LAYOUT]
    moves = buffers[depth]
    n_moves = legal_moves(layout, state[engine.HANDS + seat], moves)
    _order(layout, moves, n_moves)
    if n_moves == 0:
        for other in range(players):
            if can_play(layout, state[engine.HANDS + other]):
                return _turn(context, depth, (seat + 1) % players, alpha, beta)
        child = stack[depth + 1]
        child[:] = state
        engine.settle_round(child, scratch[0], scratch[1], engine.END_BLOCKED, -1)
        return _end(context, child)
    maximise = view.team_of(seat, players) == team
    start_alpha, start_beta = alpha, beta
    best = -1.0 if maximise else 2.0
    for index in range(n_moves):
        child = stack[depth + 1]
        child[:] = state
        move = moves[index]
        if engine.apply_placement(child, seat, move, scratch[0], scratch[1]):
            value = _end(context, child)
        elif child[engine.HANDS + seat] == 0:
            engine.settle_round(child, scratch[0], scratch[1], engine.END_DOMINO, seat)
            value = _end(context, child)
        else:
            value = _turn(context, depth + 1, (seat + 1) % players, alpha, beta)
        if nodes[0] > NODE_LIMIT:
            return ABANDONED
        if maximise:
            best = max(best, value)
            alpha = max(alpha, value)
        else:
            best = min(best, value)
            beta = min(beta, value)
        if alpha >= beta:
            break
    bound = EXACT
    if best <= start_alpha:
        bound = UPPER
    elif best >= start_beta:
        bound = LOWER
    table[key] = (best, bound)
    return best


@njit
def known_deal(observation, deal) -> bool:
    """Fill ``deal`` with the one deal consistent with the view, when there is exactly one,
    the boneyard is empty and the players form two sides; else False."""
    if view.team_count(observation[view.PLAYERS]) != 2:
        return False
    plan, counts = prepare(observation)
    if deal_count(plan, counts) != 1.0:
        return False
    rng = np.ones(1, dtype=np.uint64)
    if not sample_deal(observation, plan, counts, deal, rng):
        return False
    return deal[engine.BONEYARD_POS] >= N_TILES


@njit
def exact_values(observation, moves, n_moves, values) -> bool:
    """Each move's exact chance that the mover's side wins the game, into ``values``;
    False (``values`` untouched) when the position is not one every hand is known in, or
    its solve is past the node limit."""
    stack = np.zeros((MAX_DEPTH + 1, engine.STATE_SIZE), dtype=np.int64)
    if not known_deal(observation, stack[0]):
        return False
    seat = observation[view.SEAT]
    team = view.team_of(seat, observation[view.PLAYERS])
    scratch = (np.zeros(engine.ROUND_FIELDS, dtype=np.int64),
               np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64))
    buffers = np.full((MAX_DEPTH + 1, engine.MAX_MOVES), engine.NO_MOVE, dtype=np.int64)
    table = Dict.empty(key_type=KEY, value_type=ENTRY)
    context = (stack, buffers, scratch, np.zeros(N_FEATURES, dtype=np.float64),
               np.zeros(1, dtype=np.int64), table, team)
    nodes = context[4]
    found = np.zeros(n_moves, dtype=np.float64)
    for index in range(n_moves):
        found[index] = _place(context, 0, seat, moves[index], -1.0, 2.0)
        if nodes[0] > NODE_LIMIT:
            return False
    values[:n_moves] = found
    return True


__all__: list[str] = []  # nothing here is used outside sim.analyze
