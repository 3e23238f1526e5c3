"""``rollout``: Monte Carlo look-ahead over determinized deals — the strong reference player.

For each sample it deals the hidden tiles one way that agrees with everything public
(determinization): the other hands get tiles of their known sizes, never showing a value
that seat is known to lack, and the rest of the unseen tiles form a shuffled boneyard.
On that deal every candidate move is placed and the round is played out to its end by the
compiled engine (``sim.core.loop.make_game_player``) with a simple base policy in every
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

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import popcount
from sim.core.tiles import N_TILES
from strategies import register
from strategies.heuristics.features import tiles_with_values, unseen_tiles
from strategies.heuristics.greedy import choose_greedy
from strategies.search.determinize import copy_public, pick_tiles, shuffle_boneyard
from strategies.search.playout import POLICIES, give_streams, play_round_from, playout_buffers

__all__ = ["choose_rollout"]

BASE_POLICIES = ("greedy", "random", "heavy")
# The play-out policy (``strategies.search.playout``) of each base policy.
BASE_POLICY_IDS = np.array([POLICIES.index(name) for name in BASE_POLICIES], dtype=np.int64)
DEAL_ATTEMPTS = 20


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
    shuffle_boneyard(remaining, state, rng)
    return consistent


@njit
def play_candidate(state, sampled, seat, move, win, seats, log) -> float:
    """Place ``move`` for ``seat`` on a copy of the deal ``sampled``, play the round out
    (``seats``, ``log``: ``strategies.search.playout.playout_buffers``).

    Returns its side's points gained minus the other sides' (mean), settlement included,
    plus or minus ``win`` if a side reached the target.
    """
    play_round_from(state, sampled, seat, move, seats, log)
    players = state[engine.PLAYERS]
    team = view.team_of(seat, players)
    teams = view.team_count(players)
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
@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def choose_rollout(observation, moves, n_moves, params, rng):
    if observation[view.FORCED] == 1:
        return choose_greedy(observation, moves, n_moves, params, rng)
    samples = max(1, np.int64(params[0]))
    base = np.int64(params[1])
    win = params[2]
    seat = observation[view.SEAT]
    sampled = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    state, seats, log = playout_buffers(BASE_POLICY_IDS[base])
    totals = np.zeros(n_moves, dtype=np.float64)
    for _ in range(samples):
        deal_hidden(observation, sampled, rng)
        give_streams(sampled, rng)
        for index in range(n_moves):
            totals[index] += play_candidate(state, sampled, seat, moves[index], win, seats, log)
    best = 0
    for index in range(1, n_moves):
        if totals[index] > totals[best]:
            best = index
    return best
