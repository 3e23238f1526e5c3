"""One game on a resumable one-game :class:`~sim.kernels.batch.GameBatch`, told as the same
trace events ``sniff trace`` writes.

Why this way: a web request cannot hold a compiled call open, and playing the game again
from its seed on every request (the old design) cost a whole game per move and needed one
global lock. A ``GameBatch`` keeps the game's progress in arrays and pauses at the person's
seat (an outside seat), so a move is one short compiled call, any number of games run side
by side, and a takeback is a copy of the batch kept from before the move.

The batch runs with ``external_chance``: it also pauses at each deal and each draw, and this
module answers with exactly the deck and the tiles the engine itself would deal for this
seed and game (``engine.deal_round``'s stream), so a served game is the game ``sniff trace``
and ``sniff simulate`` play for the same seed. Those pauses are also where the events come
from: the round's public record (in every seat's observation: placements, draws, passes),
the tiles this module dealt and drew, the layout rules of ``sim.core.layout`` for the count,
and the round's row for its settlement. ``tests/sim/serve/test_table.py`` checks the events
against ``sniff trace``'s for whole games.

Why not the batch's engine event buffer (``GameBatch(events=...)``, which ``sniff play``
uses): it must hold a whole game's rows up front (``ROUND_CAP`` rounds of up to 174 rows of
44 int64, about 12 MB), for every game the server keeps and for every copy kept for a
takeback. The record costs nothing extra, so a served game and each kept copy are a few KB.
"""

from __future__ import annotations

import numpy as np

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import (
    ARM_NAMES,
    ARM_VALUE,
    EMPTY_LAYOUT,
    decode_ends,
)
from sim.core.record import DRAW, EVENT_BITS, EVENTS_PER_WORD, PASS
from sim.core.rng import seed_word
from sim.core.seating import team_of
from sim.core.tiles import N_TILES, tile_name
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import KIND_DEAL, KIND_DRAW, KIND_FORCED
from sim.kernels.generate import engine_kernel

__all__: list[str] = []  # nothing here is used outside its room

GAME = 0  # the one game of the batch
# The layout's rules, called from Python through the engine's cached ``layout_rule`` (an
# ``@njit`` function called from Python would be compiled in every server process).
PLACE_TILE, MOVE_POINTS, COUNT_ENDS, POINTS_FOR_COUNT, ARM_FIELD = range(5)


def layout_rule(rule: int, layout: int, a: int = 0, b: int = 0) -> int:
    """``place_tile(layout, a, b)``, ``move_points(layout, a)``, ``count_ends(layout)``,
    ``points_for_count(a)`` or ``arm_field(layout, a)`` of ``sim.core.layout``, by ``rule``."""
    return int(engine_kernel(("layout_rule",)).layout_rule(rule, int(layout), int(a), int(b)))


def record_entries(observation: np.ndarray, start: int) -> list[tuple[int, int, int]]:
    """The round's public record from entry ``start`` on: (kind, seat, move) each."""
    base = view.RECORD
    entries = []
    for index in range(start, int(observation[base])):
        word = int(observation[base + 1 + index // EVENTS_PER_WORD])
        bits = (word >> (EVENT_BITS * (index % EVENTS_PER_WORD))) & ((1 << EVENT_BITS) - 1)
        entries.append((bits >> 9, (bits >> 7) & 3, bits & 127))
    return entries


class BatchTable:
    """Drives one game of a ``GameBatch`` to each decision of its outside seat, writing the
    game's trace events (``events``) as it goes. ``start`` is the trace's game_start event."""

    def __init__(self, batch: GameBatch, start: dict) -> None:
        self.batch, self.players = batch, batch.players
        self.events: list[dict] = [start]
        self.layout = EMPTY_LAYOUT
        self.round = 0
        self.scores = [0] * len(batch.scores[GAME])
        self.seen = 0  # record entries of this round turned into events
        self.drawn: list[int] = []  # tiles drawn this round, in order (the record hides them)
        self.deck = np.zeros(N_TILES, dtype=np.int64)
        self.next_leader = -1
        self.run()

    # ------------------------------------------------------------------ playing
    def decision(self):
        """The pending decision of the outside seat (row 0 of ``pending()``), or None."""
        pending = self.batch.pending()
        return None if len(pending) == 0 else pending

    def play(self, move: int) -> None:
        """The outside seat's move (an action id), then on to its next decision."""
        self.batch.advance(np.array([move], dtype=np.int64))
        self.run()

    def run(self) -> None:
        """Answer chance (deals, draws) until the outside seat decides or the game ends."""
        while True:
            self._catch_up()
            pending = self.batch.pending()
            if len(pending) == 0:
                self._round_end()
                self._game_end()
                return
            kind = int(pending.kinds[0])
            if kind == KIND_DEAL:
                self._round_end()
                self._deal()
                self.batch.advance(np.zeros(1, dtype=np.int64))
            elif kind == KIND_DRAW:
                position = N_TILES - len(self.batch.boneyard(GAME))
                tile = int(self.deck[position])
                self.drawn.append(tile)
                self.batch.advance(np.array([tile], dtype=np.int64))
            else:
                return

    def forced(self) -> bool:
        pending = self.batch.pending()
        return len(pending) > 0 and int(pending.kinds[0]) == KIND_FORCED

    # ------------------------------------------------------------------ chance
    def _deal(self) -> None:
        """The engine's own deal of the next round, given to the batch; its round_start."""
        scratch = np.zeros(engine.STATE_SIZE, dtype=np.int64)
        scratch[engine.PLAYERS] = self.players
        leader = -1 if self.batch.needs_leader(GAME) else self.next_leader
        leader = int(engine_kernel(("deal_round",)).deal_round(
            scratch, seed_word(self.batch.seed), int(self.batch.deal_ids[GAME]), self.round + 1,
            -1, leader, np.zeros(1, dtype=np.uint64)))
        self.deck = scratch[engine.DECK : engine.DECK + N_TILES].copy()
        self.batch.deal(GAME, self.deck, leader if self.batch.needs_leader(GAME) else -1)
        self.round += 1
        self.layout, self.seen, self.drawn = EMPTY_LAYOUT, 0, []
        size = int(engine.HAND_SIZE_FOR_PLAYERS[self.players])
        hands = [sorted(int(t) for t in self.deck[s * size : (s + 1) * size])
                 for s in range(self.players)]
        self.events.append({
            "event": "round_start", "round": self.round, "leader": leader,
            "hands": [[tile_name(t) for t in hand] for hand in hands],
            "boneyard": [tile_name(int(t)) for t in self.deck[self.players * size :]],
        })

    # ------------------------------------------------------------------ events
    def _catch_up(self) -> None:
        """The record's new entries of this round as play, draw and pass events."""
        if self.round == 0:
            return
        observation = self.batch.observe(GAME, 0)
        for kind, seat, move in record_entries(observation, self.seen):
            self.seen += 1
            if kind == DRAW:
                self.events.append({"event": "draw", "seat": seat,
                                    "tile": tile_name(self.drawn.pop(0))})
            elif kind == PASS:
                self.events.append({"event": "pass", "seat": seat})
            else:
                self._placement(seat, move)

    def _placement(self, seat: int, move: int) -> None:
        tile, arm = move >> 2, move & 3
        opening = self.layout == EMPTY_LAYOUT
        matched = None if opening else layout_rule(ARM_FIELD, self.layout, arm) & ARM_VALUE
        self.layout = layout_rule(PLACE_TILE, self.layout, tile, arm)
        count = layout_rule(COUNT_ENDS, self.layout)
        points = layout_rule(POINTS_FOR_COUNT, 0, count)
        self.scores[team_of(seat, self.players)] += points
        self.events.append({
            "event": "play", "seat": seat, "tile": tile_name(tile, matched),
            "end": None if opening else ARM_NAMES[arm], "count": count, "points": points,
            "ends": decode_ends(self.layout), "scores": list(self.scores)})

    def _round_end(self) -> None:
        """The settlement of a round that ended since the last pause (none at a win on the
        spot, which settles nothing)."""
        if self.round == 0 or self.events[-1]["event"] in ("round_end", "game_end"):
            return
        row = self.batch.round_row(GAME)
        reason = int(row[engine.ROUND_END_REASON])
        if reason == engine.End.TARGET:
            return
        self.scores = [int(s) for s in self.batch.scores[GAME]]
        domino = int(row[engine.ROUND_DOMINO_SEAT])
        self.next_leader = domino if reason == engine.End.DOMINO else -1
        self.events.append({
            "event": "round_end", "round": self.round, "reason": engine.END_NAMES[reason],
            "winner_seat": domino if reason == engine.End.DOMINO else None,
            "hand_pips": [int(row[engine.ROUND_HAND_PIPS + s]) for s in range(self.players)],
            "penalties": [int(row[engine.ROUND_PENALTY + s]) for s in range(self.players)],
            "scores": list(self.scores)})

    def _game_end(self) -> None:
        if self.events[-1]["event"] == "game_end":
            return
        winner = int(self.batch.winners[GAME])
        self.events.append({
            "event": "game_end", "winner": winner if winner >= 0 else None,
            "reason": "target" if winner >= 0 else "round_cap",
            "scores": [int(s) for s in self.batch.scores[GAME]], "rounds": self.round})

    def copy(self) -> BatchTable:
        """An independent copy (the batch copied): what a takeback returns to."""
        twin = object.__new__(BatchTable)
        twin.__dict__.update(self.__dict__)
        twin.batch = self.batch.copy()
        twin.events = list(self.events)
        twin.scores, twin.drawn = list(self.scores), list(self.drawn)
        twin.deck = self.deck.copy()
        return twin
