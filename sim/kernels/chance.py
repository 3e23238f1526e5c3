"""The hidden tiles of a :class:`sim.kernels.batch.GameBatch` seen and moved from outside:
chance played by the caller (``external_chance``), and a referee's tools.

With ``BatchSettings(external_chance=True)`` the caller deals every round and names every
tile drawn (OpenSpiel's chance nodes do): a game waits at each deal (``KIND_DEAL``) and
before each draw (``KIND_DRAW``) (:class:`ExternalChance`). A referee deals a game's hidden
tiles anew or sets a game to another's position (:class:`Referee`: an IS-MCTS search, a
play-out from a true position). These are the batch's methods for it, apart from the rest
of the batch (one job per module); they read and write the batch's private state and see
hidden tiles: they are meant for a chance player or a referee only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sim.core import engine
from sim.core.tiles import N_TILES
from sim.errors import SniffError
from sim.kernels.decisions import KIND_DEAL, KIND_DRAW, Decisions, IllegalMove

__all__: list[str] = []  # nothing here is used outside its room


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


def _tiles_of(masks: Sequence[int]) -> list[int]:
    """The tile ids of 28-bit tile masks, each mask's in order."""
    return [tile for mask in masks for tile in range(N_TILES) if mask >> tile & 1]


class Referee:
    """A referee's tools of ``GameBatch``: they see and move hidden tiles (as
    :meth:`ExternalChance.deal` and :meth:`ExternalChance.boneyard`)."""

    _state: np.ndarray
    _round_rows: np.ndarray
    _games: np.ndarray
    _decisions: Decisions
    _gather: Callable[[], Decisions]
    players: int
    external_chance: bool

    def hand(self, game: int, seat: int) -> int:
        """The tiles ``seat`` holds in game ``game``, a 28-bit tile mask: hidden from the other
        seats, so for a referee only (a resampler reads what it deals anew with
        :meth:`redeal`; a test, what no view may show)."""
        return int(self._state[game, engine.HANDS + seat])

    def redeal(self, game: int, hands: Sequence[int], boneyard: Sequence[int]) -> None:
        """Deal the tiles of game ``game``'s hands and boneyard anew, in the middle of its
        round: ``hands`` (a 28-bit tile mask per seat) and ``boneyard`` (the tiles left to
        draw, in draw order). Each hand keeps its size and the tiles stay those of the hands
        and the boneyard now; the layout, the record and the scores stay. For a resampler
        (an IS-MCTS search deals anew what its seat cannot see:
        examples/openspiel_ismcts.py). Only while the game waits for a move or a draw, and the
        deciding seat's hand stays while it places a tile it just drew."""
        row = self._state[game]
        if row[engine.WAITING] not in (engine.Wait.MOVE, engine.Wait.FORCED, engine.Wait.DRAW):
            raise IllegalMove(f"game {game} does not wait for a move or a draw: nothing to "
                              "deal anew")
        start = engine.DECK + int(row[engine.BONEYARD_POS])
        now = [int(row[engine.HANDS + seat]) for seat in range(self.players)]
        masks = [int(mask) for mask in hands]
        tiles = [int(tile) for tile in boneyard]
        if len(masks) != self.players or [m.bit_count() for m in masks] != [
                m.bit_count() for m in now]:
            raise IllegalMove(f"game {game}: a redeal gives each of the {self.players} seats "
                              "as many tiles as it holds")
        seat = int(row[engine.TURN_SEAT])
        if row[engine.WAITING] == engine.Wait.FORCED and masks[seat] != now[seat]:
            raise IllegalMove(f"game {game}: seat {seat} places the tile it drew: its hand "
                              "stays")
        pool = row[start: engine.DECK + N_TILES].tolist()
        if sorted(_tiles_of(masks) + tiles) != sorted(_tiles_of(now) + pool):
            raise IllegalMove(f"game {game}: a redeal places the tiles of the hands and the "
                              "boneyard, each once")
        row[engine.HANDS: engine.HANDS + self.players] = masks
        row[start: engine.DECK + N_TILES] = tiles
        self._decisions = self._gather()

    def load_position(self, game: int, source: Referee, source_game: int) -> None:
        """Game ``game`` goes on from where game ``source_game`` of ``source`` (a batch of as
        many players) is now: that game's state, its round's row and its game row are copied
        (not its finished rounds, its ids or its rotation), and whether chance comes from
        outside stays this batch's. A referee's tool: a search from a true position, a
        play-out of it by other players (examples/openspiel_ismcts.py). Like
        :meth:`redeal`, it moves hidden tiles: for a referee only. A position that waits for
        chance (a deal or a draw) goes on only in a batch whose chance comes from outside."""
        if source.players != self.players:
            raise SniffError(f"a position of {source.players} players cannot go on in a batch "
                             f"of {self.players}")
        if not self.external_chance and source._state[source_game, engine.WAITING] in (
                engine.Wait.DRAW, engine.Wait.DEAL):
            raise IllegalMove(f"game {source_game} waits for chance (a deal or a draw): a "
                              "batch without external chance cannot go on from it")
        self._state[game] = source._state[source_game]
        self._state[game, engine.EXTERNAL] = int(self.external_chance)
        self._round_rows[game] = source._round_rows[source_game]
        self._games[game] = source._games[source_game]
        self._decisions = self._gather()

