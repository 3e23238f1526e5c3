"""``learned``'s version-1 inputs as named blocks, and its win-chance input as the value
room's logistic (one home: ``strategies.value.round_value.win_chance``)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import EMPTY_LAYOUT
from sim.core.seating import team_count, team_of
from strategies.learned import features
from strategies.learned.features import BLOCKS, N_BASE_INPUTS, encode
from strategies.learned.record_inputs import RECORD_START
from strategies.value.round_value import win_chance, win_probability


def test_the_named_layout_covers_every_input_once() -> None:
    covered = np.zeros(N_BASE_INPUTS, dtype=np.int64)
    for name, first, size in BLOCKS:
        assert getattr(features, name) == first and size >= 1
        covered[first:first + size] += 1
    assert covered.tolist() == [1] * N_BASE_INPUTS
    ends = [first + size for _, first, size in BLOCKS]
    assert [first for _, first, _ in BLOCKS] == [0, *ends[:-1]]  # in order, no gap
    assert ends[-1] == N_BASE_INPUTS == RECORD_START  # the record block follows


def _lead(players: int, scores: list[int], tile: int) -> tuple[np.ndarray, int]:
    """Seat 0's view at the start of a round (``scores`` per team), leading ``tile``."""
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    observation[view.PLAYERS] = players
    observation[view.TARGET] = engine.TARGET_FOR_PLAYERS[players]
    observation[view.LAYOUT] = EMPTY_LAYOUT
    hand = [tile, (tile + 5) % 28, (tile + 11) % 28]
    for t in hand:
        observation[view.HAND] |= 1 << t
    for seat in range(players):
        observation[view.HAND_SIZE + seat] = len(hand)
    for team, score in enumerate(scores):
        observation[view.SCORE + team] = score
    return observation, tile << 2


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_win_chance_input_is_the_value_rooms_logistic_bit_for_bit(players: int) -> None:
    rng = np.random.default_rng(players)
    target = float(engine.TARGET_FOR_PLAYERS[players])
    out = np.zeros(N_BASE_INPUTS)
    for _ in range(60):
        scores = [int(s) for s in rng.integers(0, int(target) - 10, team_count(players))]
        observation, move = _lead(players, scores, int(rng.integers(0, 28)))
        encode(observation, move, out)
        points = round(out[features.POINTS] * 10)
        need_own = target - (scores[team_of(0, players)] + points)
        need_other = min(target - s for team, s in enumerate(scores)
                         if team != team_of(0, players))
        lead = 2.0 * (2 if players == 4 else 1) / players - 1.0
        expected = win_chance(players, need_own, need_other, lead, target)
        assert out[features.WIN_CHANCE].tobytes() == np.float64(expected).tobytes()
        assert 0.0 < expected < 1.0


def test_win_chance_is_the_model_expert_values_round_ends_with() -> None:
    """The same logistic as ``win_probability`` at a known leader (they may differ only in
    the last bits: the terms are multiplied in another order), and odd under swapping the
    two sides of a 2-player game."""
    scratch = np.zeros(8)
    largest = 0.0
    for players in (2, 3, 4):
        target = int(engine.TARGET_FOR_PLAYERS[players])
        state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
        state[engine.PLAYERS] = players
        state[engine.TARGET] = target
        for own in range(0, target, 13):
            for other in range(0, target, 17):
                state[engine.SCORES], state[engine.SCORES + 1] = own, other
                for lead in (1.0, -1.0):
                    chance = win_chance(players, target - own, target - other, lead, target)
                    largest = max(largest, abs(
                        chance - win_probability(state, 0, lead, scratch)))
                    if players == 2:
                        swapped = win_chance(2, target - other, target - own, -lead, target)
                        assert chance + swapped == pytest.approx(1.0, abs=1e-12)
    assert largest < 1e-12
