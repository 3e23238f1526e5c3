"""One position as its player sees it: the text form of ``sniff hint`` (docs/hint.md).

A position holds only what the seat to move may know: its own hand, the table (the
placements in order), the scores, every hand's size, the boneyard's size, the values each
seat is publicly known to lack, the round, its leader, and whether the seat must place a
tile it has just drawn. That is exactly the engine's observation (``sim.core.observation``),
so :meth:`Position.observation` gives the search the view the engine would give a
strategy, and nothing hidden can leak into a hint.

Positions come from a text file (:func:`parse_position`, written back by
:func:`format_position`), or from a game's events (``sim.hint.tracker``: a trace, or a game
being played). Every position is checked (:meth:`Position.check`): a tile
twice, counts that do not add up to 28, an impossible hand size or an illegal placement on
the table is one ``SniffError`` line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.core import engine
from sim.core import observation as view
from sim.core.checks import check_players
from sim.core.layout import ARM_NAMES, ARM_VALUE, EMPTY_LAYOUT
from sim.core.seating import PLAYER_COUNTS, team_count
from sim.core.tiles import N_TILES, TILE_HIGH, TILE_LOW, parse_tile, tile_name
from sim.errors import SettingError, SniffError

__all__ = ["format_position", "OPENING", "parse_position", "Position"]

KEYS = ("players", "seat", "round", "leader", "target", "scores", "hand", "table", "sizes",
        "boneyard", "lacks", "drawn")
REQUIRED = ("players", "seat", "scores", "hand", "table", "sizes", "boneyard")
OPENING = -1  # the arm of the opening placement in ``Position.table``


def _kernel():
    from sim.hint import kernel as hint_kernel

    return hint_kernel.load()


@dataclass(frozen=True)
class Position:
    """The public view of ``seat``, about to place a tile.

    ``table`` is the placements in order as ``(tile id, arm)``, the opening with arm
    :data:`OPENING`; ``lacks`` one 7-bit mask of pip values per seat; ``drawn`` the tile the
    seat has just drawn and must place at once (-1: none, any tile of the hand may go).

    Attributes:
        players: the player count.
        seat: the seat about to place a tile.
        hand: its tiles, as tile ids.
        table: the placements in order, as ``(tile id, arm)``; the opening has arm ``OPENING``.
        scores: each seat's score.
        sizes: each seat's hand size.
        boneyard: the tiles left in the boneyard.
        lacks: per seat, a 7-bit mask of the pip values it is known to lack.
        round: the round, from 1.
        leader: the seat that led the round.
        target: the score that wins the game.
        drawn: the tile the seat has just drawn and must place at once (-1: none).
    """

    players: int
    seat: int
    hand: tuple[int, ...]
    table: tuple[tuple[int, int], ...]
    scores: tuple[int, ...]
    sizes: tuple[int, ...]
    boneyard: int
    lacks: tuple[int, ...] = ()
    round: int = 1
    leader: int = -1
    target: int = 0
    drawn: int = -1
    # The layout words, worked out once (not an init field: ``dataclasses.replace`` of
    # another table must not inherit them).
    _layouts: list[int] = field(default_factory=list, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.lacks:
            object.__setattr__(self, "lacks", (0,) * self.players)
        if self.leader < 0:
            object.__setattr__(self, "leader", self.seat)
        if self.target <= 0 and self.players in PLAYER_COUNTS:
            object.__setattr__(self, "target", int(engine.TARGET_FOR_PLAYERS[self.players]))

    # ------------------------------------------------------------ derived views

    def layouts(self) -> list[int]:
        """The layout word before each placement of the table, and after the last."""
        if not self._layouts:
            kernel = _kernel()
            layout = EMPTY_LAYOUT
            words = [layout]
            for tile, arm in self.table:
                layout = int(kernel.place(layout, tile, max(arm, 0)))
                words.append(layout)
            self._layouts.extend(words)
        return self._layouts

    @property
    def layout(self) -> int:
        return self.layouts()[-1]

    def hand_mask(self) -> int:
        return sum(1 << tile for tile in self.hand)

    def played_mask(self) -> int:
        return sum(1 << tile for tile, _ in self.table)

    def legal_moves(self) -> list[int]:
        """The moves (``tile * 4 + arm``) the engine would offer here, in its order."""
        moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
        n_moves = _kernel().moves_of(self.layout, self.hand_mask(), self.drawn, moves)
        return [int(move) for move in moves[:n_moves]]

    def observation(self) -> np.ndarray:
        """The engine's view of ``seat`` here (``sim.core.observation`` slots)."""
        obs = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
        obs[view.SEAT] = self.seat
        obs[view.PLAYERS] = self.players
        obs[view.HAND] = self.hand_mask()
        obs[view.LAYOUT] = self.layout
        obs[view.BONEYARD_SIZE] = self.boneyard
        obs[view.PLAYED] = self.played_mask()
        obs[view.TARGET] = self.target
        obs[view.ROUND] = self.round
        obs[view.FORCED] = 1 if self.drawn >= 0 else 0
        obs[view.LEADER] = self.leader
        for team, score in enumerate(self.scores):
            obs[view.SCORE + team] = score
        for seat in range(self.players):
            obs[view.HAND_SIZE + seat] = self.sizes[seat]
            obs[view.LACKS + seat] = self.lacks[seat]
        return obs

    def move_name(self, move: int) -> str:
        """``4-6 on L`` (matching half first), ``open with 4-4``."""
        return move_name(self.layout, move)

    def team(self) -> int:
        return self.seat % 2 if self.players == 4 else self.seat

    # ------------------------------------------------------------ checks

    def check(self) -> Position:
        """Self, or one ``SniffError`` line saying what makes the position impossible."""
        players = check_players(self.players)
        if not 0 <= self.seat < players:
            raise SniffError(f"position: seat must be 0..{players - 1}, got {self.seat}")
        if not 0 <= self.leader < players:
            raise SniffError(f"position: leader must be 0..{players - 1}, got {self.leader}")
        if self.round < 1:
            raise SniffError(f"position: round must be 1 or more, got {self.round}")
        if self.target <= 0:
            raise SniffError(f"position: target must be positive, got {self.target}")
        teams = team_count(players)
        if len(self.scores) != teams:
            raise SniffError(f"position: scores needs {teams} numbers (one per side), "
                             f"got {len(self.scores)}")
        for team, score in enumerate(self.scores):
            if score % 5:
                raise SniffError(f"position: side {team}'s score {score} is not a multiple "
                                 "of 5 (every score and penalty is)")
            if score >= self.target:
                raise SniffError(f"position: side {team} has {score}, at or past the target "
                                 f"{self.target}: the game is over")
        if len(self.sizes) != players:
            raise SniffError(f"position: sizes needs {players} numbers (every seat's hand "
                             f"size, yours included), got {len(self.sizes)}")
        if len(self.lacks) != players or any(not 0 <= m < 128 for m in self.lacks):
            raise SniffError("position: lacks must give pip values 0..6 for seats "
                             f"0..{players - 1}")
        seen: dict[int, str] = {}
        for tile in self.hand:
            if tile in seen:
                raise SniffError(f"position: tile {tile_name(tile)} is twice in the hand")
            seen[tile] = "hand"
        for tile, _ in self.table:
            if tile in seen:
                raise SniffError(f"position: tile {tile_name(tile)} is both in the {seen[tile]} "
                                 "and on the table")
            seen[tile] = "table"
        if not self.hand:
            raise SniffError("position: the hand is empty: the round is over")
        for tile in self.hand:
            if tile == self.drawn:
                continue  # drawn to fit what was open when the seat began to draw
            shown = {int(TILE_LOW[tile]), int(TILE_HIGH[tile])}
            lacked = [v for v in sorted(shown) if self.lacks[self.seat] >> v & 1]
            if lacked:
                raise SniffError(f"position: seat {self.seat} (yours) is said to lack "
                                 f"{lacked[0]} but holds {tile_name(tile)}")
        if self.sizes[self.seat] != len(self.hand):
            raise SniffError(f"position: sizes gives seat {self.seat} (yours) "
                             f"{self.sizes[self.seat]} tiles, the hand holds {len(self.hand)}")
        dealt = int(engine.HAND_SIZE_FOR_PLAYERS[players])
        stock = N_TILES - players * dealt
        if not 0 <= self.boneyard <= stock:
            raise SniffError(f"position: boneyard must be 0..{stock} tiles with {players} "
                             f"players, got {self.boneyard}")
        for seat, size in enumerate(self.sizes):
            if size < 1:
                raise SniffError(f"position: seat {seat} holds {size} tiles: a seat with no "
                                 "tile has ended the round")
            if size > dealt + stock - self.boneyard:
                raise SniffError(
                    f"position: seat {seat} cannot hold {size} tiles: {dealt} dealt plus "
                    f"{stock - self.boneyard} drawn from the boneyard at most"
                )
        total = sum(self.sizes) + self.boneyard + len(self.table)
        if total != N_TILES:
            raise SniffError(
                f"position: hands ({' + '.join(map(str, self.sizes))}) + boneyard "
                f"({self.boneyard}) + table ({len(self.table)}) = {total} tiles, not {N_TILES}"
            )
        self._check_table()
        if self.drawn >= 0 and self.drawn not in self.hand:
            raise SniffError(f"position: the drawn tile {tile_name(self.drawn)} is not in the "
                             "hand")
        if not self.legal_moves():
            what = (f"the drawn tile {tile_name(self.drawn)} fits no open end"
                    if self.drawn >= 0 else f"seat {self.seat} has no legal placement")
            raise SniffError(f"position: {what}: there is no decision to analyse")
        return self

    def _check_table(self) -> None:
        kernel = _kernel()
        layout = EMPTY_LAYOUT
        moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
        for number, (tile, arm) in enumerate(self.table, start=1):
            if number == 1:
                if arm != OPENING:
                    raise SniffError("position: the table's first placement is the opening "
                                     f"and has no end: write {tile_name(tile)}, not "
                                     f"{tile_name(tile)} {ARM_NAMES[arm]}")
            else:
                if arm == OPENING:
                    raise SniffError(f"position: table placement {number} "
                                     f"({tile_name(tile)}) needs an end (L, R, U or D)")
                n_moves = kernel.moves_of(layout, 1 << tile, tile, moves)
                if tile * 4 + arm not in moves[:n_moves]:
                    raise SniffError(
                        f"position: table placement {number}, {tile_name(tile)} on "
                        f"{ARM_NAMES[arm]}, is not legal there (open ends "
                        f"{_ends_text(layout)})"
                    )
            layout = int(kernel.place(layout, tile, max(arm, 0)))


def _ends_text(layout: int) -> str:
    from sim.core.layout import decode_ends

    ends = decode_ends(layout)
    return " ".join(f"{arm}={value}" for arm, value in ends.items() if value is not None) or "-"


def move_name(layout: int, move: int) -> str:
    """A move as a person reads it: ``4-6 on L`` (matching half first), ``open with 4-4``."""
    tile, arm = move >> 2, move & 3
    if layout == EMPTY_LAYOUT:
        return f"open with {tile_name(tile)}"
    value = (layout >> (8 * arm)) & ARM_VALUE
    return f"{tile_name(tile, value)} on {ARM_NAMES[arm]}"


# ------------------------------------------------------------ the text form


def format_position(position: Position) -> str:
    """The text form of docs/hint.md; :func:`parse_position` reads it back."""
    table = []
    for (tile, arm), before in zip(position.table, position.layouts()):
        if arm == OPENING:
            table.append(tile_name(tile))
        else:
            table.append(f"{tile_name(tile, (before >> (8 * arm)) & ARM_VALUE)} {ARM_NAMES[arm]}")
    lacks = [
        f"{seat}=" + ",".join(str(v) for v in range(7) if mask >> v & 1)
        for seat, mask in enumerate(position.lacks) if mask
    ]
    lines = [
        "# sniff position (docs/hint.md)",
        f"players: {position.players}",
        f"seat: {position.seat}",
        f"round: {position.round}",
        f"leader: {position.leader}",
        f"target: {position.target}",
        f"scores: {' '.join(map(str, position.scores))}",
        f"hand: {' '.join(tile_name(t) for t in sorted(position.hand))}",
        f"table: {', '.join(table) if table else '-'}",
        f"sizes: {' '.join(map(str, position.sizes))}",
        f"boneyard: {position.boneyard}",
        f"lacks: {' '.join(lacks) if lacks else '-'}",
    ]
    if position.drawn >= 0:
        lines.append(f"drawn: {tile_name(position.drawn)}")
    return "\n".join(lines) + "\n"


# No number of a real position comes near (a target is 200 or 250): beyond it a value
# would only overflow the engine's integers.
POSITION_NUMBER_LIMIT = 1_000_000


def _int(key: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise SniffError(f"position: {key} must be a whole number, got {text!r}") from None
    if abs(value) > POSITION_NUMBER_LIMIT:
        raise SniffError(f"position: {key} must be at most {POSITION_NUMBER_LIMIT:,} in size, "
                         f"got {text.strip()}")
    return value


def _ints(key: str, text: str) -> tuple[int, ...]:
    return tuple(_int(key, item) for item in text.replace(",", " ").split())


def _tile(key: str, text: str) -> int:
    try:
        return parse_tile(text)
    except ValueError as error:
        raise SniffError(f"position: {key}: {error}") from None


def _table(text: str) -> tuple[tuple[int, int], ...]:
    if text.strip() in ("", "-"):
        return ()
    placements = []
    for item in text.split(","):
        parts = item.split()
        if len(parts) == 1:
            placements.append((_tile("table", parts[0]), OPENING))
        elif len(parts) == 2 and parts[1].upper() in ARM_NAMES:
            placements.append((_tile("table", parts[0]), ARM_NAMES.index(parts[1].upper())))
        else:
            raise SniffError(f"position: table placement {item.strip()!r} is not 'a-b' "
                             "(the opening) or 'a-b END' with END one of L, R, U, D")
    return tuple(placements)


def _lacks(text: str, players: int) -> tuple[int, ...]:
    masks = [0] * players
    if text.strip() in ("", "-"):
        return tuple(masks)
    for item in text.split():
        seat_text, equals, values = item.partition("=")
        seat = _int("lacks seat", seat_text) if equals else -1
        if not 0 <= seat < players:
            raise SniffError(f"position: lacks entry {item!r} is not SEAT=V,V,... with a "
                             f"seat 0..{players - 1}")
        for value in values.split(","):
            if value.strip():
                pip = _int("lacks value", value)
                if not 0 <= pip <= 6:
                    raise SniffError(f"position: lacks values are pips 0..6, got {pip}")
                masks[seat] |= 1 << pip
    return tuple(masks)


def parse_position(text: str, source: str = "position") -> Position:
    """A position from its text form; anything wrong is one ``SniffError`` line."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not colon or key not in KEYS:
            raise SniffError(f"{source} line {number} is not a position line ('key: value' with "
                             f"key one of {', '.join(KEYS)}): {raw.strip()!r}")
        if key in values:
            raise SniffError(f"{source} line {number}: {key} is given twice")
        values[key] = value.strip()
    missing = [key for key in REQUIRED if key not in values]
    if missing:
        raise SniffError(f"{source} is not a sniff position: missing {', '.join(missing)} "
                         "(docs/hint.md)")
    try:
        players = check_players(_int("players", values["players"]))
    except SettingError as error:  # a line of the position, not a setting: no flag
        raise SniffError(f"position: {error}") from None
    if "target" in values and _int("target", values["target"]) <= 0:  # 0 means the default
        raise SniffError(f"position: target must be positive, got {values['target']}")
    hand = tuple(_tile("hand", item) for item in values["hand"].replace(",", " ").split())
    drawn = values.get("drawn", "-")
    position = Position(
        players=players,
        seat=_int("seat", values["seat"]),
        hand=hand,
        table=_table(values["table"]),
        scores=_ints("scores", values["scores"]),
        sizes=_ints("sizes", values["sizes"]),
        boneyard=_int("boneyard", values["boneyard"]),
        lacks=_lacks(values.get("lacks", "-"), players),
        round=_int("round", values.get("round", "1")),
        leader=_int("leader", values["leader"]) if "leader" in values else -1,
        target=_int("target", values["target"]) if "target" in values else 0,
        drawn=-1 if drawn in ("", "-") else _tile("drawn", drawn),
    )
    return position.check()


# ------------------------------------------------------------ positions from trace events


