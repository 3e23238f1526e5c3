"""The rules in plain Python that a game's replay reads: tiles, scoring and the layout.

Restated from ``docs/rules.md`` as directly as possible, sharing no code with the engine
(whose layout is packed into bit fields for speed): the tile and seat rules
(``parse_tile``, ``penalty``, ``points_for``, ``team_of``) and :class:`Layout`, the tiles on
the table reduced to the open ends and the Sniff. Apart from the replay of a trace
(``sim.reference.oracle``) because the plain-Python player (``sim.reference.python_model``)
and the tests read them too.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Layout", "penalty", "points_for"]

Tile = tuple[int, int]  # (low, high), low <= high

ARMS = ("L", "R", "U", "D")
ALL_TILES = frozenset((a, b) for a in range(7) for b in range(a, 7))
HAND_SIZE = {2: 7, 3: 6, 4: 5}
TARGET = {2: 250, 3: 200, 4: 200}


# --------------------------------------------------------------------------- small rules


def parse_tile(text: Any) -> Tile:
    """Halves of ``"a-b"`` in written order (the order matters for the opening tile)."""
    if not isinstance(text, str):
        raise TypeError(f"tile must be a string 'a-b', got {text!r}")
    parts = text.split("-")
    if len(parts) != 2 or not all(len(p) == 1 and p in "0123456" for p in parts):
        raise ValueError(f"not a tile: {text!r} (expected 'a-b' with pips 0..6)")
    return int(parts[0]), int(parts[1])


def norm(tile: Tile) -> Tile:
    """The tile's identity: its halves low first."""
    a, b = tile
    return (a, b) if a <= b else (b, a)


def penalty(pips: int) -> int:
    """A hand's settlement: pips rounded to the nearest multiple of 5 (1-2 down, 3-4 up)."""
    return (pips + 2) // 5 * 5


def points_for(count: int) -> int:
    """A placement scores its count when that is a positive multiple of 5, else nothing."""
    return count if count > 0 and count % 5 == 0 else 0


def team_of(seat: int, players: int) -> int:
    """Four players play in partnerships 0+2 and 1+3; otherwise everyone scores alone."""
    return seat % 2 if players == 4 else seat


def team_count(players: int) -> int:
    """Two partnerships with four players, else one score per player."""
    return 2 if players == 4 else players


# --------------------------------------------------------------------------- the layout


class Layout:
    """The tiles on the table, reduced to what the rules read: the open ends and the Sniff.

    ``ends[arm]`` is the open value of an arm (None while the arm does not exist).
    ``later_double`` holds the arms whose outer tile is a later (non-Sniff) double, which
    counts both halves until covered. ``sniff`` is the Sniff's value once played, and
    ``sniff_free`` the line arms (L/R) whose outer tile is still the Sniff itself, i.e. the
    line sides of the Sniff not yet continued. When that set empties, U and D open.
    """

    def __init__(self) -> None:
        self.ends: dict[str, int | None] = dict.fromkeys(ARMS)
        self.later_double: set[str] = set()
        self.sniff: int | None = None
        self.sniff_free: set[str] = set()
        self.opened = False

    def open_values(self) -> set[int]:
        return {v for v in self.ends.values() if v is not None}

    def placement(self, hand: set[Tile]) -> tuple[Tile, str] | None:
        """Some legal placement (tile, arm) for ``hand``, or None when there is none."""
        if not self.opened:
            return (min(hand), "opening") if hand else None
        for arm in ARMS:
            value = self.ends[arm]
            if value is None:
                continue
            for tile in hand:
                if value in tile:
                    return tile, arm
        return None

    def fits(self, tile: Tile) -> bool:
        if not self.opened:
            return True
        values = self.open_values()
        return tile[0] in values or tile[1] in values

    def open_with(self, tile: Tile) -> None:
        """The opening: ``a-b`` puts a on L and b on R; a double is the Sniff."""
        a, b = tile
        self.opened = True
        self.ends["L"], self.ends["R"] = a, b
        if a == b:
            self.sniff = a
            self.sniff_free = {"L", "R"}

    def place(self, tile: Tile, arm: str) -> str | None:
        """Place ``tile`` on ``arm``; return why that is illegal, or None once done."""
        if arm not in ARMS:
            return f"end {arm!r} is not one of L, R, U, D"
        value = self.ends[arm]
        if value is None:
            if arm in ("U", "D"):
                return (
                    f"end {arm} is not open: the Sniff's branches open only once both "
                    f"line sides of the Sniff are continued"
                )
            return f"end {arm} is not open"
        a, b = tile
        if a == value:
            outer = b
        elif b == value:
            outer = a
        else:
            return f"tile {a}-{b} does not fit end {arm} (open value {value})"
        self.ends[arm] = outer
        if a == b:
            if self.sniff is None:
                # The first double of the round is the Sniff, terminal on this arm.
                self.sniff = a
                self.sniff_free = {arm}
            else:
                self.later_double.add(arm)
            return None
        self.later_double.discard(arm)
        if arm in self.sniff_free:
            self.sniff_free.discard(arm)
            if not self.sniff_free:
                self.ends["U"] = self.ends["D"] = self.sniff
        return None

    def _arm_count(self, arm: str) -> int:
        value = self.ends[arm]
        if value is None:
            return 0
        return 2 * value if arm in self.later_double else value

    def count(self) -> int:
        """The sum of the ends that score after the last placement."""
        if self.sniff is not None and self.sniff_free:
            # Terminal Sniff: both halves, plus any line arm already past it.
            return 2 * self.sniff + sum(
                self._arm_count(arm) for arm in ("L", "R") if arm not in self.sniff_free
            )
        return sum(self._arm_count(arm) for arm in ARMS)

    def ends_dict(self) -> dict[str, int | None]:
        return dict(self.ends)

