"""Sides of a run's tables: which team a lineup side played, its strategy and its scores.

Why a module of its own: the statistics modules (``score_states``, ``effects``) read the
``games``/``rounds`` tables from a side's point of view and must not import the report
modules (which import them); the seating rules themselves live in ``sim.core.seating``.
The rule is the one in docs/data-format.md: seat ``s`` is
played by lineup seat ``(s + rotation) % players``; a *side* is a lineup position (with 4
players the partnership of lineup seats 0+2 is side 0, 1+3 side 1), a *team* a table
position (with 4 players seats 0+2 are team 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sim.core.seating import team_count
from sim.core.seating import team_of_side as seating_team_of_side


def n_teams(players: int) -> int:
    """Sides (= teams) at the table: 2 partnerships with 4 players, else one per seat."""
    return team_count(players)


def team_of_side(side: int, rotation: np.ndarray, players: int) -> np.ndarray:
    """Team (table position) that lineup side ``side`` played in games of this rotation."""
    return seating_team_of_side(side, np.asarray(rotation, dtype=np.int64), players)


def players_of(games: pd.DataFrame) -> int:
    """The run's player count (one count per table)."""
    counts = pd.unique(games["players"])
    if len(counts) != 1:
        raise ValueError("the games table mixes player counts; pass one run at a time")
    return int(counts[0])


def side_strategies(games: pd.DataFrame) -> list[str]:
    """The strategy label of each lineup side (the same in every game of a run)."""
    players = players_of(games)
    first = games.iloc[0]
    rotation = int(first["rotation"])
    return [str(first[f"seat{int(team_of_side(k, rotation, players))}_strategy"])
            for k in range(n_teams(players))]


def side_columns(frame: pd.DataFrame, prefix: str, rotation: np.ndarray,
                 players: int) -> np.ndarray:
    """``team{t}_<prefix>`` columns read per side: array ``(rows, sides)``."""
    teams = n_teams(players)
    values = np.column_stack([frame[f"team{t}_{prefix}"].to_numpy(np.int64)
                              for t in range(teams)])
    rows = np.arange(values.shape[0])
    return np.column_stack([values[rows, team_of_side(k, rotation, players)]
                            for k in range(teams)])


def opponents_text(strategies: list[str], side: int) -> str:
    """The other sides' strategies, comma-separated (what side ``side`` played against)."""
    return ", ".join(s for k, s in enumerate(strategies) if k != side)
