"""The layout (the tiles on the table) as one int64 of bit fields, and the rules that read it.

Arms, as in docs/rules.md: ``L`` and ``R`` are the two sides of the line seen from the opening
tile; ``U`` and ``D`` are the Sniff's side branches.

Bit layout of a layout word (``layout == 0`` is the empty table, before the opening)::

    bits  8*a + 0..2   open value of arm a (a = 0 L, 1 R, 2 U, 3 D)
    bit   8*a + 3      ARM_OPEN:    arm a can be played on
    bit   8*a + 4      ARM_DOUBLE:  arm a's outer tile is a later (non-Sniff) double, which
                                    counts both halves while it is outer
    bit   8*a + 5      ARM_SNIFF:   arm a's outer tile is the Sniff and that line side of the
                                    Sniff is not yet continued (L and R only)
    bit   8*a + 6      ARM_SILENT:  arm a is open but adds nothing to the count: R of a double
                                    opening, whose two free sides are one Sniff counted once
                                    (on L) until either side is continued
    bits  32..34       the Sniff's pip value
    bits  35..36       Sniff state: SNIFF_NONE, SNIFF_TERMINAL (played, a line side still
                       free: counts both halves), SNIFF_OPEN (both line sides continued:
                       branches U and D are open, each uncovered branch counts one half)

A move is ``tile * 4 + arm``; the opening move uses arm ``L`` and puts the tile's low half
on L and its high half on R.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from sim.core.tiles import DOUBLES_MASK, PIP_MASK, TILE_HIGH, TILE_LOW, TILE_PIPS

__all__ = [
    "ARM_BITS", "ARM_COUNT", "ARM_DOUBLE", "arm_field", "ARM_L", "ARM_NAMES", "ARM_OPEN",
    "ARM_R", "ARM_SILENT", "ARM_SNIFF", "ARM_VALUE", "bit_index", "can_play", "count_ends",
    "decode_ends", "EMPTY_LAYOUT", "legal_moves", "move_points", "N_ARMS", "open_values_mask",
    "place_tile", "POINTS_FOR_COUNT", "points_for_count", "popcount", "SNIFF_STATE_SHIFT",
    "SNIFF_TERMINAL", "SNIFF_VALUE_SHIFT", "tile_moves",
]

ARM_L, ARM_R, ARM_U, ARM_D = 0, 1, 2, 3
ARM_NAMES = ("L", "R", "U", "D")
N_ARMS = 4

ARM_VALUE = 0x7
ARM_OPEN = 0x8
ARM_DOUBLE = 0x10
ARM_SNIFF = 0x20
ARM_SILENT = 0x40
ARM_BITS = 0xFF

SNIFF_VALUE_SHIFT = 32
SNIFF_STATE_SHIFT = 35
SNIFF_NONE, SNIFF_TERMINAL, SNIFF_OPEN = 0, 1, 2

EMPTY_LAYOUT = 0


@njit(inline="always")
def arm_field(layout: int, arm: int) -> int:
    """One arm's 8-bit field of a layout."""
    return (layout >> (8 * arm)) & ARM_BITS


@njit(inline="always")
def sniff_state(layout: int) -> int:
    return (layout >> SNIFF_STATE_SHIFT) & 3


@njit(inline="always")
def sniff_value(layout: int) -> int:
    return (layout >> SNIFF_VALUE_SHIFT) & 7


@njit(inline="always")
def with_arm(layout: int, arm: int, field: int) -> int:
    shift = 8 * arm
    return (layout & ~(ARM_BITS << shift)) | (field << shift)


def _arm_count(field: int) -> int:
    """What one arm adds to the count: its open value, twice for a terminal double."""
    if not field & ARM_OPEN or field & ARM_SILENT:
        return 0
    value = field & ARM_VALUE
    return 2 * value if field & (ARM_DOUBLE | ARM_SNIFF) else value


# Every arm field's share of the count, so the count is four table reads with no branch: a
# terminal Sniff counts both halves on the side it sits on (the other side of a double
# opening is silent), its closed branches add nothing, an open branch one half.
ARM_COUNT = np.array([_arm_count(field) for field in range(ARM_BITS + 1)], dtype=np.int64)


@njit(inline="always")
def count_ends(layout: int) -> int:
    """The sum of the ends that score, as docs/rules.md defines the count."""
    return (
        ARM_COUNT[layout & ARM_BITS]
        + ARM_COUNT[(layout >> 8) & ARM_BITS]
        + ARM_COUNT[(layout >> 16) & ARM_BITS]
        + ARM_COUNT[(layout >> 24) & ARM_BITS]
    )


@njit(inline="always")
def place_tile(layout: int, tile: int, arm: int) -> int:
    """The layout after ``tile`` is placed on ``arm`` (the move must be legal)."""
    low = TILE_LOW[tile]
    high = TILE_HIGH[tile]
    if layout == EMPTY_LAYOUT:
        if low == high:
            field = low | ARM_OPEN | ARM_SNIFF
            return (
                field
                | ((field | ARM_SILENT) << 8)
                | (low << SNIFF_VALUE_SHIFT)
                | (SNIFF_TERMINAL << SNIFF_STATE_SHIFT)
            )
        return (low | ARM_OPEN) | ((high | ARM_OPEN) << 8)
    old = arm_field(layout, arm)
    double = (DOUBLES_MASK >> tile) & 1
    no_sniff_yet = 1 if sniff_state(layout) == SNIFF_NONE else 0
    if (old & ARM_SNIFF) | (double & no_sniff_yet) == 0:
        # The common case, without a branch: a tile or a later double extends an arm that
        # does not end in the Sniff. The new outer end is the tile's other half.
        outer = TILE_PIPS[tile] - (old & ARM_VALUE)
        return with_arm(layout, arm, outer | ARM_OPEN | double * ARM_DOUBLE)
    if low == high:
        if sniff_state(layout) == SNIFF_NONE:
            layout = with_arm(layout, arm, low | ARM_OPEN | ARM_SNIFF)
            return layout | (low << SNIFF_VALUE_SHIFT) | (SNIFF_TERMINAL << SNIFF_STATE_SHIFT)
        # A later double can never continue a Sniff side: that would need the Sniff again.
        return with_arm(layout, arm, low | ARM_OPEN | ARM_DOUBLE)
    value = old & ARM_VALUE
    outer = high if low == value else low
    layout = with_arm(layout, arm, outer | ARM_OPEN)
    if old & ARM_SNIFF:
        # The other side of a double opening now carries the Sniff's count alone.
        layout &= ~(ARM_SILENT << (8 * (1 - arm)))
        other_side = arm_field(layout, 1 - arm)
        if other_side & ARM_SNIFF == 0:
            # Both line sides of the Sniff are continued: its branches open.
            branch = sniff_value(layout) | ARM_OPEN
            layout = with_arm(layout, ARM_U, branch)
            layout = with_arm(layout, ARM_D, branch)
            layout = (layout & ~(3 << SNIFF_STATE_SHIFT)) | (SNIFF_OPEN << SNIFF_STATE_SHIFT)
    return layout


# A count scores itself when it is a positive multiple of 5, else nothing (counts reach 48).
POINTS_FOR_COUNT = np.array([c if c > 0 and c % 5 == 0 else 0 for c in range(64)], dtype=np.int64)


@njit(inline="always")
def points_for_count(count: int) -> int:
    """The points an end count scores (a multiple of five, else nothing)."""
    return POINTS_FOR_COUNT[count]


@njit(inline="always")
def move_points(layout: int, move: int) -> int:
    """Points that a move (``tile * 4 + arm``) would score on this layout."""
    return points_for_count(count_ends(place_tile(layout, move >> 2, move & 3)))


# Per arm field: the tiles that fit it (none when the arm is closed) and its open value as a
# bit, so move generation reads tables instead of branching on every arm.
ARM_FITS = np.array(
    [
        PIP_MASK[field & ARM_VALUE] if field & ARM_OPEN and field & ARM_VALUE < 7 else 0
        for field in range(ARM_BITS + 1)
    ],
    dtype=np.int64,
)
ARM_OPEN_VALUE = np.array(
    [1 << (field & ARM_VALUE) if field & ARM_OPEN else 0 for field in range(ARM_BITS + 1)],
    dtype=np.int64,
)
# Moves are enumerated two arms per 64-bit word (the second arm's fits shifted by 28 bits):
# bit b of a word is the move of tile b % 28 on the word's first arm, or on its second.
MOVE_OF_BIT = np.array([(bit % 28) * 4 + bit // 28 for bit in range(56)], dtype=np.int64)


@njit(inline="always")
def open_values_mask(layout: int) -> int:
    """Bit v set when some open arm shows pip value v (what a player who drew must lack)."""
    return (
        ARM_OPEN_VALUE[layout & ARM_BITS]
        | ARM_OPEN_VALUE[(layout >> 8) & ARM_BITS]
        | ARM_OPEN_VALUE[(layout >> 16) & ARM_BITS]
        | ARM_OPEN_VALUE[(layout >> 24) & ARM_BITS]
    )


@njit(inline="always")
def legal_moves(layout: int, hand: int, moves) -> int:
    """Write the legal moves (``tile * 4 + arm``) of ``hand`` into ``moves``; return how many.

    Order: arm by arm (L, R, U, D), tiles by id within an arm.
    """
    n_moves = 0
    if layout == EMPTY_LAYOUT:
        rest = hand
        while rest:
            moves[n_moves] = bit_index(rest) * 4 + ARM_L
            n_moves += 1
            rest &= rest - 1
        return n_moves
    rest = (hand & ARM_FITS[layout & ARM_BITS]) | (
        (hand & ARM_FITS[(layout >> 8) & ARM_BITS]) << 28
    )
    while rest:
        moves[n_moves] = MOVE_OF_BIT[bit_index(rest)]
        n_moves += 1
        rest &= rest - 1
    rest = (hand & ARM_FITS[(layout >> 16) & ARM_BITS]) | (
        (hand & ARM_FITS[(layout >> 24) & ARM_BITS]) << 28
    )
    while rest:
        moves[n_moves] = MOVE_OF_BIT[bit_index(rest)] + ARM_U
        n_moves += 1
        rest &= rest - 1
    return n_moves


@njit(inline="always")
def tile_moves(layout: int, tile: int, moves) -> int:
    """The legal moves of one tile (a drawn tile that must be played at once)."""
    return legal_moves(layout, 1 << tile, moves)


@njit(inline="always")
def can_play(layout: int, hand: int) -> bool:
    """Whether a hand holds a tile that fits the layout."""
    if layout == EMPTY_LAYOUT:
        return hand != 0
    fits = (
        ARM_FITS[layout & ARM_BITS]
        | ARM_FITS[(layout >> 8) & ARM_BITS]
        | ARM_FITS[(layout >> 16) & ARM_BITS]
        | ARM_FITS[(layout >> 24) & ARM_BITS]
    )
    return hand & fits != 0


@njit(inline="always")
def bit_index(mask: int) -> int:
    """Index of the lowest set bit of a non-zero mask (LLVM's count-trailing-zeros)."""
    return trailing_zeros(mask)  # type: ignore[call-arg]  # numba passes an intrinsic's typing context itself


@njit(inline="always")
def popcount(mask: int) -> int:
    """Number of set bits, branch-free (SWAR): hand sizes are asked for at every decision."""
    mask = mask - ((mask >> 1) & 0x5555555555555555)
    mask = (mask & 0x3333333333333333) + ((mask >> 2) & 0x3333333333333333)
    mask = (mask + (mask >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (mask * 0x0101010101010101) >> 56


def decode_ends(layout: int) -> dict[str, int | None]:
    """``{"L": v, "R": v, "U": v or None, "D": v or None}`` as the trace format shows it."""
    ends: dict[str, int | None] = {}
    for arm, name in enumerate(ARM_NAMES):
        field = (layout >> (8 * arm)) & ARM_BITS
        ends[name] = (field & ARM_VALUE) if field & ARM_OPEN else None
    return ends
