"""Chance played from outside a :class:`sim.kernels.batch.GameBatch` (``external_chance``).

With ``BatchSettings(external_chance=True)`` the caller deals every round and names every
tile drawn (OpenSpiel's chance nodes do): a game waits at each deal (``KIND_DEAL``) and
before each draw (``KIND_DRAW``). These are the batch's methods for it, apart from the rest
of the batch (one job per module); they read and write the batch's private state, and
:meth:`ExternalChance.deal` and :meth:`ExternalChance.boneyard` see hidden tiles: they are
meant for a chance player only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim.core import engine
from sim.core.tiles import N_TILES
from sim.kernels.decisions import KIND_DEAL, KIND_DRAW, Decisions, IllegalMove

__all__: list[str] = []  # nothing here is used outside sim.kernels


def _rows_of(decisions: Decisions, kind: int) -> Sequence[int] | np.ndarray:
    """The rows of ``decisions`` that wait for ``kind`` (one row, an environment's step,
    tested on a Python int: NumPy's search costs more than the rest of the check)."""
    if len(decisions) == 1:
        return [0] if int(decisions.kinds[0]) == kind else []
    return np.flatnonzero(decisions.kinds == kind)


class ExternalChance:
    """The external-chance methods of ``GameBatch`` (its ``_state``, ``_dealt`` and
    ``players``)."""

    _state: np.ndarray
    _dealt: np.ndarray
    players: int

    def _checked_chance(self, moves: np.ndarray, decisions: Decisions
                        ) -> tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray]:
        """The rows that name a tile drawn and those that wait for their deal, or
        IllegalMove for a tile not in the boneyard or a deal not supplied (external
        chance)."""
        draws, deals = _rows_of(decisions, KIND_DRAW), _rows_of(decisions, KIND_DEAL)
        for row in draws:
            game = int(decisions.games[row])
            if int(moves[row]) not in self.boneyard(game):
                raise IllegalMove(f"game {game}: tile {int(moves[row])} is not in the boneyard")
        for row in deals:
            if not self._dealt[decisions.games[row]]:
                raise IllegalMove(f"game {int(decisions.games[row])} waits for its deal: "
                                  "call deal(game, deck, leader) first")
        return draws, deals

    def needs_leader(self, game: int) -> bool:
        """Whether the round the game waits to deal draws its leader (round 1, or after a
        blocked round; else the seat that went out leads)."""
        return int(self._state[game, engine.NEXT_LEADER]) < 0

    def deal(self, game: int, deck, leader: int = -1) -> None:
        """Supply the deck of the round game ``game`` waits to deal: hands from the front,
        seat by seat, then the boneyard in draw order; ``leader`` when the rules draw one."""
        if self._state[game, engine.WAITING] != KIND_DEAL:
            raise IllegalMove(f"game {game} does not wait for a deal")
        deck = np.asarray(deck, dtype=np.int64)
        if deck.shape != (N_TILES,) or sorted(deck.tolist()) != list(range(N_TILES)):
            raise IllegalMove(f"game {game}: a deck is the {N_TILES} tile ids in some order")
        if self.needs_leader(game):
            if not 0 <= leader < self.players:
                raise IllegalMove(f"game {game}: this round's leader is drawn: "
                                  f"give 0..{self.players - 1}")
            self._state[game, engine.NEXT_LEADER] = leader
        self._state[game, engine.DECK: engine.DECK + N_TILES] = deck
        self._dealt[game] = True

    def boneyard(self, game: int) -> list[int]:
        """The tiles left to draw in game ``game`` (hidden: for a chance player only)."""
        position = int(self._state[game, engine.BONEYARD_POS])
        return sorted(self._state[game, engine.DECK + position: engine.DECK + N_TILES].tolist())

    def _place_draw(self, game: int, tile: int) -> None:
        """Put the named tile next in the deck (swapping it with the one there)."""
        row = self._state[game]
        position = engine.DECK + int(row[engine.BONEYARD_POS])
        where = position + row[position: engine.DECK + N_TILES].tolist().index(tile)
        row[where], row[position] = row[position], tile
