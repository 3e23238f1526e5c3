"""An exhaustive endgame solver in plain Python, written for the tests of ``sniff analyze``.

With 2 players and an empty boneyard every hand is known, so the rest of the round can be
searched to its end: each side maximising its own chance to win the game, every round's
end valued as the search values it. It shares no search code with
``sim.analyze.endgame`` (the analysis's compiled solver), only the rules' primitives
(placing a tile, counting the ends, the legal moves) and the round-end valuation, so the
two hold each other to the same answers.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from sim.analyze import kernel as analyze_kernel
from sim.core import engine
from sim.core.layout import POINTS_FOR_COUNT
from sim.core.tiles import N_TILES, TILE_PIPS
from sim.hint import kernel as hint_kernel
from sim.kernels.runner import lineup_of
from sim.kernels.trace import game_events
from strategies import parse_spec


def _state(hands, scores, target, winner=-1):
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    state[engine.PLAYERS], state[engine.TARGET], state[engine.WINNER_TEAM] = 2, target, winner
    for seat in range(2):
        state[engine.HANDS + seat] = hands[seat]
        state[engine.SCORES + seat] = scores[seat]
    return state


def _pips(hand: int) -> int:
    return sum(int(TILE_PIPS[t]) for t in range(N_TILES) if hand >> t & 1)


def exact_values(position) -> list[float]:
    """The value of each legal move (the mover's chance to win the game) with both hands
    known, every reply searched to the round's end."""
    kernel = hint_kernel.load()
    ends = analyze_kernel.load(search=False)
    team, target = position.seat, position.target
    hand = position.hand_mask()
    other = ((1 << N_TILES) - 1) & ~hand & ~position.played_mask()
    hands0 = [0, 0]
    hands0[position.seat], hands0[1 - position.seat] = hand, other
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)

    def moves_of(layout, held):
        count = kernel.moves_of(layout, held, -1, buffer)
        return [int(m) for m in buffer[:count]]

    def end(hands, scores, winner=-1):
        state = _state(hands, scores, target, winner)
        return float(ends.round_end_value(state, state, team))

    def settle(hands, scores):
        scores = list(scores)
        for seat in range(2):
            scores[seat] -= ((_pips(hands[seat]) + 2) // 5) * 5
        return end(hands, scores)

    @cache
    def value(h0, h1, layout, s0, s1, seat, passed):
        hands, scores = [h0, h1], [s0, s1]
        options = moves_of(layout, hands[seat])
        if not options:
            if passed or not moves_of(layout, hands[1 - seat]):
                return settle(hands, scores)
            return value(h0, h1, layout, s0, s1, 1 - seat, True)
        results = [after(hands, scores, layout, seat, move) for move in options]
        return max(results) if seat == team else min(results)

    def after(hands, scores, layout, seat, move):
        hands, scores = list(hands), list(scores)
        tile, arm = move >> 2, move & 3
        layout = int(kernel.place(layout, tile, arm))
        scores[seat] += int(POINTS_FOR_COUNT[int(kernel.count(layout))])
        hands[seat] &= ~(1 << tile)
        if scores[seat] >= target:
            return end(hands, scores, seat)
        if hands[seat] == 0:
            return settle(hands, scores)
        return value(hands[0], hands[1], layout, scores[0], scores[1], 1 - seat, False)

    return [after(hands0, list(position.scores), position.layout, position.seat, move)
            for move in position.legal_moves()]


def endgame_positions(count: int) -> list:
    """Decisions of 2-player games with an empty boneyard and a choice, small hands."""
    from sim.hint.tracker import decisions

    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    found = []
    for game in range(150):
        for decision in decisions(game_events(lineup, 23, game)):
            position = decision.position
            if (position.boneyard == 0 and len(position.legal_moves()) > 1
                    and position.table and sum(position.sizes) <= 10):
                found.append(position)
        if len(found) >= count:
            break
    return found[:count]
