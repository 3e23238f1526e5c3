"""Positions rebuilt from a game's trace events: as its player saw each one.

:class:`PublicTracker` follows a game's events and keeps only what every seat may know (the
table, the scores, the hand sizes, each seat's known lacks) beside one seat's own hand, so
the position it gives is what that seat saw (``sniff play --hint``, ``sniff serve``'s hints
and reviews); :func:`decisions` gives every placement of a traced game with the position
before it (``sniff replay --analyze``, ``sniff analyze``), and :func:`position_from_trace`
the one before a given placement (``sniff hint --trace``). Apart from
``sim.hint.position`` (what a position is, its text form and checks), which knows nothing
of traces.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from sim.core import engine
from sim.core.layout import ARM_NAMES, EMPTY_LAYOUT
from sim.core.seating import team_count
from sim.core.tiles import parse_tile
from sim.errors import SettingError, SniffError
from sim.hint.position import OPENING, Position

__all__ = ["PublicTracker", "decisions", "game_slice", "position_from_trace"]


def _kernel():
    from sim.hint import kernel as hint_kernel

    return hint_kernel.load()


class PublicTracker:
    """Follows one game's trace events and gives the position of any seat at any point.

    Only the mover's own hand is read from the dealt hands; the others enter as sizes, and
    lacks follow the engine's rule (``sim.core.observation``): a seat that draws lacks the values
    open then (reset at each new draw), a pass adds the values open then.
    """

    def __init__(self, players: int, target: int) -> None:
        self.players, self.target = players, target
        self.scores = [0] * team_count(players)
        self.hands: list[set[int]] = [set() for _ in range(players)]
        self.table: list[tuple[int, int]] = []
        self.layout = EMPTY_LAYOUT
        self.boneyard = 0
        self.lacks = [0] * players
        self.round = 0
        self.leader = 0
        self.turn = 0  # placements so far in this round
        self.last: dict | None = None
        self._kernel = _kernel()

    def apply(self, event: dict) -> None:
        kind = event["event"]
        if kind == "round_start":
            self.round, self.leader = int(event["round"]), int(event["leader"])
            self.hands = [{parse_tile(t) for t in hand} for hand in event["hands"]]
            self.boneyard = len(event["boneyard"])
            self.table, self.layout, self.turn = [], EMPTY_LAYOUT, 0
            self.lacks = [0] * self.players
        elif kind == "play":
            seat, tile = int(event["seat"]), parse_tile(event["tile"])
            arm = OPENING if event["end"] is None else ARM_NAMES.index(event["end"])
            self.table.append((tile, arm))
            self.layout = int(self._kernel.place(self.layout, tile, max(arm, 0)))
            self.hands[seat].discard(tile)
            self.turn += 1
        elif kind == "draw":
            seat = int(event["seat"])
            self.hands[seat].add(parse_tile(event["tile"]))
            self.boneyard -= 1
            self.lacks[seat] = int(self._kernel.open_values(self.layout))
        elif kind == "pass":
            self.lacks[int(event["seat"])] |= int(self._kernel.open_values(self.layout))
        if "scores" in event:
            self.scores = [int(s) for s in event["scores"]]
        self.last = event

    def drawn_by(self, seat: int) -> int:
        """The tile ``seat`` has just drawn and must place, or -1."""
        last = self.last
        if last is not None and last["event"] == "draw" and int(last["seat"]) == seat:
            return parse_tile(last["tile"])
        return -1

    def position(self, seat: int) -> Position:
        """The position of ``seat`` now, as if it were to place a tile."""
        return Position(
            players=self.players, seat=seat, hand=tuple(sorted(self.hands[seat])),
            table=tuple(self.table), scores=tuple(self.scores),
            sizes=tuple(len(hand) for hand in self.hands), boneyard=self.boneyard,
            lacks=tuple(self.lacks), round=self.round, leader=self.leader,
            target=self.target, drawn=self.drawn_by(seat),
        )


@dataclass(frozen=True)
class Decision:
    """A placement of a traced game and the position just before it."""

    round: int
    turn: int  # the placement's number in its round, from 1
    seat: int
    move: int  # the move played, ``tile * 4 + arm``
    position: Position


def game_slice(events: list[dict], game: int) -> list[dict]:
    """The events of game ``game`` (0-based position in the trace), ``game_start`` first."""
    starts = [i for i, event in enumerate(events) if event.get("event") == "game_start"]
    if not starts:
        raise SniffError("the trace holds no game (no game_start event)")
    if not 0 <= game < len(starts):
        raise SettingError(f"{{game={game}}} is out of range: the trace holds {len(starts)} "
                         f"game{'s' * (len(starts) != 1)} (0..{len(starts) - 1})")
    end = starts[game + 1] if game + 1 < len(starts) else len(events)
    return events[starts[game]:end]


def decisions(events: list[dict], game: int = 0) -> Iterator[Decision]:
    """Every placement of a game with the position before it, in order (a generator)."""
    chosen = game_slice(events, game)
    start = chosen[0]
    players = int(start["players"])
    target = int(start.get("target", engine.TARGET_FOR_PLAYERS[players]))
    tracker = PublicTracker(players, target)
    for event in chosen[1:]:
        if event["event"] == "play":
            seat, tile = int(event["seat"]), parse_tile(event["tile"])
            arm = 0 if event["end"] is None else ARM_NAMES.index(event["end"])
            position = tracker.position(seat)
            yield Decision(tracker.round, tracker.turn + 1, seat, tile * 4 + arm, position)
        tracker.apply(event)


def position_from_trace(events: list[dict], game: int, round_number: int,
                        turn: int) -> Decision:
    """The decision before placement ``turn`` (from 1) of round ``round_number`` of a game."""
    turns: dict[int, int] = {}
    for decision in decisions(events, game):
        turns[decision.round] = decision.turn
        if decision.round == round_number and decision.turn == turn:
            return replace(decision, position=decision.position.check())
    if round_number not in turns:
        rounds = f"1..{max(turns)}" if turns else "none"
        raise SettingError(f"{{round_number={round_number}}} is not in game {game} of the trace "
                         f"(its rounds: {rounds})")
    raise SettingError(f"{{turn={turn}}} is not in round {round_number} of game {game}: it "
                       f"has placements 1..{turns[round_number]}")

