"""``rollout``: Monte Carlo look-ahead over determinized deals — the strong reference player.

For each sample it deals the hidden tiles one way that agrees with everything public
(determinization): the other hands get tiles of their known sizes, never showing a value
that seat is known to lack, and the rest of the unseen tiles form a shuffled boneyard.
On that deal every candidate move is placed and the round is played out to its end by the
compiled engine (``sim.engine.make_game_player``) with a simple base policy in every
seat. A candidate's outcome is the points its side gains minus the points the other sides
gain (the mean of them, with 3 players), settlement included, plus ``win`` when its side
reaches the target (minus ``win`` when another does). All candidates are played on the
same deals with the same random numbers (common random numbers), so their difference is
measured with much less noise than their level; the best mean outcome is chosen.

A tile just drawn (which must be placed, only its end is free) is placed greedily, and a
single legal move is not even asked for (the engine plays it).

Parameters: ``samples`` (default 32, 1..100000): determinized deals per decision; ``base`` (default
``greedy``; ``random``, ``heavy``): the policy that plays the rounds out; ``win`` (default
50): points a game won inside the round is worth on top of its points.

Sampling is sequential (the most constrained seat first, with retries) rather than exactly
uniform over every consistent deal; it never gives a seat a value it is known to lack.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim import engine
from sim import observation as view
from sim.layout import bit_index, popcount
from sim.rng import next_random
from sim.tiles import N_TILES
from strategies import MAX_PARAMS, register
from strategies.determinize import copy_public, pick_tiles
from strategies.features import tiles_with_values, unseen_tiles
from strategies.greedy import choose_greedy
from strategies.heavy import choose_heavy
from strategies.random import choose_random

BASE_POLICIES = ("greedy", "random", "heavy")
DEAL_ATTEMPTS = 20


@njit(inline="always")
def choose_base(function, observation, moves, n_moves, params, rng):
    """Dispatcher of the base policies, in ``BASE_POLICIES`` order."""
    if function == 1:
        return choose_random(observation, moves, n_moves, params, rng)
    if function == 2:
        return choose_heavy(observation, moves, n_moves, params, rng)
    return choose_greedy(observation, moves, n_moves, params, rng)


# The engine's own turn loop, compiled around the base policies: rollouts follow exactly
# the rules the real games follow.
_, _, play_out = engine.make_game_player(choose_base)


@njit
def deal_hidden(observation, state, rng) -> bool:
    """Fill ``state`` with a full engine state that agrees with ``observation``.

    Own hand, table, scores and public facts are copied; the unseen tiles are dealt to the
    other seats (their known hand sizes, no tile showing a value the seat is known to
    lack) and the rest shuffled into the boneyard. Returns False if no such deal was found
    in ``DEAL_ATTEMPTS`` tries, in which case the lacks are ignored. That is a fallback,
    not the rule: the true deal always exists, the most constrained seat is dealt first,
    and the tests find a consistent deal at every decision they rebuild.
    """
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    copy_public(observation, state)
    unseen = unseen_tiles(observation)
    remaining = unseen
    consistent = False
    for _ in range(DEAL_ATTEMPTS):
        remaining = unseen
        dealt = 1 << seat
        consistent = True
        for _ in range(players - 1):
            # The seat with the least room to spare goes first.
            chosen = -1
            chosen_slack = N_TILES + 1
            for other in range(players):
                if not (dealt >> other) & 1:
                    allowed = remaining & ~tiles_with_values(observation[view.LACKS + other])
                    slack = popcount(allowed) - observation[view.HAND_SIZE + other]
                    if slack < chosen_slack:
                        chosen = other
                        chosen_slack = slack
            if chosen_slack < 0:
                consistent = False
                break
            allowed = remaining & ~tiles_with_values(observation[view.LACKS + chosen])
            hand = pick_tiles(allowed, observation[view.HAND_SIZE + chosen], rng)
            state[engine.HANDS + chosen] = hand
            remaining &= ~hand
            dealt |= 1 << chosen
        if consistent:
            break
    if not consistent:
        remaining = unseen
        for other in range(players):
            if other != seat:
                hand = pick_tiles(remaining, observation[view.HAND_SIZE + other], rng)
                state[engine.HANDS + other] = hand
                remaining &= ~hand
    position = N_TILES - popcount(remaining)
    state[engine.BONEYARD_POS] = position
    for index in range(position, N_TILES):
        bit = pick_tiles(remaining, 1, rng)
        remaining ^= bit
        state[engine.DECK + index] = bit_index(bit)
    return consistent


@njit
def play_candidate(
    state, sampled, seat, move, win, seat_functions, seat_params, moves, observation, rng,
    round_row, events,
) -> float:
    """Place ``move`` for ``seat`` on a copy of the deal ``sampled``, play the round out.

    Returns its side's points gained minus the other sides' (mean), settlement included,
    plus or minus ``win`` if a side reached the target.
    """
    state[:] = sampled
    players = state[engine.PLAYERS]
    team = view.team_of(seat, players)
    teams = view.team_count(players)
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
    others = 0.0
    for other in range(teams):
        if other != team:
            others += state[engine.SCORES + other] - sampled[engine.SCORES + other]
    value = (state[engine.SCORES + team] - sampled[engine.SCORES + team]) - others / (teams - 1)
    winner = state[engine.WINNER_TEAM]
    if winner >= 0:
        value += win if winner == team else -win
    return value


@register(
    "rollout",
    "Monte Carlo look-ahead: play each move out on sampled deals, best mean outcome",
    params={"samples": 32, "base": "greedy", "win": 50.0},
    choices={"base": BASE_POLICIES},
    bounds={"samples": (1, 100_000)},
)
# It allocates its scratch arrays, so it asks for reference counting explicitly: the
# engine's turn loop that calls it is compiled without (and callees inherit that).
@njit(_nrt=True)
def choose_rollout(observation, moves, n_moves, params, rng):
    if observation[view.FORCED] == 1:
        return choose_greedy(observation, moves, n_moves, params, rng)
    samples = max(1, np.int64(params[0]))
    base = np.int64(params[1])
    win = params[2]
    seat = observation[view.SEAT]
    sampled = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    play_moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    play_observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
    seat_functions = np.full(engine.MAX_PLAYERS, base, dtype=np.int64)
    seat_params = np.zeros((engine.MAX_PLAYERS, MAX_PARAMS), dtype=np.float64)
    play_rng = np.zeros(1, dtype=np.uint64)
    totals = np.zeros(n_moves, dtype=np.float64)
    for _ in range(samples):
        deal_hidden(observation, sampled, rng)
        # Every candidate meets this deal and these streams (copied with the deal):
        # common random numbers.
        for other in range(engine.MAX_PLAYERS):
            sampled[engine.STREAMS + other] = np.int64(next_random(rng))
        for index in range(n_moves):
            totals[index] += play_candidate(
                state, sampled, seat, moves[index], win, seat_functions, seat_params,
                play_moves, play_observation, play_rng, round_row, events,
            )
    best = 0
    for index in range(1, n_moves):
        if totals[index] > totals[best]:
            best = index
    return best
