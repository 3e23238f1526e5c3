"""An independent, plain-Python model of the American Sniff rules, used as a test oracle.

The compiled engine in ``sim/`` packs the layout into bit fields for speed; a bug there is
easy to make and hard to see. This module restates the rules of ``docs/rules.md`` (and the
Spanish original it defers to) as directly as possible, sharing no code with the engine, so
that replaying the engine's game traces through it catches any disagreement.

``check_trace`` replays one game, from ``game_start`` to ``game_end``, and raises
``AssertionError`` at the first event that breaks a rule, naming the event index and what
differed. Nothing here is tuned for speed beyond staying simple (sets, small dicts).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from sim.reference.rules import (
    ALL_TILES,
    HAND_SIZE,
    TARGET,
    Layout,
    Tile,
    norm,
    parse_tile,
    penalty,
    points_for,
    team_count,
    team_of,
)

__all__ = ["check_trace", "split_games"]

# The exact keys of each event (game_start may carry free extra fields).
EVENT_KEYS = {
    "game_start": {"event", "players", "target"},
    "round_start": {"event", "round", "leader", "hands", "boneyard"},
    "play": {"event", "seat", "tile", "end", "count", "points", "ends", "scores"},
    "draw": {"event", "seat", "tile"},
    "pass": {"event", "seat"},
    "round_end": {
        "event", "round", "reason", "winner_seat", "hand_pips", "penalties", "scores",
    },
    "game_end": {"event", "winner", "reason", "scores", "rounds"},
}


# --------------------------------------------------------------------------- replay


class _Replay:
    """State of one game being replayed; one method per event kind.

    ``phase`` says what may come next:
      start       only game_start (event 0)
      need_round  round_start (after game_start), or also game_end round_cap (after a round)
      round       play / draw / pass by ``turn`` (or round_end if the table is blocked)
      domino      round_end domino by ``domino_seat``
      must_block  round_end blocked (a pass left nobody able to place)
      won         game_end target for ``winner``
      over        nothing
    """

    def __init__(self, stats: Counter | None) -> None:
        self.stats = stats if stats is not None else Counter()
        self.phase = "start"
        self.index = 0
        self.players = 0
        self.target = 0
        self.scores: list[int] = []
        self.round = 0
        self.rounds_seen = 0
        self.last_domino_winner: int | None = None
        self.hands: list[set[Tile]] = []
        self.boneyard: list[Tile] = []
        self.drawn = 0
        self.layout = Layout()
        self.leader = 0
        self.turn = 0
        self.drawing = False
        self.forced_tile: Tile | None = None
        self.domino_seat: int | None = None
        self.winner: int | None = None
        self.win_event = -1

    # ------------------------------------------------------------ helpers

    def fail(self, message: str) -> None:
        raise AssertionError(f"event {self.index}: {message}")

    def expect(self, what: str, got: Any, want: Any) -> None:
        if got != want:
            self.fail(f"{what} is {got!r}, expected {want!r}")

    def seat_field(self, event: dict) -> int:
        seat = event["seat"]
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.players:
            self.fail(f"seat {seat!r} is not a seat of a {self.players}-player game")
        return seat

    def tile_field(self, text: Any, what: str = "tile") -> Tile:
        try:
            return parse_tile(text)
        except (TypeError, ValueError) as error:
            self.fail(f"{what}: {error}")
        raise AssertionError  # unreachable

    def blocked(self) -> bool:
        """Boneyard empty and no seat holds a tile that fits an open end."""
        if self.drawn < len(self.boneyard):
            return False
        return all(self.layout.placement(hand) is None for hand in self.hands)

    def turn_check(self, seat: int, kind: str) -> None:
        if self.phase != "round":
            self.fail(self.phase_message(kind))
        if seat != self.turn:
            self.fail(f"{kind} by seat {seat}, but it is seat {self.turn}'s turn")

    def phase_message(self, kind: str) -> str:
        if self.phase == "won":
            return (
                f"{kind} after the play at event {self.win_event} took team {self.winner} "
                f"to the target {self.target}: the next event must be game_end"
            )
        if self.phase == "domino":
            return (
                f"{kind} after seat {self.domino_seat} played its last tile: the next "
                f"event must be round_end domino"
            )
        if self.phase == "must_block":
            return (
                f"{kind} while the round is blocked (boneyard empty, nobody can place): "
                f"the next event must be round_end blocked"
            )
        if self.phase == "need_round":
            return f"{kind} outside a round (expected round_start or game_end)"
        if self.phase == "over":
            return f"{kind} after game_end"
        if self.phase == "start":
            return f"{kind} before game_start"
        return f"{kind} not allowed here (phase {self.phase})"

    # ------------------------------------------------------------ events

    def game_start(self, event: dict) -> None:
        if self.phase != "start":
            self.fail("game_start in the middle of a game")
        players = event["players"]
        if players not in (2, 3, 4) or isinstance(players, bool):
            self.fail(f"players is {players!r}, must be 2, 3 or 4")
        self.players = players
        self.expect("target", event["target"], TARGET[players])
        self.target = TARGET[players]
        self.scores = [0] * team_count(players)
        self.phase = "need_round"
        self.stats["games"] += 1

    def round_start(self, event: dict) -> None:
        if self.phase != "need_round":
            self.fail(self.phase_message("round_start"))
        n = self.players
        self.expect("round", event["round"], self.round + 1)
        leader = event["leader"]
        if not isinstance(leader, int) or isinstance(leader, bool) or not 0 <= leader < n:
            self.fail(f"leader {leader!r} is not a seat")
        if self.last_domino_winner is not None and leader != self.last_domino_winner:
            self.fail(
                f"leader is seat {leader}, but seat {self.last_domino_winner} went out "
                f"(domino) last round and must lead"
            )
        hands_text, boneyard_text = event["hands"], event["boneyard"]
        if not isinstance(hands_text, list) or len(hands_text) != n:
            self.fail(f"hands must be a list of {n} hands")
        seen: list[Tile] = []
        hands: list[set[Tile]] = []
        for seat, hand_text in enumerate(hands_text):
            if not isinstance(hand_text, list) or len(hand_text) != HAND_SIZE[n]:
                self.fail(
                    f"seat {seat} is dealt {hand_text!r}; a {n}-player deal is "
                    f"{HAND_SIZE[n]} tiles"
                )
            hand = [self.low_high(text, f"seat {seat} hand") for text in hand_text]
            seen += hand
            hands.append(set(hand))
        if not isinstance(boneyard_text, list):
            self.fail("boneyard must be a list")
        boneyard = [self.low_high(text, "boneyard") for text in boneyard_text]
        seen += boneyard
        counts = Counter(seen)
        doubled = sorted(t for t, c in counts.items() if c > 1)
        missing = sorted(ALL_TILES - set(seen))
        if doubled or missing or len(seen) != 28:
            self.fail(
                f"hands + boneyard are not the 28 tiles once each: "
                f"repeated {doubled}, missing {missing}"
            )
        self.round += 1
        self.rounds_seen += 1
        self.hands = hands
        self.boneyard = boneyard
        self.drawn = 0
        self.layout = Layout()
        self.leader = self.turn = leader
        self.drawing = False
        self.forced_tile = None
        self.phase = "round"
        self.stats["rounds"] += 1

    def low_high(self, text: Any, what: str) -> Tile:
        tile = self.tile_field(text, what)
        if tile[0] > tile[1]:
            self.fail(f"{what}: tile {text!r} must be written low-high")
        return tile

    def play(self, event: dict) -> None:
        seat = self.seat_field(event)
        self.turn_check(seat, "play")
        written = self.tile_field(event["tile"])
        tile = norm(written)
        hand = self.hands[seat]
        end = event["end"]
        if self.drawing and self.forced_tile is None:
            self.fail(
                f"seat {seat} plays {event['tile']} after drawing a tile it could not "
                f"place: it holds no legal placement and must keep drawing or pass"
            )
        if self.forced_tile is not None and tile != self.forced_tile:
            f = self.forced_tile
            self.fail(
                f"seat {seat} plays {event['tile']}, but it just drew {f[0]}-{f[1]}, "
                f"which fits and must be played at once"
            )
        if tile not in hand:
            self.fail(f"seat {seat} plays {event['tile']}, which is not in its hand")
        layout = self.layout
        if not layout.opened:
            if end is not None:
                self.fail(f"the opening tile must have end null, got {end!r}")
            layout.open_with(written)
        else:
            if end is None:
                self.fail("end is null, but only the opening tile has no end")
            if not layout.fits(tile):
                self.fail(
                    f"seat {seat} plays {event['tile']} on {end}, but that tile fits no "
                    f"open end {layout.ends_dict()} (a seat with no legal placement must "
                    f"draw or pass)"
                )
            error = layout.place(tile, end)
            if error:
                self.fail(f"seat {seat} plays {event['tile']} on {end}: {error}")
            if end in ("U", "D"):
                self.stats["branch_play"] += 1
        hand.discard(tile)
        count = layout.count()
        self.expect("count", event["count"], count)
        points = points_for(count)
        self.expect("points", event["points"], points)
        self.expect("ends", event["ends"], layout.ends_dict())
        team = team_of(seat, self.players)
        self.scores[team] += points
        self.expect("scores", event["scores"], self.scores)
        if layout.later_double:
            self.stats["later_double_counted"] += 1
        self.stats["play"] += 1
        self.drawing = False
        self.forced_tile = None
        if self.scores[team] >= self.target:
            self.phase = "won"
            self.winner = team
            self.win_event = self.index
            if hand:
                self.stats["mid_round_win"] += 1
        elif not hand:
            self.phase = "domino"
            self.domino_seat = seat
        else:
            self.turn = (seat + 1) % self.players

    def draw(self, event: dict) -> None:
        seat = self.seat_field(event)
        self.turn_check(seat, "draw")
        if not self.layout.opened:
            self.fail(f"seat {seat} draws before the leader (seat {self.leader}) opened")
        if self.forced_tile is not None:
            f = self.forced_tile
            self.fail(
                f"seat {seat} draws again, but the tile it just drew ({f[0]}-{f[1]}) fits "
                f"and must be played at once"
            )
        legal = self.layout.placement(self.hands[seat])
        if legal is not None:
            (a, b), arm = legal
            self.fail(
                f"seat {seat} draws while holding a legal placement ({a}-{b} on {arm}); "
                f"a player who can place must place"
            )
        if self.drawn >= len(self.boneyard):
            self.fail(f"seat {seat} draws from an empty boneyard")
        tile = norm(self.tile_field(event["tile"]))
        want = self.boneyard[self.drawn]
        if tile != want:
            self.fail(
                f"seat {seat} draws {event['tile']}, but the next boneyard tile is "
                f"{want[0]}-{want[1]}"
            )
        self.drawn += 1
        self.hands[seat].add(tile)
        self.drawing = True
        self.forced_tile = tile if self.layout.fits(tile) else None
        self.stats["draw"] += 1

    def pass_(self, event: dict) -> None:
        seat = self.seat_field(event)
        self.turn_check(seat, "pass")
        if not self.layout.opened:
            self.fail(f"seat {seat} passes before the leader (seat {self.leader}) opened")
        if self.forced_tile is not None:
            f = self.forced_tile
            self.fail(
                f"seat {seat} passes, but the tile it just drew ({f[0]}-{f[1]}) fits "
                f"and must be played at once"
            )
        legal = self.layout.placement(self.hands[seat])
        if legal is not None:
            (a, b), arm = legal
            self.fail(f"seat {seat} passes while holding a legal placement ({a}-{b} on {arm})")
        left = len(self.boneyard) - self.drawn
        if left:
            self.fail(f"seat {seat} passes with {left} tile(s) left in the boneyard")
        self.drawing = False
        self.turn = (seat + 1) % self.players
        self.stats["pass"] += 1
        if self.blocked():
            self.phase = "must_block"

    def round_end(self, event: dict) -> None:
        if self.phase not in ("round", "domino", "must_block"):
            self.fail(self.phase_message("round_end"))
        self.expect("round", event["round"], self.round)
        reason = event["reason"]
        if self.phase == "domino":
            self.expect("reason", reason, "domino")
            self.expect("winner_seat", event["winner_seat"], self.domino_seat)
            self.last_domino_winner = self.domino_seat
            self.stats["domino"] += 1
        else:
            if reason == "domino":
                self.fail("reason is domino, but the last event was not a play that emptied a hand")
            if reason != "blocked":
                self.fail(f"reason is {reason!r}, expected 'domino' or 'blocked'")
            if self.drawing:
                self.fail("round_end in the middle of a turn (after a draw)")
            if not self.blocked():
                left = len(self.boneyard) - self.drawn
                able = [s for s, h in enumerate(self.hands) if self.layout.placement(h)]
                self.fail(
                    f"round_end blocked, but the round is not blocked: {left} tile(s) in "
                    f"the boneyard, seats that can place: {able}"
                )
            self.expect("winner_seat", event["winner_seat"], None)
            self.last_domino_winner = None
            self.stats["blocked"] += 1
        pips = [sum(a + b for a, b in hand) for hand in self.hands]
        self.expect("hand_pips", event["hand_pips"], pips)
        penalties = [penalty(p) for p in pips]
        self.expect("penalties", event["penalties"], penalties)
        for seat, amount in enumerate(penalties):
            self.scores[team_of(seat, self.players)] -= amount
        self.expect("scores after settlement", event["scores"], self.scores)
        self.phase = "need_round"

    def game_end(self, event: dict) -> None:
        if self.phase == "won":
            self.expect("winner", event["winner"], self.winner)
            self.expect("reason", event["reason"], "target")
            self.stats["target_win"] += 1
        elif self.phase == "need_round" and self.rounds_seen > 0:
            if event["winner"] is not None:
                self.fail(
                    f"winner is {event['winner']!r} after a round_end; no team reached the "
                    f"target, so a game stopped at the round cap has winner null"
                )
            self.expect("reason", event["reason"], "round_cap")
            self.stats["round_cap"] += 1
        else:
            self.fail(self.phase_message("game_end"))
        self.expect("scores", event["scores"], self.scores)
        self.expect("rounds", event["rounds"], self.rounds_seen)
        self.phase = "over"

    def handle(self, index: int, event: Any) -> None:
        self.index = index
        if not isinstance(event, dict):
            self.fail(f"not an event object: {event!r}")
        kind = event.get("event")
        if kind not in EVENT_KEYS:
            self.fail(f"unknown event kind {kind!r}")
        keys = set(event)
        missing = EVENT_KEYS[kind] - keys
        extra = keys - EVENT_KEYS[kind]
        if missing or (extra and kind != "game_start"):
            self.fail(f"{kind} has missing keys {sorted(missing)}, extra keys {sorted(extra)}")
        if index == 0 and kind != "game_start":
            self.fail(f"a game starts with game_start, not {kind}")
        if self.phase == "over":
            self.fail(self.phase_message(kind))
        if kind == "pass":
            self.pass_(event)
        else:
            getattr(self, kind)(event)


def check_trace(events: list[dict], stats: Counter | None = None) -> None:
    """Replay one game's events and raise AssertionError at the first rule broken.

    ``stats``, when given, is incremented with counts of what the game exercised (draws,
    passes, branch plays, blocked rounds, ...), so callers can show the rules were reached.
    """
    if not events:
        raise AssertionError("empty trace: a game needs game_start ... game_end")
    replay = _Replay(stats)
    for index, event in enumerate(events):
        try:
            replay.handle(index, event)
        except AssertionError as error:
            raise AssertionError(f"{error}\n  event: {json.dumps(event, default=str)}") from None
    if replay.phase != "over":
        raise AssertionError(
            f"trace ends after event {len(events) - 1} without game_end "
            f"({replay.phase_message('end of trace')})"
        )


def split_games(events: list[dict]) -> list[list[dict]]:
    """Cut a stream of several games into one event list per game, at each game_start."""
    games: list[list[dict]] = []
    for index, event in enumerate(events):
        if event.get("event") == "game_start":
            games.append([])
        elif not games:
            raise AssertionError(f"event {index} comes before any game_start: {event!r}")
        games[-1].append(event)
    return games


def check_trace_file(path: str | Path, stats: Counter | None = None) -> int:
    """Check every game of a JSON Lines trace file; return how many games it held."""
    lines = Path(path).read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    games = split_games(events)
    if not games:
        raise AssertionError(f"{path}: no game in the file")
    for number, game in enumerate(games):
        try:
            check_trace(game, stats)
        except AssertionError as error:
            raise AssertionError(f"{path}: game {number}: {error}") from None
    return len(games)
