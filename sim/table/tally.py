"""Scores in the optional paper tally of the rule text, for replays and reports.

The rule text: one stroke records 5 raw points; a large central X with a small x in each of
its four surrounding spaces is a 50-point symbol. Two strokes make an X, so a symbol is 10
strokes, and a running score is a row of full symbols followed by one symbol in progress.
Strokes go into a symbol in a fixed order, so every score has exactly one picture:

1. the big X's ``╲`` stroke, 2. its ``╱`` stroke,
3-4. the small x above it (falling stroke, then rising stroke),
5-6. the small x to its right, 7-8. the one below it, 9-10. the one to its left
(clockwise from the top, the way a pen goes round).

A symbol is drawn in 3 rows of 5 columns::

    ╲ × ╱        \\ x /
    × ╳ ×        x X x      (ASCII variant)
    ╱ × ╲        / x \\

A small x with only its first stroke shows ``∖`` (ASCII ``\\``); the big X with only its
first stroke shows the ``╲`` diagonal alone.

Cases the paper notation does not cover, decided here:

- Negative scores (settlement may take a score below zero) get a leading minus sign in
  front of the tally of the absolute value: the minus applies to the whole picture.
- Points that are not a multiple of 5 (never produced by the rules, since every gain and
  penalty is a multiple of 5, but possible in hand-made data) are drawn as the tally of the
  whole 5s with the remainder in digits after it, ``+3``: 13 is an X plus 3, and -13 is
  minus (an X plus 3).
- A score under 5 in absolute value has no strokes to draw, so ``tally`` shows the digits
  alone (``0``, ``3``, ``−3``) on a single line.
"""

from __future__ import annotations

import operator

__all__ = ["tally", "tally_inline"]

POINTS_PER_STROKE = 5
STROKES_PER_SYMBOL = 10
POINTS_PER_SYMBOL = POINTS_PER_STROKE * STROKES_PER_SYMBOL

_ROWS, _COLS = 3, 5
_SYMBOL_GAP = "  "

# Cells of the 3x5 grid. The big X's two strokes cross in the centre cell; the small x's
# sit in the four spaces the big X leaves (top, right, bottom, left), in stroke order.
_BIG_STROKE_CELLS = (((0, 0), (2, 4)), ((0, 4), (2, 0)))
_CENTRE = (1, 2)
_SMALL_CELLS = ((0, 2), (1, 4), (2, 2), (1, 0))

_GLYPHS = {
    False: {
        "big1": "╲", "big2": "╱", "centre1": "╲", "centre2": "╳",
        "small1": "∖", "small2": "×", "minus": "−",
        "full": "⊠", "none": "·",
    },
    True: {
        "big1": "\\", "big2": "/", "centre1": "\\", "centre2": "X",
        "small1": "\\", "small2": "x", "minus": "-",
        "full": "#", "none": ".",
    },
}


def tally_strokes(points: int) -> tuple[int, int, int]:
    """Split ``abs(points)`` into (full 50-point symbols, strokes of the partial symbol,
    remainder under 5 points).

    The sign is not part of the split because the notation draws it separately, in front
    of the whole tally.
    """
    magnitude = abs(operator.index(points))
    strokes, remainder = divmod(magnitude, POINTS_PER_STROKE)
    full, partial = divmod(strokes, STROKES_PER_SYMBOL)
    return full, partial, remainder


def _small_strokes(strokes: int, index: int) -> int:
    """Strokes (0, 1 or 2) that small x number ``index`` holds in a symbol of ``strokes``."""
    return min(max(strokes - 2 - 2 * index, 0), 2)


def _symbol(strokes: int, glyphs: dict[str, str]) -> list[str]:
    """The 3 rows of one symbol holding its first ``strokes`` strokes (fixed width 5)."""
    grid = [[" "] * _COLS for _ in range(_ROWS)]
    for index, cells in enumerate(_BIG_STROKE_CELLS[: min(strokes, 2)]):
        for row, col in cells:
            grid[row][col] = glyphs[f"big{index + 1}"]
    if strokes:
        row, col = _CENTRE
        grid[row][col] = glyphs["centre2" if strokes >= 2 else "centre1"]
    for index, (row, col) in enumerate(_SMALL_CELLS):
        small = _small_strokes(strokes, index)
        if small:
            grid[row][col] = glyphs[f"small{small}"]
    return ["".join(cells) for cells in grid]


def tally(points: int, ascii: bool = False) -> str:
    """The score as multi-line tally art (3 rows), or its digits when there is nothing to
    draw; see the module docstring for the stroke order and the negative/remainder rules.

    Rows are right-stripped so the text compares cleanly; symbols are 5 columns wide with 2
    spaces between them, so a tally is ``7 * symbols - 2`` columns plus sign and remainder.
    """
    points = operator.index(points)
    glyphs = _GLYPHS[ascii]
    full, partial, remainder = tally_strokes(points)
    sign = glyphs["minus"] if points < 0 else ""
    if full == 0 and partial == 0:
        return f"{sign}{abs(points)}"
    symbols = [_symbol(STROKES_PER_SYMBOL, glyphs)] * full
    if partial:
        symbols.append(_symbol(partial, glyphs))
    rows = [_SYMBOL_GAP.join(symbol[row] for symbol in symbols) for row in range(_ROWS)]
    middle = _ROWS // 2
    if sign:
        rows = [(f"{sign} " if row == middle else "  ") + text for row, text in enumerate(rows)]
    if remainder:
        rows[middle] += f" +{remainder}"
    return "\n".join(text.rstrip() for text in rows)


def tally_inline(points: int, ascii: bool = False) -> str:
    """The score on one line, for running scores beside each event of a replay.

    Form: ``[sign][full symbols] [partial symbol][+remainder] (raw points)``, where a full
    50-point symbol is ``⊠`` (ASCII ``#``) and the partial symbol lists its strokes in
    stroke order: the big X as ``╲`` (one stroke) or ``╳`` (both), then each small x as
    ``∖`` (one stroke) or ``×`` (both); ASCII ``\\``/``X`` and ``\\``/``x``. With no
    strokes at all the picture is ``·`` (ASCII ``.``). Examples::

        0 -> "· (0)"     5 -> "╲ (5)"       45 -> "╳×××∖ (45)"     50 -> "⊠ (50)"
        135 -> "⊠⊠ ╳××∖ (135)"     -15 -> "−╳∖ (-15)"     13 -> "╳+3 (13)"

    The raw number is kept because a glance at strokes is slower than reading digits when
    comparing two teams; the strokes show progress towards the next 50.
    """
    points = operator.index(points)
    glyphs = _GLYPHS[ascii]
    full, partial, remainder = tally_strokes(points)
    part = ""
    if partial:
        part = glyphs["centre2" if partial >= 2 else "centre1"]
        for index in range(len(_SMALL_CELLS)):
            small = _small_strokes(partial, index)
            if small:
                part += glyphs[f"small{small}"]
    body = " ".join(piece for piece in (glyphs["full"] * full, part) if piece)
    body = body or glyphs["none"]
    if remainder:
        body += f"+{remainder}"
    if points < 0:
        body = glyphs["minus"] + body
    return f"{body} ({points})"
