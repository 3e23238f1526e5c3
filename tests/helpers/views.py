"""A strategy's view rebuilt from traces, checked against consistent re-deals, and win rates
and a uniformity score: what the tests of the strategies share
(``tests/strategies/registry/test_catalog.py``, ``tests/strategies/search/``,
``tests/strategies/learned/``)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from sim.core import engine
from sim.core import observation as view
from sim.kernels.runner import lineup_of, play_batch, trace_events, winning_side
from sim.kernels.trace import placements_from_events
from sim.run.plan import rotation_for
from sim.stats.intervals import Z99, wilson_interval
from strategies import parse_lineup_text
from tests.helpers.compiled_functions import cached

# The compiled functions a test calls from Python, through cached wrappers
# (tests/helpers/compiled_functions.py): compiled once per machine, not in every test process.
deal_hidden = cached("strategies.search.rollout.deal_hidden")
tile_moves = cached("sim.core.layout.tile_moves")
legal_moves = cached("sim.core.layout.legal_moves")
fill_observation = cached("sim.core.engine.fill_observation")


def win_rate(players: int, text: str, games: int, seed: int) -> tuple[float, float, int]:
    """Lineup side 0's win rate with its 99% Wilson interval (seats rotate game by game)."""
    lineup = lineup_of(players, parse_lineup_text(text))
    game_ids = np.arange(games, dtype=np.int64)
    result = play_batch(
        lineup, seed, game_ids, rotations=rotation_for(game_ids, players),
    )
    wins = int((winning_side(result, players) == 0).sum())
    low, high = wilson_interval(wins, games, Z99)
    return low, high, wins


def decisions(
    players: int, text: str, seed: int, game_id: int
) -> Iterator[tuple[np.ndarray, int, bool, int]]:
    """Every placement of a traced game as ``(state before it, seat, forced, move)``,
    the state rebuilt from the trace alone (``sim.kernels.trace.placements_from_events``)."""
    lineup = lineup_of(players, parse_lineup_text(text))
    rows, _ = trace_events(lineup, seed, game_id)
    yield from placements_from_events(rows, players)


def view_of(
    state: np.ndarray, seat: int, forced: bool, move: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """What the engine hands the seat's strategy: its observation and legal moves."""
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    fill_observation(state, seat, int(forced), observation)
    moves = np.zeros(engine.MAX_MOVES, dtype=np.int64)
    layout = int(state[engine.LAYOUT])
    if forced:  # a tile just drawn: only its own placements
        n_moves = tile_moves(layout, move >> 2, moves)
    else:
        n_moves = legal_moves(layout, int(state[engine.HANDS + seat]), moves)
    return observation, moves, n_moves


def redealt_views(state: np.ndarray, seat: int, forced: bool, move: int, players: int,
                  observation: np.ndarray, rng: np.ndarray, times: int):
    """The same decision ``times`` times with the hidden tiles (other hands, boneyard) dealt
    again consistently with everything public: each view must equal the seat's own. Yields
    (view, moves, n_moves, whether the hidden tiles changed)."""
    hidden = [engine.HANDS + s for s in range(players) if s != seat]
    for _ in range(times):
        other = np.zeros_like(state)
        assert deal_hidden(observation, other, rng)
        again, moves_again, n_again = view_of(other, seat, forced, move)
        np.testing.assert_array_equal(again, observation)
        yield again, moves_again, n_again, not np.array_equal(other[hidden], state[hidden])


def chi_square_z(counts: list[int], expected: float) -> float:
    """Wilson-Hilferty normal score of Pearson's statistic (large = not uniform)."""
    df = len(counts) - 1
    chi = sum((c - expected) ** 2 / expected for c in counts)
    return ((chi / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
