"""What a batch of resumable games asks its caller, and how a batch is set up.

A :class:`sim.kernels.batch.GameBatch` stops each game where an outside seat decides (or,
with external chance, where a deal or a draw is named); :class:`Decisions` holds those
stops, one row per waiting game, with the deciding seat's public view only. The action ids
(``N_ACTIONS``), the kinds of stop and :class:`BatchSettings` are the vocabulary the batch,
the environments (``sim.env``), serve and the Python players share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Final

import numpy as np

from sim.core import engine
from sim.core.tiles import N_TILES
from sim.errors import SniffError
from sim.kernels.result import ROUND_CAP
from strategies import StrategySpec, parse_spec

__all__ = [
    "BatchSettings", "Decisions", "IllegalMove", "KIND_DEAL", "KIND_DRAW", "KIND_FORCED",
    "N_ACTIONS", "OUTSIDE"
]

N_ACTIONS = N_TILES * 4  # action id = tile * 4 + arm, the engine's move encoding
OUTSIDE: Final = None  # a lineup position decided by the caller (engine.Chooser.OUTSIDE)
# The kinds of stop (Decisions.kinds): what the game waits for (engine.Wait), by their names here
KIND_MOVE = engine.Wait.MOVE  # choose among the hand's legal moves
KIND_FORCED = engine.Wait.FORCED  # choose where the tile just drawn goes (observation FORCED)
KIND_DRAW = engine.Wait.DRAW  # chance: name the next tile drawn (external_chance only)
KIND_DEAL = engine.Wait.DEAL  # chance: deal the round (external_chance only)


class IllegalMove(ValueError):
    """A move that is not legal for its game, or moves of the wrong shape or type."""


@dataclass(frozen=True, slots=True)  # slots: made at every step, twice as fast to make
class Decisions:
    """The games that wait now, one row each, in game order (fresh arrays every call).

    Attributes:
        games: (k,) index of the game in the batch.
        seats: (k,) deciding seat (for KIND_DRAW the drawing seat, KIND_DEAL -1).
        positions: (k,) lineup position of that seat (after the game's rotation).
        kinds: (k,) KIND_MOVE, KIND_FORCED, KIND_DRAW or KIND_DEAL.
        observations: (k, OBSERVATION_SIZE) int64: what strategies get (0 for chance).
        moves: (k, ROW_MOVES) int64: legal moves in the engine's order, NO_MOVE padded.
        n_moves: (k,) how many of ``moves`` are legal.
        masks: (k, N_ACTIONS) bool over action ids.
        streams: (k,) uint64: the seat's own strategy random stream.
    """

    games: np.ndarray  # (k,) index of the game in the batch
    seats: np.ndarray  # (k,) deciding seat (for KIND_DRAW the drawing seat, KIND_DEAL -1)
    positions: np.ndarray  # (k,) lineup position of that seat (after the game's rotation)
    kinds: np.ndarray  # (k,) KIND_MOVE, KIND_FORCED, KIND_DRAW or KIND_DEAL
    observations: np.ndarray  # (k, OBSERVATION_SIZE) int64: what strategies get (0 for chance)
    moves: np.ndarray  # (k, ROW_MOVES) int64: legal moves in the engine's order, NO_MOVE padded
    n_moves: np.ndarray  # (k,)
    masks: np.ndarray  # (k, N_ACTIONS) bool over action ids
    streams: np.ndarray  # (k,) uint64: the seat's own strategy random stream

    def __len__(self) -> int:
        return len(self.games)

    def copy(self) -> Decisions:
        return Decisions(**{f.name: getattr(self, f.name).copy() for f in fields(self)})


@dataclass(frozen=True)
class BatchSettings:
    """Which games a :class:`GameBatch` plays and how, beyond its lineup, size and seed.

    ``first_game``: game ``i`` has game id ``first_game + i``; ``game_ids`` and
    ``rotations`` (per game) replace those ids and ``id % players``; ``deal_ids`` (per game)
    replaces the default deal id (the game id), as ``--duplicate``; ``forced_leads`` (per
    game, -1 none) imposes round 1's opening tile, as ``sniff openings``; ``round_cap``:
    rounds a game may last; ``external_chance``: the caller deals and names each tile drawn.

    Attributes:
        first_game: game ``i`` has game id ``first_game + i``.
        round_cap: the most rounds a game may play.
        external_chance: the caller names the deals and draws (``external_chance``).
        game_ids: per game, its game id instead of ``first_game + i`` (None: those).
        deal_ids: per game, its deal id instead of the game id (None: the game id).
        rotations: per game, its seat rotation instead of ``id % players`` (None: that).
        forced_leads: per game, round 1's opening tile (-1 or None: none forced).
    """

    first_game: int = 0
    round_cap: int = ROUND_CAP
    external_chance: bool = False
    game_ids: np.ndarray | None = None
    deal_ids: np.ndarray | None = None
    rotations: np.ndarray | None = None
    forced_leads: np.ndarray | None = None


def lineup_positions(players: int, lineup: Sequence) -> list[StrategySpec | None]:
    """A ``GameBatch``'s lineup: one spec (or OUTSIDE) per lineup position; names are
    parsed; 2 given for 4 players are the two partnerships. ``players``: a checked count
    (``sim.core.checks.check_players``)."""
    seats = [parse_spec(s) if isinstance(s, str) else s for s in getattr(lineup, "seats", lineup)]
    if players == 4 and len(seats) == 2:
        seats = seats * 2
    if len(seats) != players:
        raise SniffError(f"{players} players need {players} lineup positions, got {len(seats)}")
    for spec in seats:
        if spec is not None and not isinstance(spec, StrategySpec):
            raise SniffError(
                f"a lineup position is a strategy spec or OUTSIDE (None), not {spec!r}")
        if spec is not None and spec.strategy.python:
            raise SniffError(f"{spec.label} is a Python player: make its position OUTSIDE "
                             "and call it on the Decisions (sim.kernels.python_seats does)")
    return seats
