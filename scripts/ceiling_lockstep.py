"""The block contenders of ``scripts/ceiling.py``: lockstep (64 games per thread stepped
together, one turn of each per step) and the deal-only baseline (just the shuffles and leader
draws of the same rounds).

Its figures feed docs/speed.md (the ceiling; run through scripts/ceiling.py). They play the
engine's deals with the shared pieces of ``ceiling_loops.py``.
"""
from __future__ import annotations

import numpy as np
from ceiling_loops import HAND, TARGET, deal, finish, greedy_tight, hand_pips
from numba import njit

from sim.core import engine
from sim.core.layout import POINTS_FOR_COUNT, can_play, count_ends, place_tile
from sim.core.rng import seed_word
from sim.core.tiles import N_TILES

# --- lockstep: a block of games stepped together, one turn of every game per step.


@njit(_nrt=False)
def lockstep_games(seed, game_ids, round_cap, out, lanes, deck, hands, state):
    """``state`` rows (structure of arrays, one column per lane): the fields below."""
    game, rnd, seat, pos, layout, s0, s1 = 0, 1, 2, 3, 4, 5, 6
    place, draw, decide, alive = 7, 8, 9, 10
    n_games = game_ids.shape[0]
    next_game = 0
    for lane in range(lanes):
        state[alive, lane] = 0
    running = 0
    while True:
        # Refill: a lane whose game is over takes the next game and deals its round 1.
        for lane in range(lanes):
            if state[alive, lane] == 0 and next_game < n_games:
                g = next_game
                next_game += 1
                state[alive, lane] = 1
                running += 1
                state[game, lane] = g
                state[rnd, lane] = 1
                state[s0, lane] = state[s1, lane] = 0
                state[place, lane] = state[draw, lane] = state[decide, lane] = 0
                leader = deal(seed, game_ids[g], 1, deck[lane], hands[lane], 4)
                out[g, engine.GAME_FIRST_LEADER] = leader
                state[seat, lane] = leader
                state[pos, lane] = 4 * HAND
                state[layout, lane] = 0
        if running == 0:
            return
        # One turn of every live game.
        for lane in range(lanes):
            if state[alive, lane] == 0:
                continue
            lay = state[layout, lane]
            who = state[seat, lane]
            hand = hands[lane, who]
            move, n_moves = greedy_tight(lay, hand)
            if n_moves == 0:
                p = state[pos, lane]
                while p < N_TILES:
                    tile = deck[lane, p]
                    p += 1
                    hand |= 1 << tile
                    state[draw, lane] += 1
                    move, n_moves = greedy_tight(lay, 1 << tile)
                    if n_moves:
                        break
                state[pos, lane] = p
            state[decide, lane] += n_moves > 1
            end = -1
            if move >= 0:
                tile = move >> 2
                lay = place_tile(lay, tile, move & 3)
                state[layout, lane] = lay
                hand &= ~(1 << tile)
                state[place, lane] += 1
                team = s0 + (who & 1)
                state[team, lane] += POINTS_FOR_COUNT[count_ends(lay)]
                if state[team, lane] >= TARGET:
                    end = 2
                elif hand == 0:
                    end = 0
            else:
                end = 1
                for other in range(4):
                    if can_play(lay, hands[lane, other]):
                        end = -1
            hands[lane, who] = hand
            if end < 0:
                state[seat, lane] = (who + 1) & 3
                continue
            g = state[game, lane]
            r = state[rnd, lane]
            if end < 2:
                for other in range(4):
                    state[s0 + (other & 1), lane] -= ((hand_pips(hands[lane, other]) + 2) // 5) * 5
            if end == 2 or r == round_cap:
                finish(out, g, (who & 1) if end == 2 else -1, r, state[place, lane],
                       state[draw, lane], state[s0, lane], state[s1, lane], state[decide, lane])
                state[alive, lane] = 0
                running -= 1
                continue
            state[rnd, lane] = r + 1
            drawn = deal(seed, game_ids[g], r + 1, deck[lane], hands[lane], 4)
            state[seat, lane] = who if end == 0 else drawn
            state[pos, lane] = 4 * HAND
            state[layout, lane] = 0


def lockstep(seed, game_ids, round_cap, lanes=64):
    out = np.zeros((game_ids.shape[0], engine.GAME_FIELDS), dtype=np.int64)
    lockstep_games(seed_word(seed), game_ids, round_cap, out, lanes,
                   np.zeros((lanes, N_TILES), np.int64), np.zeros((lanes, 4), np.int64),
                   np.zeros((11, lanes), np.int64))
    return out


@njit
def deal_only(seed, game_ids, rounds, deck, hands):
    total = 0
    for game in range(game_ids.shape[0]):
        for round_number in range(1, rounds[game] + 1):
            total += deal(seed, game_ids[game], round_number, deck, hands, 4) + (hands[0] & 1)
    return total
