"""One browser game on a resumable one-game batch (``sim.serve.table``): a move is one short
compiled call, games run side by side, and nothing is played twice.

Why this shape: the person's seat is an outside seat of a ``GameBatch``, which pauses the
compiled game loop at each of the person's decisions and keeps the game's progress in
arrays, so a request makes its move and returns, with no thread held and no engine lock
(each game has its own lock: two clicks on one game must not both answer one decision). A
takeback returns to a copy of the table kept from before the move. The events are those of
``sniff trace`` for the same seed, so hints, the move list and the analysis read the same
events as everywhere else.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sim.core import engine
from sim.core import observation as view
from sim.core.layout import EMPTY_LAYOUT
from sim.core.tiles import N_TILES, tile_name
from sim.errors import SniffError
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import OUTSIDE, BatchSettings
from sim.kernels.trace import start_event
from sim.serve.table import MOVE_POINTS, BatchTable, layout_rule
from sim.table.play import GAME_ID, person_lineup
from strategies import StrategySpec

__all__ = ["warm_up"]

MAX_TAKEBACKS = 20  # tables kept from before the person's last moves


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


@dataclass
class WebGame:
    """A game's identity (lineup, seat, seed, house target) and its table.

    ``events`` (the trace so far) and ``pending`` follow the table after each change.
    ``target`` below the engine's own ends the game at the first placement that reaches it
    (the immediate win of the rules, at a lower mark); the opponents still plan for the
    engine's target, which docs/serve.md says.

    Attributes:
        players: the player count.
        seat: the person's seat.
        opponents: the strategies at the other seats.
        seed: the game's seed.
        target: the score that ends the game (the house target).
        moves: every decision made so far, in order.
        seen_rounds: settlements the person has acknowledged.
        events: the trace so far.
        pending: the decision the table waits for, or None.
        version: moves on with every change (a move, a settlement seen, a takeback), so a click made
            on an older view is recognised and refused.
    """

    players: int
    seat: int
    opponents: list[StrategySpec]
    seed: int
    target: int
    moves: list[int] = field(default_factory=list)
    seen_rounds: int = 0  # settlements the person has acknowledged
    events: list[dict] = field(default_factory=list)
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
        seats = [OUTSIDE if s == self.seat else spec for s, spec in enumerate(self.lineup.seats)]
        batch = GameBatch(self.players, seats, 1, self.seed,
                          BatchSettings(first_game=GAME_ID, external_chance=True))
        self.table = BatchTable(batch, start_event(self.lineup, self.seed, GAME_ID,
                                                   batch.round_cap))
        self.kept: list[tuple[BatchTable, int]] = []  # for takebacks, newest last
        self._follow()

    @property
    def over(self) -> bool:
        return bool(self.events) and self.events[-1]["event"] == "game_end"

    def _follow(self) -> None:
        """The events and the pending decision from the table, cut at a house target."""
        self.events = list(self.table.events)
        pending = self.table.decision()
        self.pending = None
        if pending is not None:
            layout = int(pending.observations[0, view.LAYOUT])
            options = [int(m) for m in pending.moves[0, : pending.n_moves[0]]]
            self.pending = Decision(layout, self.table.forced(), options)
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
            before = self.table.copy()
            try:
                self.table.play(move)
            except BaseException:
                self.table = before  # the game stays as it was
                raise
            self.kept = [*self.kept[-(MAX_TAKEBACKS - 1):], (before, self.seen_rounds)]
            self.moves.append(move)
            self._follow()
            self.version += 1

    def can_take_back(self) -> bool:
        """Whether the person has a move to take back (the game is not over)."""
        return bool(self.kept) and not self.over

    def take_back(self, version: int) -> None:
        """Undo the person's last move and the bots' replies to it: the game is back at that
        decision, the same deal and the same bots (their moves follow from the seed)."""
        with self.lock:
            self._check_version(version)
            if not self.can_take_back():
                raise IllegalMove("there is no move of yours to take back")
            self.moves.pop()
            self.table, self.seen_rounds = self.kept.pop()
            self._follow()
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


def warm_up(opponent: str) -> threading.Thread:
    """Compile (or load) what a first game needs, in a thread of its own, while the person
    opens the page (the game's request then waits only for what is left), and start the
    background compile of the rest with the hint search first (``sim.kernels.shared``).
    Nothing is said: the page shows its own progress."""
    from sim.kernels import generate as kernels
    from sim.kernels.shared import start_background
    from strategies import parse_spec

    def play() -> None:
        with kernels.compile_notice(None):
            start_background(first=("hint",))
            # The batch path first, with greedy (compiled in a second): the background
            # compile meanwhile compiles the play-out policies, the default opponent among
            # them, which this thread then loads rather than compiles a second time.
            GameBatch(2, [OUTSIDE, "greedy"], 1, 0, BatchSettings(external_chance=True))
            WebGame(2, 0, [parse_spec(opponent)], 0, int(engine.TARGET_FOR_PLAYERS[2]))
            layout_rule(MOVE_POINTS, EMPTY_LAYOUT, 0)  # the table's rules, from Python

    thread = threading.Thread(target=play, name="sniff-warm-up", daemon=True)
    thread.start()
    return thread
