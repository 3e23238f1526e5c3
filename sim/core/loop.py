"""The game loop, compiled around one strategy dispatcher: turns, rounds, whole games, and
games that pause for the caller.

Every rule the loop applies is a function of ``sim.core.engine`` (deal, placement,
settlement, a turn's outcome, a round's and a game's accounting); this module only orders
them. One loop serves both ways of playing: ``advance_game`` plays a game until it waits for
an outside seat (a ``sim.kernels.batch.GameBatch``), a deal or a draw given from outside,
or ends; ``play_game`` (``sniff simulate``) is the same call with no outside seat, so it never
waits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import observation as obs_slots
from sim.core import record
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
    MAX_MOVES,
    MAX_PLAYERS,
    NEXT_LEADER,
    NEXT_ROUND,
    NO_MOVE,
    OUTSIDE,
    PAUSE,
    PAUSED,
    PLAYERS,
    RECORD,
    ROUND,
    ROUND_DECISIONS,
    ROUND_DRAWS,
    ROUND_FIELDS,
    STATE_SIZE,
    STREAMS,
    TURN_SEAT,
    WAIT_DEAL,
    WAIT_DRAW,
    WAIT_FORCED,
    WAIT_MOVE,
    WAIT_NONE,
    WAIT_ROOM,
    WAITING,
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
    from outside, so that the loop that never pauses pays nothing for them.
    """

    # The turn loop runs without numba's reference counting (_nrt=False): it allocates
    # nothing, and the atomic increments numba otherwise wraps round every inlined call with
    # an array argument measured as 40% of the engine's time. Strategies that allocate
    # (rollout) are separate functions compiled with reference counting as usual.
    @njit(inline="always", _nrt=False)
    def choose(
        state, seat, forced, moves, n_moves, seat_functions, seat_params, observation, rng
    ):
        """Ask the seat's strategy for one of the legal moves; a single move needs no asking.

        The strategy sees only its public view, its legal moves (every other slot of the
        buffer holds ``NO_MOVE``: the buffer is shared by all seats, so it is cleared after
        each use) and its own seat's random stream, swapped in and out of ``rng`` so that
        no seat's draws show or shift another's. An index out of range is recorded in
        ``BAD_CHOICE`` (the runner stops the run naming the strategy) and the first move
        is played so that the game can finish. An ``OUTSIDE`` seat is not asked: the game
        records what it waits for and the turn returns ``PAUSE``.
        """
        if n_moves == 1:
            move = moves[0]
            moves[0] = NO_MOVE
            return move
        function = seat_functions[seat]
        if pausing and function == OUTSIDE:
            state[WAITING] = WAIT_FORCED if forced else WAIT_MOVE
            state[TURN_SEAT] = seat
            for slot in range(n_moves):
                moves[slot] = NO_MOVE
            return PAUSE
        fill_observation(state, seat, forced, observation)
        rng[0] = np.uint64(state[STREAMS + seat])
        index = choose_move(function, observation, moves, n_moves, seat_params[seat], rng)
        state[STREAMS + seat] = np.int64(rng[0])
        if index < 0 or index >= n_moves:
            if state[BAD_CHOICE] == 0:
                state[BAD_CHOICE] = seat + 1
            index = 0
        move = moves[index]
        for slot in range(n_moves):
            moves[slot] = NO_MOVE
        return move

    @njit(inline="always", _nrt=False)
    def take_turn(
        state, seat, forced_lead, free_draws, seat_functions, seat_params, moves, observation,
        rng, round_row, events,
    ):
        """The move of ``seat``'s turn and its record kind: a placement, -1 (a pass) or
        ``PAUSE`` (the game waits: an outside seat's choice, or the caller's next draw;
        ``free_draws`` 1 draws the first tile without waiting, the caller named it)."""
        layout = state[LAYOUT]
        if layout == EMPTY_LAYOUT and forced_lead >= 0:
            return forced_lead * 4 + ARM_L, record.PLACE_FORCED
        n_moves = legal_moves(layout, state[HANDS + seat], moves)
        if n_moves > 1:
            round_row[ROUND_DECISIONS] += 1
        if n_moves > 0:
            move = choose(
                state, seat, 0, moves, n_moves, seat_functions, seat_params, observation, rng
            )
            return move, record.PLACE_CHOSEN
        if state[BONEYARD_POS] < N_TILES:
            # No legal placement: draw one tile at a time until one fits.
            state[LACKS + seat] = open_values_mask(layout)
            while state[BONEYARD_POS] < N_TILES:
                if pausing and state[EXTERNAL] != 0:
                    if free_draws == 0:
                        state[WAITING] = WAIT_DRAW
                        state[TURN_SEAT] = seat
                        return PAUSE, record.PLACE_FORCED
                    free_draws = 0
                tile = state[DECK + state[BONEYARD_POS]]
                state[BONEYARD_POS] += 1
                state[HANDS + seat] |= 1 << tile
                round_row[ROUND_DRAWS] += 1
                record_event(events, state, EVENT_DRAW, seat, tile, -1, 0, 0)
                record.append(state, RECORD, record.DRAW, seat, 0)
                n_moves = tile_moves(layout, tile, moves)
                if n_moves > 1:
                    round_row[ROUND_DECISIONS] += 1
                if n_moves > 0:
                    # A playable drawn tile must be played at once (any end it fits).
                    move = choose(
                        state, seat, 1, moves, n_moves, seat_functions, seat_params,
                        observation, rng,
                    )
                    return move, record.PLACE_FORCED
        return NO_MOVE, record.PLACE_CHOSEN

    @njit(_nrt=False)
    def play_turns(
        state, seat, forced_lead, seat_functions, seat_params, moves, observation, rng,
        round_row, events,
    ):
        """Play turns from ``seat`` until the round ends; return its END_* reason, or
        ``PAUSED`` when the game waits for the caller (``state[WAITING]`` says for what).

        Also the entry point for look-ahead strategies: they build a state consistent with
        what their player knows, place a candidate, and play the rest of the round from here.
        """
        players = state[PLAYERS]
        while True:
            move, kind = take_turn(
                state, seat, forced_lead, 0, seat_functions, seat_params, moves, observation,
                rng, round_row, events,
            )
            if move == PAUSE:
                return PAUSED
            reason = finish_turn(state, seat, move, kind, round_row, events)
            if reason >= 0:
                return reason
            seat += 1
            if seat == players:
                seat = 0

    @njit(_nrt=False)
    def resume_turns(
        state, answer, forced_lead, seat_functions, seat_params, moves, observation, rng,
        round_row, events,
    ):
        """Go on with a round that waits: ``answer`` is the outside seat's move, or for
        ``WAIT_DRAW`` nothing (the caller put the named tile next in ``DECK``)."""
        seat = state[TURN_SEAT]
        waiting = state[WAITING]
        state[WAITING] = WAIT_NONE
        move = answer
        kind = record.PLACE_FORCED if waiting == WAIT_FORCED else record.PLACE_CHOSEN
        if waiting == WAIT_DRAW:
            move, kind = take_turn(
                state, seat, forced_lead, 1, seat_functions, seat_params, moves, observation,
                rng, round_row, events,
            )
            if move == PAUSE:
                return PAUSED
        reason = finish_turn(state, seat, move, kind, round_row, events)
        if reason >= 0:
            return reason
        return play_turns(
            state, (seat + 1) % state[PLAYERS], forced_lead, seat_functions, seat_params,
            moves, observation, rng, round_row, events,
        )

    @njit(_nrt=False)
    def play_round(
        state, leader, forced_lead, seat_functions, seat_params, moves, observation, rng,
        round_row, events,
    ):
        """Play one round from a fresh deal; return its END_* reason.

        The round row gets the round's statistics; the game is over when END_TARGET is returned.
        """
        open_round(state, leader, round_row, events)
        return play_turns(
            state, leader, forced_lead, seat_functions, seat_params, moves, observation, rng,
            round_row, events,
        )

    @njit(inline="always", _nrt=False)
    def _first_turns(state, leader, game_results, game, forced_lead, seat_functions,
                     seat_params, moves, observation, rng, round_row, events):
        """A dealt round played from its leader (until it ends or waits)."""
        if state[ROUND] == 1:
            game_results[game, GAME_FIRST_LEADER] = leader
        return play_round(
            state, leader, forced_lead if state[ROUND] == 1 else -1, seat_functions,
            seat_params, moves, observation, rng, round_row, events,
        )

    @njit(_nrt=False)
    def advance_game(
        state, answer, seed, deal_id, round_cap, forced_lead, seat_functions, seat_params,
        moves, observation, rng, deal_rng, round_row, game_results, round_results, game,
        events, wait_for_room,
    ):
        """Play a game on until it waits for the caller (``state[WAITING]``) or ends.

        The one game loop: ``play_game`` runs a whole game through it, ``sim.kernels.batch``
        resumes its paused games with it (``answer``: the waiting seat's move). A game with
        ``wait_for_room`` waits for room (``WAIT_ROOM``) instead of dropping rounds past its slots.
        """
        waiting = state[WAITING]
        round_lead = forced_lead if state[ROUND] == 1 else -1
        if waiting == WAIT_NONE or waiting == WAIT_ROOM:
            state[WAITING] = WAIT_NONE
            reason = NEXT_ROUND
        elif waiting == WAIT_DEAL:
            # The caller wrote the deck into DECK and the leader into NEXT_LEADER.
            state[WAITING] = WAIT_NONE
            leader = state[NEXT_LEADER]
            deal_hands(state, state[ROUND] + 1, leader)
            reason = _first_turns(state, leader, game_results, game, forced_lead,
                                  seat_functions, seat_params, moves, observation, rng,
                                  round_row, events)
        else:
            reason = resume_turns(state, answer, round_lead, seat_functions, seat_params, moves,
                                  observation, rng, round_row, events)
        while reason != PAUSED:
            if reason != NEXT_ROUND and end_round(state, reason, round_row, game_results,
                                                  round_results, game):
                break
            if state[ROUND] >= round_cap:
                break
            if wait_for_room and state[ROUND] >= round_results.shape[1]:
                state[WAITING] = WAIT_ROOM
                return
            if state[EXTERNAL] != 0:
                state[WAITING] = WAIT_DEAL
                state[TURN_SEAT] = -1
                return
            round_number = state[ROUND] + 1
            leader = deal_round(state, seed, deal_id, round_number, forced_lead,
                                state[NEXT_LEADER], deal_rng)
            reason = _first_turns(state, leader, game_results, game, forced_lead,
                                  seat_functions, seat_params, moves, observation, rng,
                                  round_row, events)
        if reason != PAUSED:
            end_game(state, game_results, game, events)

    @njit(_nrt=False)
    def play_game(
        state, seed, deal_id, game_id, players, round_cap, forced_lead, seat_functions,
        seat_params, moves, observation, rng, deal_rng, round_row, game_results, round_results,
        game, events,
    ):
        """Play one whole game: rounds until a team reaches the target or ``round_cap`` rounds.

        Its result goes to row ``game`` of ``game_results``; its rounds to ``round_results[game]``
        (rounds beyond that row's slots are not stored: the caller replays such long games
        with room for them).
        """
        start_game(state, seed, game_id, players, 0, game_results, game)
        advance_game(
            state, -1, seed, deal_id, round_cap, forced_lead, seat_functions, seat_params,
            moves, observation, rng, deal_rng, round_row, game_results, round_results, game,
            events, False,
        )

    @njit
    def play_block(
        first, last, seed, deal_ids, game_ids, seat_specs, spec_functions, spec_params, players,
        round_cap, forced_leads, game_results, round_results, events,
    ):
        """Play games ``first..last-1`` of a batch with one set of scratch arrays."""
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        moves = np.full(MAX_MOVES, NO_MOVE, dtype=np.int64)
        observation = np.zeros(obs_slots.OBSERVATION_SIZE, dtype=np.int64)
        rng = np.zeros(1, dtype=np.uint64)
        deal_rng = np.zeros(1, dtype=np.uint64)
        round_row = np.zeros(ROUND_FIELDS, dtype=np.int64)
        seat_functions = np.zeros(MAX_PLAYERS, dtype=np.int64)
        seat_params = np.zeros((MAX_PLAYERS, spec_params.shape[1]), dtype=np.float64)
        for game in range(first, last):
            for seat in range(players):
                spec = seat_specs[game, seat]
                seat_functions[seat] = spec_functions[spec]
                seat_params[seat, :] = spec_params[spec]
            play_game(
                state, seed, deal_ids[game], game_ids[game], players, round_cap,
                forced_leads[game], seat_functions, seat_params, moves, observation, rng, deal_rng,
                round_row, game_results, round_results, game, events,
            )

    @njit
    def advance_block(
        games, answers, seed, deal_ids, seat_specs, spec_functions, spec_params, players,
        round_cap, forced_leads, states, round_rows, game_results, round_results, events,
    ):
        """Advance the batch's games ``games`` (indexes), each with its ``answers`` entry.

        Every game keeps its whole progress in its own rows (``states``, ``round_rows``), so
        a game may be resumed by any thread in any later call. ``events`` (rows only for a
        batch of one game, ``sniff play``) receives the game's trace rows as it goes.
        """
        moves = np.full(MAX_MOVES, NO_MOVE, dtype=np.int64)
        observation = np.zeros(obs_slots.OBSERVATION_SIZE, dtype=np.int64)
        rng = np.zeros(1, dtype=np.uint64)
        deal_rng = np.zeros(1, dtype=np.uint64)
        seat_functions = np.zeros(MAX_PLAYERS, dtype=np.int64)
        seat_params = np.zeros((MAX_PLAYERS, spec_params.shape[1]), dtype=np.float64)
        for index in range(games.shape[0]):
            game = games[index]
            for seat in range(players):
                spec = seat_specs[game, seat]
                seat_functions[seat] = spec_functions[spec]
                seat_params[seat, :] = spec_params[spec]
            advance_game(
                states[game], answers[index], seed, deal_ids[game], round_cap,
                forced_leads[game], seat_functions, seat_params, moves, observation, rng,
                deal_rng, round_rows[game], game_results, round_results, game, events, True,
            )

    # numba names a compiled closure by its qualified name plus a counter that restarts in
    # every process, so kernels compiled in different processes would export the same
    # symbols, and a process loading two of them from the cache would run the first one's
    # loop for both. The dispatcher's module (one per kernel) makes the names unique.
    owner = getattr(choose_move, "py_func", choose_move).__module__
    functions = {
        "play_round": play_round, "play_turns": play_turns, "play_game": play_game,
        "play_block": play_block, "resume_turns": resume_turns, "advance_game": advance_game,
        "advance_block": advance_block,
    }
    for function in functions.values():
        function.py_func.__qualname__ += f"[{owner}{':' + tag if tag else ''}]"
    return functions
