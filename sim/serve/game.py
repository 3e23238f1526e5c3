"""One browser game, played by the compiled engine and replayed from its moves on each request.

Why replay: ``sim.table.play`` runs a whole game inside one call of the compiled kernel and
asks the person through a callback. A web request cannot hold that call open without a
thread per tab, so instead each request plays the game again from its seed with the
person's moves so far (the engine is deterministic: the same seed and the same choices give
the same game, bots included) and stops at the person's next decision by raising
:class:`Paused` from the callback. A whole game takes a few hundredths of a second, so
replaying is cheaper than keeping threads, and a session is only its seed and its moves.

The human callback of ``sim.table.human`` is one global, so games are played one at a time
(``_ENGINE``); everything the person sees comes from ``PlayGame``'s own event decoding and
text, reused here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sim.core import engine
from sim.core.tiles import N_TILES, tile_name
from sim.errors import SniffError
from sim.table.play import PlayGame, person_lineup
from strategies import StrategySpec

_ENGINE = threading.Lock()  # one game in the kernel at a time: the callback is a global


class Paused(SniffError):
    """Raised from the person's callback: the game reached a decision not yet made."""


class IllegalMove(SniffError):
    """A move that is not one of the legal placements offered."""


class StaleMove(SniffError):
    """A move or acknowledgement sent for a decision already made (a double click)."""


def move_name(move: int) -> str:
    """A move id in the player's words: its tile and, for a known end, the end."""
    if not 0 <= move < 4 * N_TILES:
        return "that tile"
    return f"{tile_name(move >> 2)} on {'LRUD'[move & 3]}"


@dataclass
class Decision:
    """The person's pending decision: the layout word, forced (a drawn tile), legal moves."""

    layout: int
    forced: bool
    options: list[int]


class _Scripted(PlayGame):
    """``PlayGame`` whose decisions come from a list of moves instead of the keyboard; it
    records the text ``PlayGame`` writes for each event (the person's view of it)."""

    def __init__(self, lineup, seat: int, seed: int, moves: list[int]) -> None:
        self.texts: list[str] = []
        super().__init__(lineup, seat, seed, read_line=lambda: "", write=self.texts.append)
        self.script = list(moves)
        self.pending: Decision | None = None

    def decide(self, layout: int, forced: bool, options: list[int]) -> int:
        self.catch_up()
        if self.script:
            move = self.script.pop(0)
            if move not in options:
                raise IllegalMove(f"move {move} is not a legal placement here")
            self.chosen = move
            return options.index(move)
        self.pending = Decision(int(layout), bool(forced), list(options))
        raise Paused("waiting for the person's move")


@dataclass
class WebGame:
    """A game's identity (lineup, seat, seed, house target) and the person's moves so far.

    ``events`` and ``texts`` (one text per event, the person's view) and ``pending`` are
    recomputed by :meth:`advance`. ``target`` below the engine's own ends the game at the
    first placement that reaches it (the immediate win of the rules, at a lower mark); the
    opponents still plan for the engine's target, which docs/serve.md says.
    """

    players: int
    seat: int
    opponents: list[StrategySpec]
    seed: int
    target: int
    moves: list[int] = field(default_factory=list)
    seen_rounds: int = 0  # settlements the person has acknowledged
    events: list[dict] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    pending: Decision | None = None
    version: int = 0  # moves on with every change (a move, a settlement seen, a takeback),
    # so a click made on an older view is recognised and refused

    def __post_init__(self) -> None:
        self.lock = threading.Lock()  # one request at a time changes this game
        self.lineup = person_lineup(self.players, self.seat, self.opponents)
        full = int(engine.TARGET_FOR_PLAYERS[self.players])
        if not 5 <= self.target <= full or self.target % 5:
            raise SniffError(f"target must be a multiple of 5 from 5 to {full} with "
                             f"{self.players} players, got {self.target}")
        self.advance()

    @property
    def over(self) -> bool:
        return bool(self.events) and self.events[-1]["event"] == "game_end"

    def advance(self) -> None:
        """Play the game from its seed with the moves so far, up to the next decision."""
        game = _Scripted(self.lineup, self.seat, self.seed, self.moves)
        with _ENGINE:
            try:
                game.run()
                game.pending = None
            except Paused:
                pass
        self.events, self.texts, self.pending = game.events, game.texts, game.pending
        self._house_target()

    def _house_target(self) -> None:
        """Cut the game at the first placement that reaches a house target."""
        if self.target >= int(engine.TARGET_FOR_PLAYERS[self.players]):
            return
        for index, event in enumerate(self.events):
            if event["event"] == "play" and max(event["scores"]) >= self.target:
                scores = event["scores"]
                rounds = max((e["round"] for e in self.events[:index] if "round" in e),
                             default=1)
                end = {"event": "game_end", "winner": scores.index(max(scores)),
                       "reason": "target", "scores": scores, "rounds": rounds}
                self.events = self.events[: index + 1] + [end]
                self.texts = self.texts[: index + 1] + [
                    f"game over: {max(scores)} points reach the target {self.target}"]
                self.pending = None
                return


    def _check_version(self, version: int) -> None:
        if version != self.version:
            raise StaleMove("that click was for an earlier turn and was not played; "
                            "the table now shows the current turn")

    def play(self, move: int, version: int) -> None:
        """Make the person's pending decision; an illegal or stale move changes nothing."""
        with self.lock:  # two tabs' clicks on one game must not both answer one decision
            self._check_version(version)
            if self.pending is None or self.settling() is not None:
                raise IllegalMove("it is not your turn to place a tile now")
            if move not in self.pending.options:
                raise IllegalMove(f"{move_name(move)} cannot be played now: choose one of "
                                  f"the lit tiles")
            self.moves.append(move)
            try:
                self.advance()
            except BaseException:
                self.moves.pop()  # the game stays as it was
                self.advance()
                raise
            self.version += 1

    def can_take_back(self) -> bool:
        """Whether the person has a move to take back (the game is not over)."""
        return bool(self.moves) and not self.over

    def take_back(self, version: int) -> None:
        """Undo the person's last move and the bots' replies to it: the game is back at that
        decision, the same deal and the same bots (their moves follow from the seed)."""
        with self.lock:
            self._check_version(version)
            if not self.can_take_back():
                raise IllegalMove("there is no move of yours to take back")
            self.moves.pop()
            self.advance()
            self.seen_rounds = sum(1 for e in self.events if e["event"] == "round_end")
            self.version += 1

    def settling(self) -> int | None:
        """The index of a round_end the person has not acknowledged yet, else None: the page
        stops there so a settlement is seen before the next deal."""
        ended = 0
        for index, event in enumerate(self.events):
            if event["event"] == "round_end":
                ended += 1
                if ended > self.seen_rounds:
                    following = self.events[index + 1 : index + 2]
                    if following and following[0]["event"] == "game_end":
                        return None  # the game is over: nothing left to hide
                    return index
        return None

    def acknowledge(self, version: int) -> None:
        """The person has seen the settlement: go on to the next round."""
        with self.lock:
            self._check_version(version)
            if self.settling() is None:
                raise IllegalMove("there is no settlement to acknowledge")
            self.seen_rounds += 1
            self.version += 1

    def visible(self) -> int:
        """How many events the page may show now (the rest is the future or hidden)."""
        stop = self.settling()
        return len(self.events) if stop is None else stop + 1
