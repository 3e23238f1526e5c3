"""The one-game-at-a-time contenders of ``scripts/ceiling.py``: 4-player greedy games on the
full rules, written for raw speed (one loop per design), and the pieces every contender shares
(the deal, greedy's move searches, the game row's fill).

Its figures feed docs/speed.md (the ceiling; run through scripts/ceiling.py). Each plays the
same deals as the engine (the same ``sim.core.rng`` streams and shuffle); ``scripts/ceiling.py``
checks that they give the same games and times them. The lockstep contender and the
deal-only baseline are in ``ceiling_lockstep.py``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import (
    ARM_BITS,
    ARM_COUNT,
    ARM_FITS,
    ARM_SNIFF,
    ARM_VALUE,
    MOVE_OF_BIT,
    POINTS_FOR_COUNT,
    bit_index,
    can_play,
    count_ends,
    legal_moves,
    move_points,
    open_values_mask,
    place_tile,
    popcount,
)
from sim.core.rng import GOLDEN, SALT_DEAL, mix64, seed_word, stream_key
from sim.core.tiles import N_TILES, TILE_HIGH, TILE_LOW, TILE_PIPS
from strategies.heuristics.greedy import choose_greedy
from strategies.heuristics.random import choose_random

TARGET = 200
HAND = 5
U32 = np.uint64(32)

# The columns of the engine's game rows that every prototype fills and the check compares.
CHECKED = {
    "first_leader": engine.GAME_FIRST_LEADER, "winner": engine.GAME_WINNER_TEAM,
    "rounds": engine.GAME_ROUNDS, "placements": engine.GAME_PLACEMENTS,
    "draws": engine.GAME_DRAWS, "cap_hit": engine.GAME_CAP_HIT,
    "score_0": engine.GAME_SCORES, "score_1": engine.GAME_SCORES + 1,
    "decisions": engine.GAME_DECISIONS,
}


def _new_arm_count(field: int, tile: int) -> int:
    """What an arm adds to the count once ``tile`` is placed on it, for an arm that does not
    end in the Sniff (only such a placement changes one arm alone): the other half becomes
    the open end, a double doubles it (a later double, or the Sniff itself)."""
    value = field & ARM_VALUE
    if value not in (TILE_LOW[tile], TILE_HIGH[tile]):
        return 0  # does not fit (the dense search reads it, masked out)
    outer = int(TILE_PIPS[tile]) - value
    return 2 * outer if outer == value else outer


# NEW_ARM_COUNT[field * 32 + tile]: read only for tiles that fit the arm.
NEW_ARM_COUNT = np.array(
    [_new_arm_count(f, t) if t < N_TILES else 0 for f in range(ARM_BITS + 1) for t in range(32)],
    dtype=np.int64,
)
# The key greedy maximises (points now * 16 + pips) of each possible opening tile.
OPEN_KEY = np.array([POINTS_FOR_COUNT[p] * 16 + p for p in TILE_PIPS], dtype=np.int64)


@njit(inline="always")
def deal(seed, game_id, round_number, deck, hands, players):
    """The engine's deal (``engine.deal_round``): 27-swap shuffle, then one leader draw."""
    z = stream_key(seed, game_id, round_number, SALT_DEAL)
    for index in range(N_TILES):
        deck[index] = index
    for index in range(N_TILES - 1, 0, -1):
        z += GOLDEN
        other = np.int64(((mix64(z) >> U32) * np.uint64(index + 1)) >> U32)
        held = deck[index]
        deck[index] = deck[other]
        deck[other] = held
    z += GOLDEN
    drawn = np.int64(((mix64(z) >> U32) * np.uint64(players)) >> U32)
    size = engine.HAND_SIZE_FOR_PLAYERS[players]
    for seat in range(players):
        hand = 0
        for index in range(seat * size, seat * size + size):
            hand |= 1 << deck[index]
        hands[seat] = hand
    return drawn


@njit(inline="always")
def greedy_opening(hand):
    """Greedy's opening tile (arm L): the count after it is the tile's pips."""
    best, best_key, n_moves = -1, -1, 0
    while hand:
        tile = bit_index(hand)
        n_moves += 1
        if OPEN_KEY[tile] > best_key:
            best, best_key = tile * 4, OPEN_KEY[tile]
        hand &= hand - 1
    return best, n_moves


@njit(inline="always")
def greedy_bits(layout, hand):
    """Greedy's move straight from the legal-move bits: (move or -1, number of moves)."""
    if layout == 0:
        return greedy_opening(hand)
    best, best_key, n_moves = -1, -1, 0
    for pair in range(2):
        shift = 16 * pair
        rest = (hand & ARM_FITS[(layout >> shift) & ARM_BITS]) | (
            (hand & ARM_FITS[(layout >> (shift + 8)) & ARM_BITS]) << 28
        )
        while rest:
            move = MOVE_OF_BIT[bit_index(rest)] + 2 * pair
            key = move_points(layout, move) * 16 + TILE_PIPS[move >> 2]
            n_moves += 1
            if key > best_key:
                best, best_key = move, key
            rest &= rest - 1
    return best, n_moves


@njit(inline="always")
def greedy_tight(layout, hand):
    """``greedy_bits`` with each move's count as the layout's count less the arm's old share
    plus its new one (one table read), except on an arm ending in the Sniff."""
    if layout == 0:
        return greedy_opening(hand)
    best, best_key, n_moves = -1, -1, 0
    count = count_ends(layout)
    for arm in range(4):
        field = (layout >> (8 * arm)) & ARM_BITS
        rest = hand & ARM_FITS[field]
        base = count - ARM_COUNT[field]
        row = field * 32
        while rest:
            tile = bit_index(rest)
            if field & ARM_SNIFF:  # a placement there may open the branches
                key = move_points(layout, tile * 4 + arm) * 16 + TILE_PIPS[tile]
            else:
                key = POINTS_FOR_COUNT[base + NEW_ARM_COUNT[row + tile]] * 16 + TILE_PIPS[tile]
            n_moves += 1
            if key > best_key:
                best, best_key = tile * 4 + arm, key
            rest &= rest - 1
    return best, n_moves


@njit(inline="always")
def greedy_dense(layout, hand):
    """``greedy_tight`` branch-free over all 4 x 28 (arm, tile) slots, masked by legality: the
    work one game would take in a SIMD lane, where every lane must run the same steps."""
    if layout == 0:
        return greedy_opening(hand)
    count = count_ends(layout)
    best = np.int64(-1)
    n_moves = 0
    for arm in range(4):
        field = (layout >> (8 * arm)) & ARM_BITS
        fits = hand & ARM_FITS[field]
        n_moves += popcount(fits)
        if field & ARM_SNIFF:
            rest = fits
            while rest:
                tile = bit_index(rest)
                key = move_points(layout, tile * 4 + arm) * 16 + TILE_PIPS[tile]
                best = max(best, (key << 8) | (255 - arm * 28 - tile))
                rest &= rest - 1
            continue
        base = count - ARM_COUNT[field]
        row = field * 32
        for tile in range(N_TILES):
            key = POINTS_FOR_COUNT[base + NEW_ARM_COUNT[row + tile]] * 16 + TILE_PIPS[tile]
            ranked = (key << 8) | (255 - arm * 28 - tile)
            legal = -((fits >> tile) & 1)  # all ones when legal
            best = max(best, (ranked & legal) | ~legal)
    if n_moves == 0:
        return -1, 0
    order = 255 - (best & 255)
    return (order % 28) * 4 + order // 28, n_moves


@njit(inline="always")
def finish(out, game, winner, rounds, placements, draws, score_0, score_1, decisions):
    """A game's row, in the engine's ``GAME_*`` columns."""
    out[game, engine.GAME_WINNER_TEAM] = winner
    out[game, engine.GAME_ROUNDS] = rounds
    out[game, engine.GAME_PLACEMENTS] = placements
    out[game, engine.GAME_DRAWS] = draws
    out[game, engine.GAME_CAP_HIT] = winner < 0
    out[game, engine.GAME_SCORES] = score_0
    out[game, engine.GAME_SCORES + 1] = score_1
    out[game, engine.GAME_DECISIONS] = decisions


@njit(inline="always")
def hand_pips(hand):
    total = 0
    while hand:
        total += TILE_PIPS[bit_index(hand)]
        hand &= hand - 1
    return total


# The engine's deal is a call, not inlined.
deal_call = njit(deal.py_func)


def make_player(generic: bool, stateful: bool, rows: bool, observe: bool, buffered: bool,
                search: int):
    """A single-game loop; the flags are compile-time constants (dead branches vanish).
    ``search`` (without the moves buffer): 0 ``greedy_bits``, 1 ``greedy_tight``, 2
    ``greedy_dense``. ``generic``: the player count a run-time value and the strategy
    chosen by a dispatch on the seat's strategy id, as in the engine (greedy or random)."""

    @njit(inline="always", _nrt=False)
    def choose(layout, hand, seat, pos, scores, hands, book, moves, observation, params, rng):
        if not buffered:
            if search == 1:
                return greedy_tight(layout, hand)
            if search == 2:
                return greedy_dense(layout, hand)
            return greedy_bits(layout, hand)
        n_moves = legal_moves(layout, hand, moves)
        if n_moves == 0:
            return -1, 0
        if n_moves == 1:
            move = moves[0]
            moves[0] = engine.NO_MOVE
            return move, 1
        if observe:
            observation[view.SEAT] = seat
            observation[view.PLAYERS] = 4
            observation[view.HAND] = hand
            observation[view.LAYOUT] = layout
            observation[view.BONEYARD_SIZE] = N_TILES - pos
            observation[view.PLAYED] = book[engine.PLAYED]
            observation[view.TARGET] = TARGET
            observation[view.ROUND] = 1
            observation[view.FORCED] = 0
            observation[view.LEADER] = 0
            for team in range(4):
                observation[view.SCORE + team] = scores[team] if team < 2 else 0
            for other in range(4):
                observation[view.HAND_SIZE + other] = popcount(hands[other])
                observation[view.LACKS + other] = book[engine.LACKS + other]
            if stateful:
                rng[0] = np.uint64(book[engine.STREAMS + seat])
        else:
            observation[view.LAYOUT] = layout
        if generic and book[engine.DECK + (seat & 3)] == 1:  # the seat's strategy id
            index = choose_random(observation, moves, n_moves, params, rng)
        else:
            index = choose_greedy(observation, moves, n_moves, params, rng)
        if stateful:
            book[engine.STREAMS + seat] = np.int64(rng[0])
            if index < 0 or index >= n_moves:
                book[engine.BAD_CHOICE] = seat + 1
        move = moves[index]
        for slot in range(n_moves):
            moves[slot] = engine.NO_MOVE
        return move, n_moves

    @njit(_nrt=False)
    def play_games(seed, game_ids, round_cap, out, deck, hands, scores, book, moves,
                   observation, params, rng, round_row, round_out, players):
        if not generic:
            players = 4
        for game in range(game_ids.shape[0]):
            game_id = game_ids[game]
            scores[0] = 0
            scores[1] = 0
            leader = -1
            placements = draws = decisions = 0
            winner = -1
            round_number = 0
            while round_number < round_cap:
                round_number += 1
                if generic:
                    drawn = deal_call(seed, game_id, round_number, deck, hands, players)
                else:
                    drawn = deal(seed, game_id, round_number, deck, hands, 4)
                if leader < 0:
                    leader = drawn
                if round_number == 1:
                    out[game, engine.GAME_FIRST_LEADER] = leader
                if rows:
                    for field in range(engine.ROUND_FIELDS):
                        round_row[field] = 0
                    round_row[engine.ROUND_LEADER] = leader
                pos = 4 * HAND
                layout = 0
                seat = leader
                if stateful:
                    for slot in range(4):
                        book[engine.LACKS + slot] = 0
                    book[engine.LAYOUT] = book[engine.PLAYED] = 0
                    book[engine.BONEYARD_POS] = pos
                while True:
                    if stateful:  # the engine keeps its state in an array, read every turn
                        layout = book[engine.LAYOUT]
                        pos = book[engine.BONEYARD_POS]
                    hand = hands[seat]
                    move, n_moves = choose(layout, hand, seat, pos, scores, hands, book,
                                           moves, observation, params, rng)
                    if n_moves == 0:
                        while pos < N_TILES:
                            tile = deck[pos]
                            pos += 1
                            hand |= 1 << tile
                            draws += 1
                            if rows:
                                round_row[engine.ROUND_DRAWS] += 1
                            move, n_moves = choose(layout, 1 << tile, seat, pos, scores,
                                                   hands, book, moves, observation, params, rng)
                            if n_moves:
                                break
                        hands[seat] = hand
                        if stateful:
                            book[engine.BONEYARD_POS] = pos
                            book[engine.LACKS + seat] = open_values_mask(layout)
                    decisions += n_moves > 1
                    if rows:
                        round_row[engine.ROUND_DECISIONS] += n_moves > 1
                    if move >= 0:
                        tile = move >> 2
                        layout = place_tile(layout, tile, move & 3)
                        hand &= ~(1 << tile)
                        hands[seat] = hand
                        placements += 1
                        if stateful:
                            book[engine.LAYOUT] = layout
                            book[engine.PLAYED] |= 1 << tile
                        team = seat % 2 if players == 4 else seat
                        scores[team] += POINTS_FOR_COUNT[count_ends(layout)]
                        if rows:
                            round_row[engine.ROUND_PLACEMENTS] += 1
                            round_row[engine.ROUND_POINTS + team] += POINTS_FOR_COUNT[
                                count_ends(layout)]
                        if scores[team] >= TARGET:
                            winner = team
                            break
                        if hand == 0:
                            break
                    else:
                        if stateful:
                            book[engine.LACKS + seat] |= open_values_mask(layout)
                        if rows:
                            round_row[engine.ROUND_PASSES] += 1
                        blocked = True
                        for other in range(players):
                            if can_play(layout, hands[other]):
                                blocked = False
                        if blocked:
                            break
                    seat += 1
                    if seat == players:
                        seat = 0
                if rows:
                    for field in range(engine.ROUND_FIELDS):
                        round_out[(8 * game + round_number) & 255, field] = round_row[field]
                if winner >= 0:
                    break
                for other in range(players):
                    penalty = ((hand_pips(hands[other]) + 2) // 5) * 5
                    scores[other % 2 if players == 4 else other] -= penalty
                    if rows:
                        round_row[engine.ROUND_PENALTY + other] = penalty
                leader = seat if move >= 0 else -1
            finish(out, game, winner, round_number, placements, draws, scores[0], scores[1],
                   decisions)

    def run(seed, game_ids, round_cap):
        out = np.zeros((game_ids.shape[0], engine.GAME_FIELDS), dtype=np.int64)
        play_games(
            seed_word(seed), game_ids, round_cap, out, np.zeros(N_TILES, np.int64),
            np.zeros(4, np.int64), np.zeros(2, np.int64), np.zeros(engine.STATE_SIZE, np.int64),
            np.full(engine.MAX_MOVES, engine.NO_MOVE, np.int64),
            np.zeros(view.OBSERVATION_SIZE, np.int64), np.zeros(4, np.float64),
            np.zeros(1, np.uint64),
            np.zeros(engine.ROUND_FIELDS, np.int64), np.zeros((256, engine.ROUND_FIELDS), np.int32),
            4,
        )
        return out

    return run
