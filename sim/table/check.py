"""Whether a trace is a game the rules allow: ``sniff replay`` shows only such a trace.

A trace is text: edited by hand (a tile the seat does not hold, a wrong seat or score, a
deleted line) it still renders, as an impossible game. :func:`check_game` walks one game's
events with the engine's own rules code, the compiled layout functions (legal moves,
placing, counting, as ``sim.hint.position`` uses them) and the engine's constants (hand sizes,
targets, the settlement's rounding), and stops at the first event that the game could not
have produced: the deal (every tile once, the hand sizes), whose turn it is, a placement's
legality, count, points, ends and scores, a draw (only without a legal placement, the
boneyard's next tile, a drawn tile that fits is placed at once), a pass (only with an empty
boneyard), the settlement and the game's end. The message names the event and what is
wrong, in one line.
"""

from __future__ import annotations

import numpy as np

from sim.core import engine
from sim.core.layout import ARM_NAMES, EMPTY_LAYOUT, POINTS_FOR_COUNT, decode_ends
from sim.core.seating import PLAYER_COUNTS, team_count, team_of
from sim.core.tiles import N_TILES, TILE_NAMES, TILE_PIPS, parse_tile
from sim.errors import SniffError

__all__ = ["check_game"]

KEYS = {
    "game_start": ("players", "target"),
    "round_start": ("round", "leader", "hands", "boneyard"),
    "play": ("seat", "tile", "end", "count", "points", "ends", "scores"),
    "draw": ("seat", "tile"),
    "pass": ("seat",),
    "round_end": ("round", "reason", "winner_seat", "hand_pips", "penalties", "scores"),
    "game_end": ("winner", "reason", "scores", "rounds"),
}


class _Bad(Exception):
    """What is wrong with the event being checked."""


def _tile(text) -> int:
    if not isinstance(text, str):
        raise _Bad(f"tile {text!r} is not 'a-b'")
    try:
        return parse_tile(text)
    except ValueError as error:
        raise _Bad(str(error)) from None


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"{what} {value!r} is not a whole number")
    return value


def _expect(what: str, got, want) -> None:
    if got != want:
        raise _Bad(f"{what} is {got!r}, but the game gives {want!r}")


class _Game:
    """One game's state as the rules move it; one method per event kind."""

    def __init__(self) -> None:
        from sim.hint.kernel import load

        self.kernel = load()
        self.moves = np.full(engine.MAX_MOVES, -1, dtype=np.int64)
        self.phase = "start"
        self.players = self.target = self.round = self.turn = 0
        self.scores: list[int] = []
        self.hands: list[int] = []  # tile masks
        self.boneyard: list[int] = []
        self.drawn = 0
        self.layout = EMPTY_LAYOUT
        self.opened = False
        self.drawing = False
        self.forced = -1  # a drawn tile that fits: it must be placed now
        self.domino_seat: int | None = None
        self.last_domino: int | None = None
        self.winner: int | None = None

    # --- rules read from the engine's code

    def legal(self, seat: int, drawn: int = -1) -> list[int]:
        n = int(self.kernel.moves_of(self.layout, self.hands[seat], drawn, self.moves))
        return [int(m) for m in self.moves[:n]]

    def blocked(self) -> bool:
        return self.drawn >= len(self.boneyard) and not any(
            self.legal(seat) for seat in range(self.players))

    def seat(self, event: dict, kind: str) -> int:
        seat = _int(event["seat"], "seat")
        if not 0 <= seat < self.players:
            raise _Bad(f"seat {seat} is not a seat of a {self.players}-player game")
        if self.phase != "round":
            raise _Bad(self.out_of_place(kind))
        if seat != self.turn:
            raise _Bad(f"{kind} by seat {seat}, but it is seat {self.turn}'s turn")
        return seat

    def out_of_place(self, kind: str) -> str:
        return {
            "won": f"{kind} after a team reached the target {self.target}: the game is over",
            "domino": f"{kind} after seat {self.domino_seat} played its last tile: the round "
                      "is over",
            "must_block": f"{kind} while the round is blocked (nobody can place)",
            "need_round": f"{kind} outside a round (a round_start or game_end comes next)",
            "over": f"{kind} after game_end",
            "start": f"{kind} before game_start",
        }.get(self.phase, f"{kind} is not allowed here")

    # --- events

    def game_start(self, event: dict) -> None:
        if self.phase != "start":
            raise _Bad("game_start in the middle of a game")
        players = _int(event["players"], "players")
        if players not in PLAYER_COUNTS:
            raise _Bad(f"players is {players}, not 2, 3 or 4")
        self.players, self.target = players, int(engine.TARGET_FOR_PLAYERS[players])
        _expect("target", event["target"], self.target)
        self.scores = [0] * team_count(players)
        self.phase = "need_round"

    def round_start(self, event: dict) -> None:
        if self.phase != "need_round":
            raise _Bad(self.out_of_place("round_start"))
        _expect("round", event["round"], self.round + 1)
        leader = _int(event["leader"], "leader")
        if not 0 <= leader < self.players:
            raise _Bad(f"leader {leader} is not a seat")
        if self.last_domino is not None and leader != self.last_domino:
            raise _Bad(f"leader is seat {leader}, but seat {self.last_domino} went out last "
                       "round and leads")
        hands, size = event["hands"], int(engine.HAND_SIZE_FOR_PLAYERS[self.players])
        if not isinstance(hands, list) or len(hands) != self.players or any(
                not isinstance(hand, list) or len(hand) != size for hand in hands):
            raise _Bad(f"hands must be {self.players} hands of {size} tiles")
        if not isinstance(event["boneyard"], list):
            raise _Bad("boneyard must be a list of tiles")
        dealt = [[_tile(t) for t in hand] for hand in hands]
        boneyard = [_tile(t) for t in event["boneyard"]]
        every = [t for hand in dealt for t in hand] + boneyard
        if sorted(every) != list(range(N_TILES)):
            twice = sorted({TILE_NAMES[t] for t in every if every.count(t) > 1})
            missing = sorted(TILE_NAMES[t] for t in set(range(N_TILES)) - set(every))
            raise _Bad(f"the hands and the boneyard are not the 28 tiles once each "
                       f"(twice: {', '.join(twice) or 'none'}; missing: "
                       f"{', '.join(missing) or 'none'})")
        self.round += 1
        self.hands = [sum(1 << t for t in hand) for hand in dealt]
        self.boneyard, self.drawn = boneyard, 0
        self.layout, self.opened = EMPTY_LAYOUT, False
        self.turn, self.drawing, self.forced = leader, False, -1
        self.phase = "round"

    def play(self, event: dict) -> None:
        seat = self.seat(event, "play")
        tile, end = _tile(event["tile"]), event["end"]
        if not (self.hands[seat] >> tile) & 1:
            raise _Bad(f"seat {seat} plays {event['tile']}, which it does not hold")
        if self.opened and end not in ARM_NAMES:
            raise _Bad(f"end {end!r} is not one of L, R, U, D")
        if not self.opened and end is not None:
            raise _Bad(f"the opening tile has end null, not {end!r}")
        arm = 0 if end is None else ARM_NAMES.index(end)
        legal = self.legal(seat, self.forced)
        if tile * 4 + arm not in legal:
            if self.forced >= 0:
                raise _Bad(f"seat {seat} just drew {TILE_NAMES[self.forced]}, which fits and "
                           "is placed at once")
            why = "it holds no legal placement" if not legal else "that is not a legal move"
            raise _Bad(f"seat {seat} plays {event['tile']} on {end}: {why}")
        self.layout = int(self.kernel.place(self.layout, tile, arm))
        self.opened = True
        self.hands[seat] &= ~(1 << tile)
        count = int(self.kernel.count(self.layout))
        _expect("count", event["count"], count)
        points = int(POINTS_FOR_COUNT[count]) if count < len(POINTS_FOR_COUNT) else 0
        _expect("points", event["points"], points)
        _expect("ends", event["ends"], decode_ends(self.layout))
        team = team_of(seat, self.players)
        self.scores[team] += points
        _expect("scores", event["scores"], self.scores)
        self.drawing, self.forced = False, -1
        if self.scores[team] >= self.target:
            self.phase, self.winner = "won", team
        elif not self.hands[seat]:
            self.phase, self.domino_seat = "domino", seat
        else:
            self.turn = (seat + 1) % self.players

    def draw(self, event: dict) -> None:
        seat = self.seat(event, "draw")
        if not self.opened:
            raise _Bad(f"seat {seat} draws before the leader opened")
        if self.forced >= 0:
            raise _Bad(f"seat {seat} draws again, but {TILE_NAMES[self.forced]} it just drew "
                       "fits and is placed at once")
        if self.legal(seat):
            raise _Bad(f"seat {seat} draws while it holds a legal placement")
        if self.drawn >= len(self.boneyard):
            raise _Bad(f"seat {seat} draws from an empty boneyard")
        tile, want = _tile(event["tile"]), self.boneyard[self.drawn]
        if tile != want:
            raise _Bad(f"seat {seat} draws {event['tile']}, but the boneyard's next tile is "
                       f"{TILE_NAMES[want]}")
        self.drawn += 1
        self.hands[seat] |= 1 << tile
        self.drawing = True
        self.forced = tile if self.legal(seat, tile) else -1

    def pass_(self, event: dict) -> None:
        seat = self.seat(event, "pass")
        if not self.opened:
            raise _Bad(f"seat {seat} passes before the leader opened")
        if self.forced >= 0 or self.legal(seat):
            raise _Bad(f"seat {seat} passes while it holds a legal placement")
        if self.drawn < len(self.boneyard):
            raise _Bad(f"seat {seat} passes with {len(self.boneyard) - self.drawn} tile(s) "
                       "left in the boneyard")
        self.drawing = False
        self.turn = (seat + 1) % self.players
        if self.blocked():
            self.phase = "must_block"

    def round_end(self, event: dict) -> None:
        if self.phase not in ("round", "domino", "must_block"):
            raise _Bad(self.out_of_place("round_end"))
        _expect("round", event["round"], self.round)
        if self.phase == "domino":
            _expect("reason", event["reason"], "domino")
            _expect("winner_seat", event["winner_seat"], self.domino_seat)
            self.last_domino = self.domino_seat
        else:
            _expect("reason", event["reason"], "blocked")
            if self.drawing or not self.blocked():
                raise _Bad("round_end blocked, but a seat can still draw or place")
            _expect("winner_seat", event["winner_seat"], None)
            self.last_domino = None
        pips = [int(sum(TILE_PIPS[t] for t in range(N_TILES) if (hand >> t) & 1))
                for hand in self.hands]
        _expect("hand_pips", event["hand_pips"], pips)
        penalties = [int(engine.round_to_five.py_func(p)) for p in pips]
        _expect("penalties", event["penalties"], penalties)
        for seat, amount in enumerate(penalties):
            self.scores[team_of(seat, self.players)] -= amount
        _expect("scores", event["scores"], self.scores)
        self.phase = "need_round"

    def game_end(self, event: dict) -> None:
        if self.phase == "won":
            _expect("winner", event["winner"], self.winner)
            _expect("reason", event["reason"], "target")
        elif self.phase == "need_round" and self.round > 0:
            _expect("winner", event["winner"], None)
            _expect("reason", event["reason"], "round_cap")
        else:
            raise _Bad(self.out_of_place("game_end"))
        _expect("scores", event["scores"], self.scores)
        _expect("rounds", event["rounds"], self.round)
        self.phase = "over"


def check_game(events: list[dict], first: int = 1, what: str = "the trace",
               finished: bool = True) -> None:
    """Refuse a game (its events, ``game_start`` first) the rules cannot produce: one
    ``SniffError`` naming the first bad event (``first``: the number of ``events[0]`` in
    the file, counted from 1). With ``finished`` false, a game whose events stop before its
    end is accepted (every event so far is one the rules allow)."""
    game = _Game()
    for index, event in enumerate(events):
        kind = event.get("event")
        where = f"{what}: event {first + index} ({kind})"
        keys = KEYS.get(kind, ()) if isinstance(kind, str) else ()
        missing = [key for key in keys if key not in event]
        if kind not in KEYS or missing:
            lacks = f"it lacks {', '.join(missing)}" if missing else "an unknown kind of event"
            raise SniffError(f"{where} is not a valid trace event: {lacks}")
        try:
            if game.phase == "over":
                raise _Bad(game.out_of_place(kind))
            getattr(game, "pass_" if kind == "pass" else kind)(event)
        except _Bad as bad:
            raise SniffError(f"{where} is impossible: {bad}; not a game the rules allow "
                             "(edited?)") from None
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise SniffError(f"{where} is not a valid trace event ({type(error).__name__}: "
                             f"{error})") from None
    if finished and game.phase != "over":
        raise SniffError(f"{what}: the game ends after event {first + len(events) - 1} "
                         f"without its game_end ({game.out_of_place('the end of the trace')})")
