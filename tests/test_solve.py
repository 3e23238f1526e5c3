"""``strategies.solve`` against a plain-Python search of the same rounds by the rules oracle.

Random late positions (2 players with tiles left in the boneyard, 4 players with none):
the compiled alpha-beta over an explicit stack must give exactly the value a plain
recursive search without pruning gives, built on ``tests/oracle.py``'s layout and
``tests/python_model.py``'s move order, for both kinds of best play (minimax, and the
opponents playing the model player, whose pick both ask of the compiled heuristic).
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import penalty, points_for, team_of
from python_model import ARMS, TILES, copy_layout, moves_for, place

from sim.core import engine
from sim.core.layout import EMPTY_LAYOUT, open_values_mask, place_tile
from sim.core.observation import OBSERVATION_SIZE
from strategies import round_value, solve
from strategies.inference import model_choice, model_of
from strategies.score_table import N_FEATURES

FEATURES = np.zeros(N_FEATURES)


def _late_position(players: int, left: int, rng: np.random.Generator):
    """Random legal play (draws included) from a random deal until at most ``left`` tiles
    are off the table (hands and boneyard, as ``expert:solve`` counts them): ``(layout,
    placed, hands, boneyard, scores, seat)``."""
    from oracle import Layout

    while True:
        deck = [int(t) for t in rng.permutation(28)]
        size = engine.HAND_SIZE_FOR_PLAYERS[players]
        hands = [set(deck[s * size:(s + 1) * size]) for s in range(players)]
        boneyard = deck[players * size:]
        layout, placed = Layout(), []
        scores = [int(rng.integers(0, 180)), int(rng.integers(0, 180))]
        seat = int(rng.integers(players))
        passes = 0
        while sum(len(hand) for hand in hands) + len(boneyard) > left and passes < players:
            options = moves_for(layout, hands[seat])
            while not options and boneyard:
                tile = boneyard.pop(0)
                hands[seat].add(tile)
                options = moves_for(layout, {tile})
            if options:
                tile, arm = options[int(rng.integers(len(options)))]
                place(layout, tile, arm)
                placed.append((tile, ARMS.index(arm)))
                hands[seat].discard(tile)
                scores[team_of(seat, players)] += points_for(layout.count())
                passes = 0
                if not hands[seat] or max(scores) >= engine.TARGET_FOR_PLAYERS[players]:
                    break
            else:
                passes += 1
            seat = (seat + 1) % players
        if (sum(len(hand) for hand in hands) + len(boneyard) <= left and all(hands)
                and passes == 0
                and max(scores) < engine.TARGET_FOR_PLAYERS[players]):
            return layout, placed, hands, boneyard, scores, seat


def _end_value(players: int, hands, scores, winner: int, team: int) -> float:
    end = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    end[engine.PLAYERS], end[engine.TARGET] = players, engine.TARGET_FOR_PLAYERS[players]
    end[engine.WINNER_TEAM] = winner
    for index, score in enumerate(scores):
        end[engine.SCORES + index] = score
    for seat, hand in enumerate(hands):
        end[engine.HANDS + seat] = sum(1 << t for t in hand)
    return round_value.outcome.py_func(end, end, team, 0, FEATURES)


def _plain_value(position, layout, hands, boneyard, scores, lacks, seat, team, model) -> float:
    """Plain recursive search without pruning: the own side maximizes, the other side
    minimizes (``model`` MINIMAX) or plays the model player's pick, asked of the compiled
    ``strategies.inference.model_choice`` on the view the engine would give."""
    players, word, played = position
    hands = [set(hand) for hand in hands]
    boneyard, lacks = list(boneyard), list(lacks)
    options = moves_for(layout, hands[seat])
    if not options and boneyard:
        lacks[seat] = open_values_mask(word)
    while not options and boneyard:
        tile = boneyard.pop(0)
        hands[seat].add(tile)
        options = moves_for(layout, {tile})
    if not options:
        lacks[seat] |= open_values_mask(word)
        if not any(moves_for(layout, hand) for hand in hands):
            settled = list(scores)
            for other, hand in enumerate(hands):
                settled[team_of(other, players)] -= penalty(sum(sum(TILES[t]) for t in hand))
            return _end_value(players, hands, settled, -1, team)
        return _plain_value(position, layout, hands, boneyard, scores, lacks,
                            (seat + 1) % players, team, model)
    own = team_of(seat, players) == team
    if not own and model != solve.MINIMAX and len(options) > 1:
        state = _engine_state(players, [], hands, boneyard, scores)
        state[engine.LAYOUT], state[engine.PLAYED] = word, played
        state[engine.LACKS:engine.LACKS + players] = lacks
        view = np.zeros(OBSERVATION_SIZE, dtype=np.int64)
        engine.fill_observation(state, seat, 0, view)
        moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
        for index, (tile, arm) in enumerate(options):
            moves[index] = tile * 4 + ARMS.index(arm)
        options = [options[model_choice(model, view, moves, len(options))]]
    values = []
    for tile, arm in options:
        trial = copy_layout(layout)
        place(trial, tile, arm)
        after = [set(hand) for hand in hands]
        after[seat].discard(tile)
        points = list(scores)
        points[team_of(seat, players)] += points_for(trial.count())
        if points[team_of(seat, players)] >= engine.TARGET_FOR_PLAYERS[players]:
            values.append(1.0 if team_of(seat, players) == team else 0.0)
        elif not after[seat]:
            for other, hand in enumerate(after):
                points[team_of(other, players)] -= penalty(sum(sum(TILES[t]) for t in hand))
            values.append(_end_value(players, after, points, -1, team))
        else:
            following = (players, place_tile(word, tile, ARMS.index(arm)), played | 1 << tile)
            values.append(_plain_value(following, trial, after, boneyard, points, lacks,
                                       (seat + 1) % players, team, model))
    return max(values) if own else min(values)


def _engine_state(players, placed, hands, boneyard, scores) -> np.ndarray:
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    state[engine.PLAYERS], state[engine.TARGET] = players, engine.TARGET_FOR_PLAYERS[players]
    state[engine.WINNER_TEAM] = -1
    layout = EMPTY_LAYOUT
    for tile, arm in placed:
        layout = place_tile(layout, tile, arm)
        state[engine.PLAYED] |= 1 << tile
    state[engine.LAYOUT] = layout
    for seat, hand in enumerate(hands):
        state[engine.HANDS + seat] = sum(1 << t for t in hand)
    for index, score in enumerate(scores):
        state[engine.SCORES + index] = score
    state[engine.BONEYARD_POS] = 28 - len(boneyard)
    for offset, tile in enumerate(boneyard):
        state[engine.DECK + 28 - len(boneyard) + offset] = tile
    return state


@pytest.mark.parametrize("players,left", [(2, 10), (4, 8)])
def test_solving_equals_a_plain_search_of_the_round(players: int, left: int) -> None:
    rng = np.random.default_rng(players)
    buffers = solve.solve_buffers()
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
    features = np.zeros(N_FEATURES)
    values, drew = set(), 0
    for _ in range(25):
        layout, placed, hands, boneyard, scores, seat = _late_position(players, left, rng)
        state = _engine_state(players, placed, hands, boneyard, scores)
        before = state.copy()
        team = int(rng.integers(2))
        drew += len(boneyard) > 0
        position = (players, state[engine.LAYOUT], state[engine.PLAYED])
        for model in (solve.MINIMAX, model_of(players)):
            want = _plain_value(position, layout, hands, boneyard, scores, [0] * players, seat,
                                team, model)
            got = solve.solve_round(state, seat, team, model, buffers, round_row, events,
                                    features)
            assert got == pytest.approx(want, abs=1e-12)
            assert np.array_equal(state, before)
            values.add(round(want, 6))
    assert len(values) > 10  # the positions differ: wins, losses and scores in between
    if players == 2:
        assert drew > 5  # tiles were left in the boneyard in some of them
