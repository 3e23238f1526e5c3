"""Who plays with whom: player counts, teams, and sides under the seat rotation.

The one home of the seating rules (docs/rules.md): 2, 3 or 4 players; with 4, seats ``s`` and
``s + 2`` are partners and score as team ``s % 2``; with 2 or 3 every seat is its own team.

A run rotates its lineup round the table: in a game with rotation ``r``, seat ``s`` is
played by lineup seat ``(s + r) % players``. A *side* is a lineup position followed
wherever the rotation put it (with 4 players the partnership of lineup seats ``k`` and
``k + 2``), so the tables' teams are turned into sides with :func:`side_of_team`.

The functions take ints or numpy arrays (element-wise). ``sim.core.observation`` compiles
:func:`team_of` and :func:`team_count` with numba for the engine and the strategies, so
this module imports nothing and belongs to the compiled core: the engine
may import it, and ``sim.kernels.generate`` hashes it into every kernel's name.
"""

from __future__ import annotations

__all__ = ["PLAYER_COUNTS", "side_of_team", "team_count", "team_name", "team_of", "team_of_side"]

PLAYER_COUNTS = (2, 3, 4)


def team_count(players: int) -> int:
    """Teams at the table: 2 partnerships with 4 players, else one per seat."""
    return 2 if players == 4 else players


def team_of(seat, players: int):
    """Team that ``seat`` scores for."""
    return seat % 2 if players == 4 else seat


def side_of_team(team, rotation, players: int):
    """Side (lineup position) that played team ``team`` in games with this rotation."""
    side = (team + rotation) % players
    return side % 2 if players == 4 else side


def team_of_side(side, rotation, players: int):
    """Team that side ``side`` played in games with this rotation (inverse of the above)."""
    return (side - rotation) % team_count(players)


def team_name(team: int, players: int) -> str:
    """``seats 0+2`` for a partnership, ``seat 1`` for a player alone."""
    return f"seats {team}+{team + 2}" if players == 4 else f"seat {team}"
