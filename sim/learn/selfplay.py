"""The compiled games of ``sniff learn``: self-play that records every decision, and evaluation.

Games are played by the engine's own turn loop (``sim.core.loop.make_game_player``) around a
dispatcher of three players: ``partner`` and ``blocker`` (the strongest heuristics) and
the value network being trained (``strategies.learned.net``, read from the seat's row),
each with an exploration rate ε (a uniformly random legal move with probability ε). A
seat that records writes, at each of its decisions, the inputs of the afterstate it chose
(``strategies.learned.features.encode``, the mover's public view only) and the round
number; after the game each record gets its Monte-Carlo return:

- ``value``: the mover side's chance to win the game at the end of that round: 1 or 0 if
  the game ended inside it, else the score table's win probability from the scores after
  settlement with the next leader (the value ``expert`` gives a round's end);
- ``outcome``: 1 if the mover's side won the game, 0 if not (0.5 for a game that hit the
  round cap).

Per seat, everything a player needs travels in its parameter row (the engine hands a
strategy only its row): a header (kind, ε, recording, the record count and capacity, the
offsets, the network's layer widths and the heuristic's parameters), the network's flat
weights, and the record area. Game ``g`` is played exactly as ``sim.kernels.runner`` plays it
(same deal and strategy streams, seats rotated by ``rotations[g]``), so the evaluation's
games are the games ``sniff simulate --duplicate`` would play.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, loop
from sim.core import observation as view
from sim.core.buffers import Log, Seats
from sim.core.layout import move_points
from sim.core.rng import SALT_STRATEGY, random_below, random_unit, stream_key
from strategies.heuristics.blocker import blocker_choice
from strategies.heuristics.partner import partner_choice
from strategies.learned.features import N_BASE_INPUTS, encode
from strategies.learned.net import MAX_WIDTH, first_layer_partial, forward_from
from strategies.learned.record_inputs import MAX_INPUTS, encode_record
from strategies.search.expert import search_values
from strategies.value.round_value import win_chance

PARTNER, BLOCKER, NET = 0, 1, 2
KIND, EPSILON, RECORDING, COUNT, CAPACITY, WEIGHTS_AT, RECORDS_AT, N_SIZES = range(8)
SIZES = 8  # up to 6 layer widths
HEURISTIC = 14  # up to 8 heuristic parameters
LABEL_RATE = 22  # the share of decisions the teacher labels (0: Monte-Carlo returns)
INPUTS = 23  # how many inputs a record keeps: N_BASE_INPUTS, or with the record block more
TEACHER = 24  # the teacher's (expert's) parameter row, 10 slots
HEADER = 34
RECORD_WIDTH = MAX_INPUTS + 2  # the inputs, the round number, the teacher's label (-1: none)
PARTNER_PARAMS = (0.7, 6.0, 0.2, 5.0, 0.1)
BLOCKER_PARAMS = (8.0, 0.5, 0.1)


@njit(_nrt=True)
def player_choice(observation, moves, n_moves, params, rng) -> int:
    """The seat's move: a winning move if any, else ε-random or the player's own pick;
    the chosen afterstate is recorded when the seat records."""
    team = view.team_of(observation[view.SEAT], observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    for index in range(n_moves):
        if move_points(observation[view.LAYOUT], moves[index]) >= needed:
            return index
    kind = np.int64(params[KIND])
    x = np.zeros(MAX_INPUTS, dtype=np.float64)
    # The record block is the same for every move; it is encoded only where it is read:
    # by the network's choice, or in a record kept (unlabelled decisions of a heuristic
    # seat are most decisions, and need none).
    record_pending = params[INPUTS] > N_BASE_INPUTS
    if params[EPSILON] > 0.0 and random_unit(rng) < params[EPSILON]:
        choice = random_below(rng, n_moves)
    elif kind == PARTNER:
        choice = partner_choice(observation, moves, n_moves, params[HEURISTIC:HEURISTIC + 8])
    elif kind == BLOCKER:
        choice = blocker_choice(observation, moves, n_moves, params[HEURISTIC:HEURISTIC + 8])
    else:
        n_sizes = np.int64(params[N_SIZES])
        sizes = np.empty(n_sizes, dtype=np.int64)
        for layer in range(n_sizes):
            sizes[layer] = np.int64(params[SIZES + layer])
        start = np.int64(params[WEIGHTS_AT])
        weights = params[start:np.int64(params[RECORDS_AT])]
        scratch = np.empty((2, MAX_WIDTH), dtype=np.float64)
        partial = np.empty(MAX_WIDTH, dtype=np.float64)
        if record_pending:
            encode_record(observation, x)
            record_pending = False
        first_layer_partial(x, weights, sizes, partial)
        choice = 0
        best = -np.inf
        for index in range(n_moves):
            encode(observation, moves[index], x)
            value = forward_from(x, weights, sizes, scratch, partial)
            if value > best:
                best = value
                choice = index
    if params[RECORDING] <= 0.0:
        return choice
    labelled = params[LABEL_RATE] > 0.0
    if labelled and random_unit(rng) >= params[LABEL_RATE]:
        return choice  # a decision the teacher does not label is not recorded
    if record_pending:
        encode_record(observation, x)
    if labelled:
        label(observation, moves, n_moves, params, rng, x)
    else:
        append_record(observation, moves[choice], -1.0, params, x)
    return choice


@njit(inline="always")
def append_record(observation, move, value, params, x) -> bool:
    """Append ``move``'s afterstate, the round and ``value`` (the teacher's label, -1 for
    none) to the seat's records; False when its room is full."""
    count = np.int64(params[COUNT])
    if count >= params[CAPACITY]:
        return False
    at = np.int64(params[RECORDS_AT]) + count * RECORD_WIDTH
    encode(observation, move, x)  # the record block is in x already (player_choice)
    params[at:at + MAX_INPUTS] = x
    params[at + MAX_INPUTS] = observation[view.ROUND]
    params[at + MAX_INPUTS + 1] = value
    params[COUNT] = count + 1
    return True


@njit(_nrt=True)
def label(observation, moves, n_moves, params, rng, x) -> None:
    """Record every candidate's afterstate with the teacher's value of it (``expert``'s
    search, each move on the same deals)."""
    values = np.empty(n_moves, dtype=np.float64)
    search_values(observation, moves, n_moves, params[TEACHER:TEACHER + 10], rng, values)
    for index in range(n_moves):
        if not append_record(observation, moves[index], values[index], params, x):
            return


@njit(inline="always")
def dispatch(function, observation, moves, n_moves, params, rng):
    return player_choice(observation, moves, n_moves, params, rng)


_, play_round, _ = loop.make_game_player(dispatch)


def player_row(kind: int, epsilon: float = 0.0, recording: bool = False, capacity: int = 0,
               weights: np.ndarray | None = None, sizes: np.ndarray | None = None,
               label_rate: float = 0.0, teacher: np.ndarray | None = None,
               inputs: int = N_BASE_INPUTS) -> np.ndarray:
    """A seat's parameter row: header, network weights, room for ``capacity`` records;
    with ``label_rate`` > 0 the seat records only the decisions the ``teacher`` (expert's
    parameter row) labels, each candidate with its value. ``inputs``: how many inputs a
    record keeps (more than ``N_BASE_INPUTS``: the record block too); a network's seat
    needs at least its first layer's width."""
    weights = np.zeros(0) if weights is None else np.asarray(weights, dtype=np.float64)
    sizes = np.zeros(0, dtype=np.int64) if sizes is None else np.asarray(sizes)
    row = np.zeros(HEADER + weights.size + capacity * RECORD_WIDTH, dtype=np.float64)
    row[KIND], row[EPSILON], row[RECORDING], row[CAPACITY] = kind, epsilon, recording, capacity
    row[WEIGHTS_AT] = HEADER
    row[RECORDS_AT] = HEADER + weights.size
    row[N_SIZES] = sizes.size
    row[SIZES:SIZES + sizes.size] = sizes
    heuristic = PARTNER_PARAMS if kind == PARTNER else BLOCKER_PARAMS
    row[HEURISTIC:HEURISTIC + len(heuristic)] = heuristic
    row[HEADER:HEADER + weights.size] = weights
    row[LABEL_RATE] = label_rate
    row[INPUTS] = max(inputs, sizes[0] if sizes.size else 0)
    if teacher is not None:
        row[TEACHER:TEACHER + len(teacher)] = teacher
    return row


def roles_matrix(rows: list[np.ndarray]) -> np.ndarray:
    """The players' rows as one matrix (padded to the longest)."""
    width = max(row.size for row in rows)
    matrix = np.zeros((len(rows), width), dtype=np.float64)
    for index, row in enumerate(rows):
        matrix[index, :row.size] = row
    return matrix


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


@njit(_nrt=True, nogil=True)
def play_games(seed, game_ids, deal_ids, rotations, players, roles, round_cap, records,
               winners):
    """Play the games; return the number of records written into ``records``.

    ``records``: the arrays the recording seats' decisions go to, ``(x, value, outcome)``
    (inputs, the value target, the game's outcome), one row a decision. Seat ``s`` of game
    ``g`` is played by ``roles[(s + rotations[g]) % players]``; ``winners[g]`` gets the
    winning side (the role's index with 2 or 3 players, its parity with 4) or -1 at the
    round cap. Records past ``x``'s rows are dropped.
    """
    out_x, out_value, out_outcome = records
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    deal_rng = np.zeros(1, dtype=np.uint64)
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
    seat_functions = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
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
            for team in range(engine.MAX_PLAYERS):
                round_scores[rounds - 1, team] = state[engine.SCORES + team]
            round_domino[rounds - 1] = round_row[engine.ROUND_DOMINO_SEAT]
            if reason == engine.END_TARGET:
                break
            leader = round_row[engine.ROUND_DOMINO_SEAT] if reason == engine.END_DOMINO else -1
        winner = state[engine.WINNER_TEAM]
        if winner < 0:
            winners[game] = -1
        elif players == 4:
            winners[game] = (winner + rotations[game]) % 2
        else:
            winners[game] = (winner + rotations[game]) % players
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
