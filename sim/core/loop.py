"""The game loop, compiled around one strategy dispatcher: turns, rounds, whole games, and
games that pause for the caller.

Every rule the loop applies is a function of ``sim.core.engine`` (deal, placement,
settlement, a turn's outcome, a round's and a game's accounting); this module only orders
them. One loop serves both ways of playing: ``advance_game`` plays a game until it waits for
an outside seat (a ``sim.kernels.batch.GameBatch``), a deal or a draw given from outside,
or ends; ``play_game`` (``sniff simulate``) is the same call with no outside seat, so it never
waits.

The loop is built in phases, each a factory of compiled functions named for what it plays:
a decision (``_decision``), a turn (``_turn``), the turns of a round (``_rounds``), a game
(``_games``) and a block of games (``_blocks``). Their arrays travel in the named records of
``sim.core.buffers`` (``Seats``, ``Log``, ``Deal``, ``Tables``, ``Games``, ``Dispatch``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import record
from sim.core.buffers import Deal, Log, new_seats
from sim.core.calls import RAISED
from sim.core.engine import (
    BAD_CHOICE,
    BONEYARD_POS,
    DECK,
    EVENT_DRAW,
    EXTERNAL,
    GAME_FIRST_LEADER,
    HANDS,
    LACKS,
    LAYOUT,
    MAX_PLAYERS,
    NEXT_LEADER,
    NO_MOVE,
    PLAYERS,
    RECORD,
    ROUND,
    ROUND_DECISIONS,
    ROUND_DRAWS,
    ROUND_FIELDS,
    STATE_SIZE,
    STREAMS,
    TURN_SEAT,
    WAITING,
    Chooser,
    End,
    Turn,
    Wait,
    deal_hands,
    deal_round,
    end_game,
    end_round,
    fill_observation,
    finish_turn,
    open_round,
    record_event,
    start_game,
)
from sim.core.layout import ARM_L, EMPTY_LAYOUT, legal_moves, open_values_mask, tile_moves
from sim.core.tiles import N_TILES

__all__ = ["make_batch_player", "make_game_player"]


def make_game_player(choose_move):
    """The game loop compiled around one strategy dispatcher.

    ``choose_move(function, observation, moves, n_moves, params, rng) -> index`` is captured
    as a closure variable, not passed as an argument: numba resolves it statically, inlines
    it, and the kernel that calls the result can be cached (a dispatcher argument makes the
    caller uncachable). Returns ``(play_block, play_round, play_turns)``; the resumable
    games of ``sim.kernels.batch`` use :func:`make_batch_player`, built on the same loop.
    """
    loop = _game_loop(choose_move, "", pausing=False)
    return loop["play_block"], loop["play_round"], loop["play_turns"]


def make_batch_player(choose_move):
    """``advance_block``: games of a batch played on until they wait or end (a separate
    build of the same loop, so that a kernel that never pauses compiles none of it)."""
    return _game_loop(choose_move, "batch", pausing=True)["advance_block"]


def _game_loop(choose_move, tag, pausing):
    """Every compiled function of the game loop around ``choose_move``, by name.

    ``pausing`` is a constant of the compiled code: False (``sniff simulate``'s whole games,
    the look-ahead strategies) compiles away the checks for an outside seat and for chance
    from outside, so that the loop that never pauses pays nothing for them; True (the
    batch) also makes a game wait for room (``Wait.ROOM``) instead of dropping rounds past
    its slots.
    """
    take_turn = _turn(_decision(choose_move, pausing), pausing)
    play_turns, resume_turns, play_round = _rounds(take_turn)
    advance_game, play_game = _games(play_round, resume_turns, pausing)
    play_block, advance_block, advance_games = _blocks(play_game, advance_game)
    # numba names a compiled closure by its qualified name plus a counter that restarts in
    # every process, so kernels compiled in different processes would export the same
    # symbols, and a process loading two of them from the cache would run the first one's
    # loop for both. The dispatcher's module (one per kernel) makes the names unique.
    owner = getattr(choose_move, "py_func", choose_move).__module__
    functions = {
        "play_round": play_round, "play_turns": play_turns, "play_game": play_game,
        "play_block": play_block, "resume_turns": resume_turns, "advance_game": advance_game,
        "advance_block": advance_block, "advance_games": advance_games,
    }
    for function in functions.values():
        function.py_func.__qualname__ += f"[{owner}{':' + tag if tag else ''}]"
    return functions


def _decision(choose_move, pausing):
    """``choose``: one seat's decision among its legal moves (``seats.moves``)."""

    # The turn loop runs without numba's reference counting (_nrt=False): it allocates
    # nothing, and the atomic increments numba otherwise wraps round every inlined call with
    # an array argument cost a large share of the engine's time (docs/speed.md). Strategies
    # that allocate (rollout) are separate functions compiled with reference counting as usual.
    @njit(inline="always", _nrt=False)
    def choose(state, seat, forced, n_moves, seats):
        """Ask the seat's strategy for one of the legal moves; a single move needs no asking.

        The strategy sees only its public view, its legal moves (every other slot of the
        buffer holds ``NO_MOVE``: the buffer is shared by all seats, so it is cleared after
        each use) and its own seat's random stream, swapped in and out of ``seats.rng`` so
        that no seat's draws show or shift another's. An index out of range is recorded in
        ``BAD_CHOICE`` (the runner stops the run naming the strategy; a strategy that
        raised, ``RAISED``, is recorded as the seat's negative) and the first move
        is played so that the game can finish. A ``Chooser.OUTSIDE`` seat is not asked: the game
        records what it waits for and the turn returns ``Turn.PAUSE``.
        """
        moves = seats.moves
        if n_moves == 1:
            move = moves[0]
            moves[0] = NO_MOVE
            return move
        function = seats.functions[seat]
        if pausing and function == Chooser.OUTSIDE:
            state[WAITING] = Wait.FORCED if forced else Wait.MOVE
            state[TURN_SEAT] = seat
            for slot in range(n_moves):
                moves[slot] = NO_MOVE
            return Turn.PAUSE
        observation = seats.observation
        rng = seats.rng
        fill_observation(state, seat, forced, observation)
        rng[0] = np.uint64(state[STREAMS + seat])
        index = choose_move(function, observation, moves, n_moves, seats.params[seat], rng)
        state[STREAMS + seat] = np.int64(rng[0])
        if index < 0 or index >= n_moves:
            if state[BAD_CHOICE] == 0:
                state[BAD_CHOICE] = -(seat + 1) if index == RAISED else seat + 1
            index = 0
        move = moves[index]
        for slot in range(n_moves):
            moves[slot] = NO_MOVE
        return move

    return choose


def _turn(choose, pausing):
    """``take_turn``: one seat's turn, its draws included."""

    @njit(inline="always", _nrt=False)
    def take_turn(state, seat, forced_lead, free_draws, seats, log):
        """The move of ``seat``'s turn and its record kind: a placement, ``Turn.PASS`` or
        ``Turn.PAUSE`` (the game waits: an outside seat's choice, or the caller's next draw;
        ``free_draws`` 1 draws the first tile without waiting, the caller named it)."""
        layout = state[LAYOUT]
        if layout == EMPTY_LAYOUT and forced_lead >= 0:
            return forced_lead * 4 + ARM_L, record.PLACE_FORCED
        moves = seats.moves
        round_row = log.round_row
        n_moves = legal_moves(layout, state[HANDS + seat], moves)
        if n_moves > 1:
            round_row[ROUND_DECISIONS] += 1
        if n_moves > 0:
            return choose(state, seat, 0, n_moves, seats), record.PLACE_CHOSEN
        if state[BONEYARD_POS] < N_TILES:
            # No legal placement: draw one tile at a time until one fits.
            state[LACKS + seat] = open_values_mask(layout)
            while state[BONEYARD_POS] < N_TILES:
                if pausing and state[EXTERNAL] != 0:
                    if free_draws == 0:
                        state[WAITING] = Wait.DRAW
                        state[TURN_SEAT] = seat
                        return Turn.PAUSE, record.PLACE_FORCED
                    free_draws = 0
                tile = state[DECK + state[BONEYARD_POS]]
                state[BONEYARD_POS] += 1
                state[HANDS + seat] |= 1 << tile
                round_row[ROUND_DRAWS] += 1
                record_event(log.events, state, EVENT_DRAW, seat, tile, -1, 0, 0)
                record.append(state, RECORD, record.DRAW, seat, 0)
                n_moves = tile_moves(layout, tile, moves)
                if n_moves > 1:
                    round_row[ROUND_DECISIONS] += 1
                if n_moves > 0:
                    # A playable drawn tile must be played at once (any end it fits).
                    return choose(state, seat, 1, n_moves, seats), record.PLACE_FORCED
        return Turn.PASS, record.PLACE_CHOSEN

    return take_turn


def _rounds(take_turn):
    """``play_turns``, ``resume_turns`` and ``play_round``: the turns of one round."""

    @njit(_nrt=False)
    def play_turns(state, seat, forced_lead, seats, log):
        """Play turns from ``seat`` until the round ends; return how (``End.DOMINO``,
        ``BLOCKED`` or ``TARGET``), or ``End.PAUSED`` when the game waits for the caller
        (``state[WAITING]`` says for what).

        Also the entry point for look-ahead strategies: they build a state consistent with
        what their player knows, place a candidate, and play the rest of the round from here.
        """
        players = state[PLAYERS]
        while True:
            move, kind = take_turn(state, seat, forced_lead, 0, seats, log)
            if move == Turn.PAUSE:
                return End.PAUSED
            reason = finish_turn(state, seat, move, kind, log.round_row, log.events)
            if reason >= 0:  # the round ended (End.DOMINO, BLOCKED or TARGET), else End.NONE
                return reason
            seat += 1
            if seat == players:
                seat = 0

    @njit(_nrt=False)
    def resume_turns(state, answer, forced_lead, seats, log):
        """Go on with a round that waits: ``answer`` is the outside seat's move, or for
        ``Wait.DRAW`` nothing (the caller put the named tile next in ``DECK``)."""
        seat = state[TURN_SEAT]
        waiting = state[WAITING]
        state[WAITING] = Wait.NONE
        move = answer
        kind = record.PLACE_FORCED if waiting == Wait.FORCED else record.PLACE_CHOSEN
        if waiting == Wait.DRAW:
            move, kind = take_turn(state, seat, forced_lead, 1, seats, log)
            if move == Turn.PAUSE:
                return End.PAUSED
        reason = finish_turn(state, seat, move, kind, log.round_row, log.events)
        if reason >= 0:  # the round ended
            return reason
        return play_turns(state, (seat + 1) % state[PLAYERS], forced_lead, seats, log)

    @njit(_nrt=False)
    def play_round(state, leader, forced_lead, seats, log):
        """Play one round from a fresh deal; return how it ended (``End``).

        The round row gets the round's statistics; the game is over when ``End.TARGET`` is
        returned.
        """
        open_round(state, leader, log.round_row, log.events)
        return play_turns(state, leader, forced_lead, seats, log)

    return play_turns, resume_turns, play_round


def _games(play_round, resume_turns, pausing):
    """``advance_game`` and ``play_game``: a game played on, or played whole."""

    @njit(inline="always", _nrt=False)
    def first_turns(state, leader, deal, seats, log, tables, game):
        """A dealt round played from its leader (until it ends or waits)."""
        if state[ROUND] == 1:
            tables.games[game, GAME_FIRST_LEADER] = leader
        forced_lead = deal.forced_lead if state[ROUND] == 1 else -1
        return play_round(state, leader, forced_lead, seats, log)

    @njit(inline="always", _nrt=False)
    def resume_game(state, answer, deal, seats, log, tables, game):
        """Where a paused game goes on: a fresh or room-waiting game deals its next round, a
        game waiting for a deal plays the round dealt, one waiting for a seat's move resumes
        its round (``answer``). Only the batch's build calls it (``pausing``), so the build
        of whole games compiles none of it."""
        waiting = state[WAITING]
        if waiting == Wait.NONE or waiting == Wait.ROOM:
            state[WAITING] = Wait.NONE
            return End.NEXT_ROUND
        if waiting == Wait.DEAL:
            # The caller wrote the deck into DECK and the leader into NEXT_LEADER.
            state[WAITING] = Wait.NONE
            leader = state[NEXT_LEADER]
            deal_hands(state, state[ROUND] + 1, leader)
            return first_turns(state, leader, deal, seats, log, tables, game)
        round_lead = deal.forced_lead if state[ROUND] == 1 else -1
        return resume_turns(state, answer, round_lead, seats, log)

    # The batch resumes a game at every outside decision: inlined into its loop
    # (``advance_games``), a resume saves a call that passes every array of the game's
    # records (a large share of a resume). ``resume_turns`` and ``play_turns`` stay calls: each
    # carries the strategies' code, and inlining them too made the batch kernel's compile
    # much longer for little gain. `sniff simulate`'s build (``pausing``
    # False) keeps the call.
    @njit(_nrt=False, inline="always" if pausing else "never")
    def advance_game(state, answer, deal, seats, log, tables, game):
        """Play a game on until it waits for the caller (``state[WAITING]``) or ends.

        The one game loop: ``play_game`` runs a whole game through it, ``sim.kernels.batch``
        resumes its paused games with it (``answer``: the waiting seat's move). Its results
        go to row ``game`` of ``tables``.
        """
        if pausing:
            reason = resume_game(state, answer, deal, seats, log, tables, game)
        else:  # a game that never pauses starts here, and only here
            state[WAITING] = Wait.NONE
            reason = End.NEXT_ROUND
        while reason != End.PAUSED:
            if reason != End.NEXT_ROUND and end_round(state, reason, log.round_row, tables.games,
                                                  tables.rounds, game):
                break
            if state[ROUND] >= deal.round_cap:
                break
            if pausing and state[ROUND] >= tables.rounds.shape[1]:
                state[WAITING] = Wait.ROOM
                return
            if state[EXTERNAL] != 0:
                state[WAITING] = Wait.DEAL
                state[TURN_SEAT] = -1
                return
            leader = deal_round(state, deal.seed, deal.deal_id, state[ROUND] + 1,
                                deal.forced_lead, state[NEXT_LEADER], deal.rng)
            reason = first_turns(state, leader, deal, seats, log, tables, game)
        if reason != End.PAUSED:
            end_game(state, tables.games, game, log.events)

    @njit(_nrt=False)
    def play_game(state, deal, game_id, players, seats, log, tables, game):
        """Play one whole game: rounds until a team reaches the target or the round cap.

        Its result goes to row ``game`` of ``tables.games``; its rounds to
        ``tables.rounds[game]`` (rounds beyond that row's slots are not stored: the caller
        replays such long games with room for them).
        """
        start_game(state, deal.seed, game_id, players, 0, tables.games, game)
        advance_game(state, -1, deal, seats, log, tables, game)

    return advance_game, play_game


def _blocks(play_game, advance_game):
    """``play_block``, ``advance_block`` and its loop ``advance_games``: the games of a
    block, one set of scratch."""

    @njit
    def play_block(first, last, games, dispatch, tables, events):
        """Play games ``first..last-1`` of a batch (``games``, ``dispatch``: see
        ``sim.core.buffers``) with one set of scratch arrays."""
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        seats = new_seats(dispatch.params.shape[1])
        log = Log(np.zeros(ROUND_FIELDS, dtype=np.int64), events)
        deal_rng = np.zeros(1, dtype=np.uint64)
        for game in range(first, last):
            _seat_strategies(seats, dispatch, game)
            deal = Deal(games.seed, games.deal_ids[game], games.forced_leads[game],
                        games.round_cap, deal_rng)
            play_game(state, deal, games.game_ids[game], dispatch.players, seats, log, tables,
                      game)

    @njit(_nrt=False)
    def advance_games(indexes, answers, games, dispatch, states, round_rows, tables, events,
                      seats, scratch):
        """``advance_block``'s loop, compiled without reference counting: the view of each
        game's rows would otherwise add to and take from the count of the batch's arrays,
        which every thread shares, and bounce that count between the threads' caches at
        every resume (an atomic on a contended line costs more than the resume's own work)."""
        deal_rng, held = scratch
        for index in range(indexes.shape[0]):
            game = indexes[index]
            _change_seat_strategies(seats, dispatch, game, held)
            deal = Deal(games.seed, games.deal_ids[game], games.forced_leads[game],
                        games.round_cap, deal_rng)
            advance_game(states[game], answers[index], deal, seats,
                         Log(round_rows[game], events), tables, game)

    @njit
    def advance_block(indexes, answers, games, dispatch, states, round_rows, tables, events):
        """Advance the batch's games ``indexes``, each with its ``answers`` entry.

        Every game keeps its whole progress in its own rows (``states``, ``round_rows``), so
        a game may be resumed by any thread in any later call. ``events`` (rows only for a
        batch of one game, ``sniff play``) receives the game's trace rows as it goes.
        """
        seats = new_seats(dispatch.params.shape[1])
        held = np.full(MAX_PLAYERS, -1, dtype=np.int64)  # the spec each seat of ``seats`` has
        advance_games(indexes, answers, games, dispatch, states, round_rows, tables, events,
                      seats, (np.zeros(1, dtype=np.uint64), held))

    return play_block, advance_block, advance_games


@njit(inline="always")
def _seat_strategies(seats, dispatch, game):
    """Put the strategies of the seats of game ``game`` (after its rotation) into ``seats``."""
    for seat in range(dispatch.players):
        spec = dispatch.seat_specs[game, seat]
        seats.functions[seat] = dispatch.functions[spec]
        # one number at a time: a slice assignment compiles numba's shape-mismatch error
        # (its message formatting), seconds of every cold compile for a check never failed
        for slot in range(seats.params.shape[1]):
            seats.params[seat, slot] = dispatch.params[spec, slot]


@njit(inline="always")
def _change_seat_strategies(seats, dispatch, game, held):
    """``_seat_strategies`` for a game resumed in a batch: only the seats whose spec is not
    the one ``seats`` holds already (``held``) are written, one number at a time. Called
    at every resume (a game resumes at each outside decision), the whole copy of the
    parameter rows cost many times what writing only the changed seats costs (docs/speed.md)."""
    for seat in range(dispatch.players):
        spec = dispatch.seat_specs[game, seat]
        if held[seat] != spec:
            held[seat] = spec
            seats.functions[seat] = dispatch.functions[spec]
            for slot in range(seats.params.shape[1]):
                seats.params[seat, slot] = dispatch.params[spec, slot]
