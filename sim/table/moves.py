"""A move and a count as the person reads them at the table: ``4-6 on L``, and how a
layout's count adds up (``count 6 + 1 + 4 + 4 = 15, a multiple of 5: +15 for seat 0``).

Presentation only: the count and the points always come from the engine; this reads the
same layout word (``sim.core.layout`` bit fields) to show them in words.
"""

from __future__ import annotations

from sim.core.layout import (
    ARM_DOUBLE,
    ARM_NAMES,
    ARM_OPEN,
    ARM_SNIFF,
    ARM_VALUE,
    EMPTY_LAYOUT,
    SNIFF_STATE_SHIFT,
    SNIFF_TERMINAL,
    SNIFF_VALUE_SHIFT,
)
from sim.core.tiles import tile_name

__all__ = ["move_text"]


def count_terms(layout: int) -> list[str]:
    """The ends that make up the count of a layout, as text (``["6", "1", "2×4"]``).

    Presentation only: the count itself always comes from the engine's event; this reads
    the same layout word (``sim.core.layout`` bit fields) to show how it adds up.
    """
    terms = []

    def term(field: int) -> str:
        value = field & ARM_VALUE
        return f"2×{value}" if field & ARM_DOUBLE else str(value)

    fields = [(layout >> (8 * arm)) & 0xFF for arm in range(len(ARM_NAMES))]
    if (layout >> SNIFF_STATE_SHIFT) & 3 == SNIFF_TERMINAL:
        terms.append(f"2×{(layout >> SNIFF_VALUE_SHIFT) & 7}")
        terms += [term(field) for field in fields[:2] if not field & ARM_SNIFF]
    else:
        terms += [term(field) for field in fields if field & ARM_OPEN]
    return terms


def _term_value(term: str) -> int:
    return 2 * int(term[2:]) if term.startswith("2×") else int(term)


def explain_count(layout: int, count: int, points: int, who: str) -> str:
    """``count 6 + 1 + 4 + 4 = 15, a multiple of 5: +15 for seat 0``."""
    terms = count_terms(layout)
    sum_text = f"{' + '.join(terms)} = {count}" if len(terms) > 1 else str(count)
    if sum(_term_value(t) for t in terms) != count:
        sum_text = str(count)  # never expected; the engine's count is what counts
    if points:
        return f"count {sum_text}, a multiple of 5: +{points} for {who}"
    if count == 0:
        return f"count {sum_text}: a count of 0 scores nothing"
    return f"count {sum_text}, not a multiple of 5: no points"


def move_text(layout: int, move: int) -> str:
    """A legal move as the person reads it: ``4-6 on L`` (matching half first)."""
    tile, arm = move >> 2, move & 3
    if layout == EMPTY_LAYOUT:
        return f"open with {tile_name(tile)}"
    value = ((layout >> (8 * arm)) & ARM_VALUE)
    return f"{tile_name(tile, value)} on {ARM_NAMES[arm]}"
