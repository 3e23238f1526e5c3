"""The learning curve's measurement: a network's seat row (``sim.learn.seat``) against
the heuristic's on held-out duplicate deals, with the paired interval over deals.

The deals are those of the folder's seed plus ``EVAL_SALT``, never the training games';
every measurement of a folder (each iteration's, and each refit of docs/learned.md's "What
each input family is worth") plays the same ones, so two networks are compared deal by deal
(``deal_wins``).
"""

from __future__ import annotations

import numpy as np

from sim.kernels.runner import ROUND_CAP
from sim.learn import kernel, seat
from sim.stats.intervals import mean_interval
from strategies.learned.features import N_BASE_INPUTS

__all__ = ["evaluate"]

EVAL_SALT = 1_000_003


def seat_roles(players: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The roles matrix of ``first`` against ``second`` (4 players: partnerships 0+2 and
    1+3; else ``first`` in seat 0 against ``second`` in every other seat)."""
    rows = [first, second, first, second] if players == 4 else [first] + [second] * (
        players - 1)
    return seat.roles_matrix(rows)


def deal_wins(players: int, seed: int, games: int, first: np.ndarray, second: np.ndarray
              ) -> np.ndarray:
    """``first``'s share of wins on each duplicate deal (deal g // 2, rotation g %
    players; ``games`` rounded down to even): the paired unit of ``evaluate``, and of a
    comparison of two networks on the same deals (docs/learned.md, "What each input family is
    worth")."""
    games -= games % 2
    ids = np.arange(games, dtype=np.int64)
    winners = np.zeros(games, dtype=np.int64)
    empty = np.zeros((1, N_BASE_INPUTS), dtype=np.float32)
    if games:
        kernel.play_games(np.uint64(seed), ids, ids // 2, ids % players, players,
                                 seat_roles(players, first, second), ROUND_CAP,
                                 (empty, np.zeros(1), np.zeros(1)), winners)
    return (winners == 0).astype(float).reshape(-1, 2).mean(axis=1)


def evaluate(players: int, seed: int, games: int, first: np.ndarray, second: np.ndarray
             ) -> dict:
    """``first``'s win rate against ``second`` on duplicate deals, with the paired 95%
    interval over deals."""
    per_deal = deal_wins(players, seed, games, first, second)
    if per_deal.size == 0:
        return {"games": 0, "wins": 0, "rate": float("nan"), "low": float("nan"),
                "high": float("nan")}
    rate, low, high = mean_interval(per_deal)
    if per_deal.size == 1:  # one deal: no spread to measure
        low = high = rate
    return {"games": 2 * per_deal.size, "wins": int(round(2 * per_deal.sum())),
            "rate": rate, "low": low, "high": high}
