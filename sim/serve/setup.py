"""Position setup: a position built by clicking, written and read as ``sniff hint``'s text.

Why through the server: the text form has one writer (``format_position``) and one parser
(``parse_position``, with every check) in ``sim.hint.position``; the page sends a draft
(fields, hand, placements) and gets back the text, the board to draw, what is wrong with the
position if anything, and where each unused tile could be placed next (the engine's own
move generation through ``Position.legal_moves``), so no rule lives in the page.
"""

from __future__ import annotations

import re
from typing import Any

from sim.core.checks import check_players
from sim.core.layout import ARM_NAMES, ARM_VALUE, decode_ends
from sim.core.tiles import N_TILES, parse_tile, tile_name
from sim.errors import SniffError
from sim.hint.position import OPENING, Position, format_position, parse_position
from sim.serve.frames import board_of
from sim.table.render import ReplayState

__all__: list[str] = []  # nothing here is used outside sim.serve

MAX_LIST = 64  # items of any list in a draft (a position has at most 28 tiles)
#: What a problem of ``Position.check`` is about (its words, first match), as the set-up
#: form's fields: the page marks them and names them before the problem.
PROBLEM_FIELDS = (
    (re.compile(r"said to lack|lacks"), ("lacks",)),
    (re.compile(r"hands \(.*\) \+ boneyard"), ("sizes", "boneyard")),
    (re.compile(r"sizes|holds -?\d+ tiles|cannot hold"), ("sizes",)),
    (re.compile(r"boneyard"), ("boneyard",)),
    (re.compile(r"leader must"), ("leader",)),
    (re.compile(r"round must"), ("round",)),
    (re.compile(r"target"), ("target",)),
    (re.compile(r"score|side \d+ has"), ("scores",)),
    (re.compile(r"table"), ("table",)),
    (re.compile(r"hand|drawn tile|no legal placement"), ("hand",)),
    (re.compile(r"seat must"), ("seat",)),
    (re.compile(r"players"), ("players",)),
)


def _tile(text: Any) -> int:
    if not isinstance(text, str):
        raise SniffError("a tile must be text 'a-b'")
    try:
        return parse_tile(text)
    except ValueError as error:
        raise SniffError(f"bad tile: {error}") from None


def _ints(draft: dict, key: str, default: list[int]) -> tuple[int, ...]:
    values = draft.get(key, default)
    if (not isinstance(values, list) or len(values) > MAX_LIST
            or not all(isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10**6
                       for v in values)):
        raise SniffError(f"{key} must be a list of whole numbers")
    return tuple(values)


def _one(draft: dict, key: str, default: int) -> int:
    value = draft.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 10**6:
        raise SniffError(f"{key} must be a whole number")
    return value


def _lacks(draft: dict, players: int) -> tuple[int, ...]:
    """The known lacks, per seat the pip values it is known not to hold (``[[], [5, 6]]``),
    as ``Position``'s 7-bit masks; ``Position`` checks the rest (not the mover's own)."""
    values = draft.get("lacks", [[] for _ in range(players)])
    if not isinstance(values, list) or len(values) != players or not all(
            isinstance(seat, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                           and 0 <= v <= 6 for v in seat) for seat in values):
        raise SniffError("lacks must give, for each seat, pip values 0..6")
    return tuple(sum(1 << v for v in set(seat)) for seat in values)


def _fits(layout_position: Position, tile: int) -> list[str | None]:
    """The ends ``tile`` could be placed on next (None: it would open the table)."""
    single = Position(players=layout_position.players, seat=0, hand=(tile,),
                      table=layout_position.table, scores=(), sizes=(), boneyard=0,
                      lacks=(0,) * layout_position.players)
    ends = []
    for move in single.legal_moves():
        ends.append(None if not layout_position.table else ARM_NAMES[move & 3])
    return ends


def draft_position(draft: dict) -> Position:
    """A ``Position`` from the page's draft, each placement checked to be legal in turn."""
    players = check_players(_one(draft, "players", 2))
    table_items = draft.get("table", [])
    if not isinstance(table_items, list) or len(table_items) > MAX_LIST:
        raise SniffError("table must be a list of [tile, end] placements")
    table: list[tuple[int, int]] = []
    for item in table_items:
        if not isinstance(item, list) or len(item) != 2:
            raise SniffError("a placement is [tile, end]")
        tile, end = _tile(item[0]), item[1]
        so_far = Position(players=players, seat=0, hand=(), table=tuple(table), scores=(),
                          sizes=(), boneyard=0, lacks=(0,) * players)
        if end not in _fits(so_far, tile) or any(t == tile for t, _ in table):
            raise SniffError(f"{tile_name(tile)} cannot be placed on {end or 'an empty table'}")
        table.append((tile, OPENING if end is None else ARM_NAMES.index(end)))
    hand = draft.get("hand", [])
    if not isinstance(hand, list) or len(hand) > MAX_LIST:
        raise SniffError("hand must be a list of tiles")
    drawn = draft.get("drawn")
    return Position(
        players=players, seat=_one(draft, "seat", 0), hand=tuple(_tile(t) for t in hand),
        table=tuple(table), scores=_ints(draft, "scores", [0] * (2 if players == 4 else players)),
        sizes=_ints(draft, "sizes", []), boneyard=_one(draft, "boneyard", 0),
        lacks=_lacks(draft, players), round=_one(draft, "round", 1),
        leader=_one(draft, "leader", -1),
        target=_one(draft, "target", 0), drawn=-1 if not drawn else _tile(drawn))


def _board(position: Position) -> dict[str, Any]:
    """The table of ``position`` in the page's board form, via the replay model."""
    state = ReplayState()
    for (tile, arm), before, after in zip(position.table, position.layouts(),
                                          position.layouts()[1:]):
        matched = None if arm == OPENING else (before >> (8 * arm)) & ARM_VALUE
        state.apply({"event": "play", "seat": 0, "tile": tile_name(tile, matched),
                     "end": None if arm == OPENING else ARM_NAMES[arm],
                     "ends": decode_ends(after)})
    return board_of(state)


def problem_fields(problem: str | None) -> list[str]:
    """The set-up form's fields a problem is about (none when it names none)."""
    if problem is None:
        return []
    return next((list(fields) for pattern, fields in PROBLEM_FIELDS if pattern.search(problem)),
                [])


def position_view(position: Position) -> dict[str, Any]:
    """The text, the board, the problem (or None) and the next placements of ``position``."""
    text = format_position(position)
    problem = None
    try:
        parse_position(text)
    except SniffError as error:
        problem = str(error)
    used = set(position.hand) | {tile for tile, _ in position.table}
    return {
        "text": text, "problem": problem, "fields": problem_fields(problem),
        "board": _board(position),
        "hand": [tile_name(t) for t in sorted(position.hand)],
        "table": [[tile_name(t), None if a == OPENING else ARM_NAMES[a]]
                  for t, a in position.table],
        "fits": {tile_name(t): _fits(position, t) for t in range(N_TILES) if t not in used},
        "moves": [] if problem else [position.move_name(m) for m in position.legal_moves()],
        "draft": {"players": position.players, "seat": position.seat,
                  "scores": list(position.scores), "sizes": list(position.sizes),
                  "boneyard": position.boneyard, "target": position.target,
                  "round": position.round, "leader": position.leader,
                  "lacks": [[v for v in range(7) if mask >> v & 1] for mask in position.lacks]},
    }


def read_text(text: Any) -> dict[str, Any]:
    """A position's text (as ``sniff hint`` reads it) as the page's view of it."""
    if not isinstance(text, str):
        raise SniffError("text must be the position's text")
    return position_view(parse_position(text))
