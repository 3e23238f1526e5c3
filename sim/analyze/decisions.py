"""A game's decisions, ready to value: every placement with a choice, from the public view
of the seat that made it, with what the tables split it by.

A decision is a placement with more than one legal move (a seat with one legal move has no
choice to judge). Its phase and kind are read from the position alone (``settings.Phase``,
``settings.Kind``), and its search seed from the analysis seed, the game and the decision's
place among the game's decisions, never from the order games are analysed in: the same
seed values every decision the same way in any part, on any thread or machine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.analyze.settings import Kind, Phase
from sim.analyze.sources import GameRef, source_seed
from sim.core import engine
from sim.core.layout import POINTS_FOR_COUNT, SNIFF_STATE_SHIFT
from sim.core.tiles import TILE_HIGH, TILE_LOW
from sim.hint.position import Position, format_position
from sim.hint.tracker import decisions


@dataclass
class Pending:
    """One decision to value: where it is, what was played, and the search's inputs.

    Attributes:
        ref: the sampled game the decision is in.
        index: its place among the game's decisions, from 0.
        round: the round of the game, from 1.
        turn: the turn within the round.
        seat: the deciding seat.
        players: the game's player count.
        strategy: the label of the strategy that decided.
        phase: the phase of the round (``phase_of``).
        kind: the kind of decision.
        moves: the legal moves, in the engine's order.
        played: index of the move played in ``moves``.
        position: the position as the deciding seat sees it.
        seed: the search's seed word.
    """

    ref: GameRef
    index: int  # its place among the game's decisions, from 0
    round: int
    turn: int
    seat: int
    players: int
    strategy: str
    phase: Phase
    kind: Kind
    moves: list[int]
    played: int  # index of the move played in ``moves``
    position: Position
    seed: int  # the search's seed word

    @property
    def names(self) -> list[str]:
        return [self.position.move_name(move) for move in self.moves]

    def position_text(self) -> str:
        return format_position(self.position)


def phase_of(position: Position) -> Phase:
    """The phase of the round a position is in: opening, boneyard, empty boneyard, or a drawn tile
    to place."""
    if not position.table:
        return Phase.OPENING
    if position.drawn >= 0:
        return Phase.DRAWN
    return Phase.BONEYARD if position.boneyard > 0 else Phase.EMPTY


def kind_of(position: Position, moves: list[int]) -> Kind:
    """What the choice is about (``settings.Kind``, the first that applies)."""
    from sim.hint import kernel as hint_kernel

    layout = position.layout
    tiles = {move >> 2 for move in moves}
    doubles = {tile for tile in tiles if TILE_LOW[tile] == TILE_HIGH[tile]}
    if doubles and (layout >> SNIFF_STATE_SHIFT) & 3 == 0:
        return Kind.SNIFF
    if len(tiles) == 1:
        return Kind.END
    kernel = hint_kernel.load()
    scores = {bool(POINTS_FOR_COUNT[int(kernel.count(int(kernel.place(
        layout, move >> 2, move & 3))))]) for move in moves}
    if len(scores) > 1:
        return Kind.SCORING
    return Kind.DOUBLE if doubles else Kind.TILE


def game_decisions(ref: GameRef, events: list[dict], seed: int,
                   strategies: tuple[str, ...] = ()) -> list[Pending]:
    """Every decision of the game (of the seats playing ``strategies`` only, when given)."""
    start = events[0]
    players = int(start["players"])
    labels = list(start.get("strategies") or ["?"] * players)
    found = []
    index = 0
    for decision in decisions(events, 0):
        position = decision.position
        moves = position.legal_moves()
        if len(moves) < 2:
            continue
        place = index
        index += 1
        strategy = str(labels[decision.seat]) if decision.seat < len(labels) else "?"
        if strategies and strategy not in strategies:
            continue
        if decision.move not in moves:
            raise_illegal(ref, decision.round, decision.turn)
        key = source_seed(seed, f"{ref.source}|{ref.game}|{place}")
        found.append(Pending(ref, place, decision.round, decision.turn, decision.seat,
                             players, strategy, phase_of(position), kind_of(position, moves),
                             moves, moves.index(decision.move), position, key))
    return found


def raise_illegal(ref: GameRef, round_number: int, turn: int) -> None:
    from sim.errors import SniffError

    raise SniffError(f"{ref.source} game {ref.game}, round {round_number} placement {turn}: "
                     "the move played is not legal in the position rebuilt from its events")


def search_inputs(pending: list[Pending]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """The decisions as the batched search's arrays: observations, moves, move counts and
    seed words."""
    count = len(pending)
    observations = np.zeros((count, len(pending[0].position.observation()) if count else 1),
                            dtype=np.int64)
    moves = np.full((count, engine.MAX_MOVES), engine.NO_MOVE, dtype=np.int64)
    n_moves = np.zeros(count, dtype=np.int64)
    seeds = np.zeros(count, dtype=np.uint64)
    for row, item in enumerate(pending):
        observations[row] = item.position.observation()
        moves[row, : len(item.moves)] = item.moves
        n_moves[row] = len(item.moves)
        seeds[row] = np.uint64(item.seed)
    return observations, moves, n_moves, seeds


__all__ = ["game_decisions", "kind_of", "Pending", "phase_of"]
