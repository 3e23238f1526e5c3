"""Terminal text for game traces (the JSON Lines format of docs/rules.md), for replays, and
for the moves and counts of a game being played (``sniff play``, ``sniff serve``).

Everything here is presentation: the small replay model below records what the trace says
(tiles per arm, where the Sniff lies, the trace's own ``ends`` and ``scores``; counts and
points are read off each play event) and never re-checks a rule, so a replay shows the
engine's decisions as they were made, even a wrong one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sim.core.seating import team_name, team_of
from sim.table.tally import tally, tally_inline

__all__ = ["halves", "render_event", "ReplayState"]

ARMS = ("L", "R", "U", "D")

Event = dict[str, Any]

_ASCII = str.maketrans(
    {
        "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+", "┤": "+", "─": "-",
        "┏": "#", "┓": "#", "┗": "#", "┛": "#", "┣": "#", "┫": "#", "━": "=",
        "═": "=", "·": ".", "—": "-", "−": "-", "→": "->",
    }
)  # fmt: skip


def halves(tile: str) -> tuple[int, int]:
    """``"a-b"`` as ``(a, b)``, keeping the trace's order (it says which half matched)."""
    first, second = tile.split("-")
    return int(first), int(second)


def _same_tile(a: str, b: str) -> bool:
    return sorted(halves(a)) == sorted(halves(b))


def _is_double(tile: str) -> bool:
    first, second = halves(tile)
    return first == second


@dataclass(frozen=True)
class SniffSpot:
    """Where the Sniff lies: ``arm`` None is the opening tile; else ``arms[arm][index]``.

    Attributes:
        arm: the arm the Sniff lies on (None: it is the opening tile).
        index: its place on that arm, from the opening.
    """

    arm: str | None
    index: int = 0


@dataclass
class ReplayState:
    """The table and scores as the trace has described them so far.

    Arm lists hold tiles as the trace wrote them (matching half first), nearest the opening
    first, which is all a picture needs: the outer half of each tile is its second half.

    Attributes:
        players: the player count.
        game: the game being replayed, or None before the first.
        round: the round, from 1.
        opening: the opening tile, or None before it is placed.
        arms: each arm's tiles, nearest the opening first.
        sniff: where the Sniff lies, or None.
        ends: each arm's open end (None: no tile there).
        previous_ends: the ends before the last placement.
        scores: each seat's score.
        hands: each seat's tiles, where the trace shows them.
        boneyard: the tiles left in the boneyard.
    """

    players: int = 0
    game: int | None = None
    round: int = 0
    opening: str | None = None
    arms: dict[str, list[str]] = field(default_factory=lambda: {arm: [] for arm in ARMS})
    sniff: SniffSpot | None = None
    ends: dict[str, int | None] = field(default_factory=dict)
    previous_ends: dict[str, int | None] = field(default_factory=dict)
    scores: list[int] = field(default_factory=list)
    hands: list[list[str]] = field(default_factory=list)
    boneyard: int = 0

    def apply(self, event: Event) -> None:
        """Record one event (in place; see ``advance`` for a copying version)."""
        kind = event.get("event")
        if kind == "game_start":
            vars(self).update(vars(ReplayState()))  # a new game: empty table, no scores
            self.players = int(event.get("players", 0))
            self.game = event.get("game")
        elif kind == "round_start":
            self._start_round(event)
        elif kind == "play":
            self._play(event)
        elif kind == "draw":
            seat = event["seat"]
            if seat < len(self.hands):
                self.hands[seat].append(event["tile"])
            self.boneyard = max(self.boneyard - 1, 0)
        if "scores" in event:
            self.scores = list(event["scores"])

    def _start_round(self, event: Event) -> None:
        self.round = int(event.get("round", self.round + 1))
        self.opening = None
        self.arms = {arm: [] for arm in ARMS}
        self.sniff = None
        self.ends, self.previous_ends = {}, {}
        self.hands = [list(hand) for hand in event.get("hands", [])]
        boneyard = event.get("boneyard", [])
        self.boneyard = boneyard if isinstance(boneyard, int) else len(boneyard)
        if not self.players:
            self.players = len(self.hands)

    def _play(self, event: Event) -> None:
        tile, arm = event["tile"], event.get("end")
        if arm is None:
            self.opening = tile
            if _is_double(tile):
                self.sniff = SniffSpot(None)
        else:
            if self.sniff is None and _is_double(tile):
                self.sniff = SniffSpot(arm, len(self.arms[arm]))
            self.arms[arm].append(tile)
        self.previous_ends = self.ends
        self.ends = dict(event.get("ends", {}))
        seat = event["seat"]
        if seat < len(self.hands):
            hand = self.hands[seat]
            for index, held in enumerate(hand):
                if _same_tile(held, tile):
                    del hand[index]
                    break

    def is_sniff(self, arm: str | None, index: int = 0) -> bool:
        return self.sniff == SniffSpot(arm, index)


def advance(state: ReplayState, event: Event) -> ReplayState:
    """A new state with ``event`` applied, leaving ``state`` as it was."""
    after = copy.deepcopy(state)
    after.apply(event)
    return after


# ---------------------------------------------------------------- the table picture


class _Canvas:
    """Characters at (row, column); rows may be negative (the line is row 0)."""

    def __init__(self) -> None:
        self.cells: dict[int, dict[int, str]] = {}

    def put(self, row: int, col: int, text: str) -> None:
        line = self.cells.setdefault(row, {})
        for offset, char in enumerate(text):
            line[col + offset] = char

    def text(self) -> str:
        rows = []
        for row in range(min(self.cells), max(self.cells) + 1):
            line = self.cells.get(row, {})
            width = max(line, default=-1) + 1
            rows.append("".join(line.get(col, " ") for col in range(width)).rstrip())
        return "\n".join(rows)


def _vertical(top: int, bottom: int, heavy: bool) -> tuple[str, str, str]:
    """A tile standing across the line or along a branch: three rows, top half first."""
    if heavy:
        return f"┏{top}┓", "┣━┫", f"┗{bottom}┛"
    return f"┌{top}┐", "├─┤", f"└{bottom}┘"


def _label(state: ReplayState, arm: str) -> str:
    value = state.ends.get(arm)
    return arm if value is None else f"{arm}={value}"


def render_layout(state: ReplayState, ascii: bool = False) -> str:
    """A picture of the table: the line left to right from the L end through the opening
    tile to the R end, with doubles standing crosswise (three rows, across the line) and
    the Sniff drawn heavy (``┏┓``, ASCII ``#``) with its U branch going up and its D branch
    going down; branch tiles stand along the branch, and a double on a branch lies across
    it. Arms are labelled with their open value from the trace (``L=6``).

    Horizontal tiles read ``[outer|inner]`` on the L side and ``[inner|outer]`` on the R
    side, so touching halves are next to each other as on the table.
    """
    if state.opening is None:
        return "(empty table)"
    items: list[tuple[int, int, bool]] = []  # (left half, right half, is Sniff)
    for index in reversed(range(len(state.arms["L"]))):
        inner, outer = halves(state.arms["L"][index])
        items.append((outer, inner, state.is_sniff("L", index)))
    first, second = halves(state.opening)
    items.append((first, second, state.is_sniff(None)))
    for index, tile in enumerate(state.arms["R"]):
        inner, outer = halves(tile)
        items.append((inner, outer, state.is_sniff("R", index)))

    canvas = _Canvas()
    left = _label(state, "L") + " "
    canvas.put(0, 0, left)
    col, sniff_col = len(left), None
    for left_half, right_half, is_sniff in items:
        if left_half == right_half:
            for row, text in zip((-1, 0, 1), _vertical(left_half, right_half, is_sniff)):
                canvas.put(row, col, text)
            if is_sniff:
                sniff_col = col
            col += 4
        else:
            canvas.put(0, col, f"[{left_half}|{right_half}]")
            col += 6
    canvas.put(0, col, _label(state, "R"))
    if sniff_col is not None:
        _draw_branch(canvas, state, "U", sniff_col, row=-2, step=-1)
        _draw_branch(canvas, state, "D", sniff_col, row=2, step=1)
    picture = canvas.text()
    return picture.translate(_ASCII) if ascii else picture


def _draw_branch(
    canvas: _Canvas, state: ReplayState, arm: str, col: int, row: int, step: int
) -> None:
    """Stack a branch's tiles away from the Sniff (``step`` -1 goes up, +1 goes down)."""
    tiles = state.arms[arm]
    if not tiles and state.ends.get(arm) is None:
        return  # the branch is not open yet: nothing to show or label
    for tile in tiles:
        inner, outer = halves(tile)
        if inner == outer:
            canvas.put(row, col - 1, f"[{inner}|{outer}]")
            row += step
            continue
        top, bottom = (outer, inner) if step < 0 else (inner, outer)
        rows = _vertical(top, bottom, heavy=False)
        for offset, text in enumerate(rows if step > 0 else reversed(rows)):
            canvas.put(row + step * offset, col, text)
        row += 3 * step
    canvas.put(row, col, _label(state, arm))


# ---------------------------------------------------------------- events as text


def _scores_line(state: ReplayState, ascii: bool) -> str:
    parts = [
        f"{team_name(team, state.players)}: {tally_inline(score, ascii=ascii)}"
        for team, score in enumerate(state.scores)
    ]
    return "scores   " + "   ".join(parts)


def _ends_text(ends: dict[str, int | None]) -> str:
    return " ".join(f"{arm}={ends[arm]}" for arm in ARMS if ends.get(arm) is not None)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _render_game_start(event: Event, state: ReplayState, ascii: bool) -> str:
    known = {"event", "players", "target", "game", "strategies"}
    game = event.get("game")
    head = ["game" if game is None else f"game {game}", f"{event.get('players', '?')} players"]
    if "target" in event:
        head.append(f"target {event['target']}")
    head += [f"{key} {value}" for key, value in event.items() if key not in known]
    lines = ["══ " + " · ".join(head) + " ══"]
    for seat, name in enumerate(event.get("strategies", [])):
        line = f"  seat {seat}: {name}"
        if state.players == 4:
            line += f"  ({team_name(team_of(seat, 4), 4)})"
        lines.append(line)
    return "\n".join(lines)


def _render_round_start(event: Event, state: ReplayState, ascii: bool) -> str:
    leader = event.get("leader", "?")
    lines = [f"── round {state.round} · seat {leader} leads · boneyard {state.boneyard} tiles ──"]
    for seat, hand in enumerate(state.hands):
        pips = sum(sum(halves(tile)) for tile in hand)
        lines.append(f"  seat {seat}: {' '.join(hand) or '(no tiles)'}   ({pips} pips)")
    if state.scores:
        lines.append("  " + _scores_line(state, ascii))
    return "\n".join(lines)


def _render_play(event: Event, state: ReplayState, ascii: bool) -> str:
    seat, tile, arm = event["seat"], event["tile"], event.get("end")
    if arm is None:
        head = f"seat {seat} opens with {tile}"
    else:
        head = f"seat {seat} plays {tile} on {arm}"
    notes = []
    placed_sniff = state.sniff is not None and (
        (arm is None and state.sniff.arm is None)
        or (arm is not None and state.sniff.arm == arm
            and state.sniff.index == len(state.arms[arm]) - 1)
    )
    if placed_sniff:
        notes.append("the Sniff")
    elif _is_double(tile):
        notes.append("a later double")
    if state.ends.get("U") is not None and state.previous_ends.get("U") is None:
        notes.append("the Sniff's branches open")
    if notes:
        head += " — " + ", ".join(notes)
    points = event.get("points", 0)
    if points:
        scored = f"+{points} points for {team_name(team_of(seat, state.players), state.players)}"
    else:
        scored = "no score"
    facts = f"ends {_ends_text(state.ends)} · count {event.get('count', '?')} · {scored}"
    lines = [head, "  " + facts, _indent(render_layout(state)), "  " + _scores_line(state, ascii)]
    return "\n".join(lines)


def _render_draw(event: Event, state: ReplayState, ascii: bool) -> str:
    return f"seat {event['seat']} draws {event['tile']} · boneyard {state.boneyard} left"


def _render_pass(event: Event, state: ReplayState, ascii: bool) -> str:
    return f"seat {event['seat']} passes"


def _render_round_end(event: Event, state: ReplayState, ascii: bool) -> str:
    reason = event.get("reason", "?")
    winner = event.get("winner_seat")
    how = f"domino, seat {winner} went out" if winner is not None else f"{reason}, no winner"
    lines = [f"── round {event.get('round', state.round)} ends: {how} ──"]
    pips, penalties = event.get("hand_pips", []), event.get("penalties", [])
    team_penalty: dict[int, int] = {}
    for seat, (hand_pips, penalty) in enumerate(zip(pips, penalties)):
        line = f"  seat {seat}: {hand_pips} pips → {penalty}"
        if seat < len(state.hands) and state.hands[seat]:
            line += f"   [{' '.join(state.hands[seat])}]"
        lines.append(line)
        team = team_of(seat, state.players)
        team_penalty[team] = team_penalty.get(team, 0) + penalty
    if team_penalty:
        totals = [
            f"{team_name(team, state.players)}: −{total}"
            for team, total in sorted(team_penalty.items())
        ]
        lines.append("  penalties   " + "   ".join(totals))
    lines.append("  " + _scores_line(state, ascii))
    return "\n".join(lines)


def _render_game_end(event: Event, state: ReplayState, ascii: bool) -> str:
    winner, reason = event.get("winner"), event.get("reason")
    rounds = event.get("rounds", state.round)
    if winner is None:
        outcome = f"unfinished ({reason or 'no winner'}), no winner"
    else:
        verb = "win" if state.players == 4 else "wins"
        outcome = f"{team_name(winner, state.players)} {verb}"
        if reason:
            outcome += f" ({reason})"
    game = event.get("game", state.game)
    title = "game over" if game is None else f"game {game} over"
    lines = [f"══ {title}: {outcome} after {rounds} round{'s' * (rounds != 1)} ══"]
    lines.append("  " + _scores_line(state, ascii))
    for team, score in enumerate(state.scores):  # the final scores as the paper tally
        lines += [f"  {team_name(team, state.players)}:", _indent(tally(score, ascii=ascii))]
    return "\n".join(lines)


_RENDERERS = {
    "game_start": _render_game_start,
    "round_start": _render_round_start,
    "play": _render_play,
    "draw": _render_draw,
    "pass": _render_pass,
    "round_end": _render_round_end,
    "game_end": _render_game_end,
}


def render_event(event: Event, state: ReplayState, ascii: bool = False) -> str:
    """The text block for one event; ``state`` is the replay state *after* the event (so a
    play's picture includes the tile just played). Unknown kinds are shown raw rather than
    dropped, so a newer trace still replays."""
    renderer = _RENDERERS.get(event.get("event", ""))
    if renderer is None:
        text = f"({event.get('event', 'unknown event')}) {json.dumps(event)}"
    else:
        text = renderer(event, state, ascii)
    return text.translate(_ASCII) if ascii else text


def parse_events(items: Iterable[Event | str]) -> Iterator[Event]:
    """Events from the lines of a JSON Lines trace (parsed events pass through unchanged);
    blank lines are skipped, and a bad line is reported by its number."""
    for number, item in enumerate(items, start=1):
        if not isinstance(item, str):
            yield item
        elif item.strip():
            try:
                yield json.loads(item)
            except ValueError as error:  # not JSON, or an integer of thousands of digits
                raise ValueError(f"trace line {number} is not JSON: {error}") from error


def hands_line(state: ReplayState, width: int = 88) -> str:
    """Every hand as it stands, and the boneyard size: ``hands    seat 0: 1-2 4-4 · ...``,
    continued on further lines (aligned) where one would pass ``width`` columns."""
    parts = [f"seat {seat}: {' '.join(hand) or '(none)'}" for seat, hand in enumerate(state.hands)]
    parts.append(f"boneyard {state.boneyard}")
    lines = ["  hands    " + parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 3 + len(part) > width:
            lines.append(" " * 11 + part)
        else:
            lines[-1] += " · " + part
    return "\n".join(lines)


def replay_lines(
    events: Iterable[Event | str], game: int = 0, ascii: bool = False, hands: bool = False
) -> Iterator[str]:
    """The text blocks, one per event, of game number ``game`` (0-based position in the
    file; games start at each ``game_start``). ``events`` may be parsed events or the raw
    lines of a trace file. With ``hands``, the blocks of plays and draws end with every
    hand as it stands (:func:`hands_line`). Raises IndexError if the trace holds fewer
    games."""
    if game < 0:
        raise IndexError(f"game must be >= 0, not {game}")
    position, state = -1, ReplayState()
    for item in parse_events(events):
        if item.get("event") == "game_start":
            position += 1
            if position > game:
                return
        if position == game:
            state.apply(item)
            text = render_event(item, state, ascii=ascii)
            if hands and item.get("event") in ("play", "draw"):
                line = hands_line(state)
                text += "\n" + (line.translate(_ASCII) if ascii else line)
            yield text
    if position < game:
        raise IndexError(f"the trace holds {position + 1} games; game {game} was asked for")
