"""Rewards from a game's public scores: game won or lost, or the points as they are scored.

Two reward schemes, shared by every interface so that they mean the same everywhere:

- ``"game"`` (the default): at the end of the game, +1 to each seat of the team that reached
  the target, -1 to every other seat; 0 to all when the round cap ends the game undecided.
- ``"points"``: after every move, the points the seat's team gained minus the mean of what
  the other teams gained (placements and the settlement's penalties, as the scores move),
  so a game's rewards add up to the round points' differential and sum to 0 over the teams.

Teams are the engine's (``sim.core.seating``): partners 0+2 and 1+3 with 4 players, else
one seat each.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from sim.core.seating import team_count, team_of
from sim.errors import SniffError

__all__: list[str] = []  # nothing here is used outside sim.env

# The reward schemes: the game's result (+1 / -1), or points as they are scored
Rewards = Literal["game", "points"]
REWARDS: tuple[Rewards, ...] = get_args(Rewards)


def check_rewards(rewards: object) -> Rewards:
    """The reward scheme's name, or a one-line error naming the choices."""
    if rewards not in REWARDS:
        raise SniffError(f"rewards must be one of {', '.join(REWARDS)}, got {rewards!r}")
    return rewards  # narrowed to Rewards by the test above


def _seat_teams(players: int) -> np.ndarray:
    return np.array([team_of(seat, players) for seat in range(players)])


def game_rewards(winners: np.ndarray, players: int) -> np.ndarray:
    """``(k, players)`` rewards per seat of finished games from their winning teams
    (``GameBatch.winners``): +1 the winners, -1 the others, 0 to all when no team won."""
    winners = np.asarray(winners)
    won = _seat_teams(players)[None, :] == winners[:, None]
    return np.where(winners[:, None] < 0, 0.0, np.where(won, 1.0, -1.0))


def point_rewards(before: np.ndarray, after: np.ndarray, players: int) -> np.ndarray:
    """``(k, players)`` per seat: its team's gain minus the mean gain of the other teams,
    from team scores ``(k, teams)`` before and after (``GameBatch.scores``)."""
    teams = team_count(players)
    gain = (np.asarray(after, dtype=np.float64) - np.asarray(before, dtype=np.float64))
    gain = gain[:, :teams]
    others = (gain.sum(axis=1, keepdims=True) - gain) / (teams - 1)
    return (gain - others)[:, _seat_teams(players)]
