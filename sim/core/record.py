"""The public record of a round: every placement, draw and pass so far, in order, packed.

A player at the table sees who placed what, who drew and who passed; a strategy's view
carries the same record (``sim.core.observation``'s ``RECORD`` slots) so that it may reason from
what the others did this round — for instance that an opponent who had a higher count to
play would have played it. The engine keeps the record in its state and copies it into
every view; it holds nothing a player could not have seen.

The record at offset ``base`` of an int64 array (``RECORD_SIZE`` slots)::

    base + 0            n, the number of events this round so far
    base + 1 + i // 5   event i (0 <= i < n) in bits 11 * (i % 5) .. 11 * (i % 5) + 10:
        bits 0-6    the move (tile * 4 + arm, as the moves buffer gives it) of a placement;
                    0 for a draw or a pass
        bits 7-8    the seat
        bits 9-10   the kind: PLACE_CHOSEN (a tile of the hand, chosen), PLACE_FORCED (the
                    tile the seat had just drawn, or the opening tile a run imposed),
                    DRAW (one tile from the boneyard; which one is hidden), PASS

Capacity: a round has at most 28 placements, 14 draws and, between two placements, at
most players - 1 passes (the round is blocked at the first pass after which nobody can
place): 126 events, under ``RECORD_EVENTS``. Words past event n - 1 are not cleared and
must not be read.
"""

from __future__ import annotations

from numba import njit

__all__ = [
    "append", "clear", "copy", "DRAW", "draw_kept", "event", "EVENT_BITS", "EVENTS_PER_WORD",
    "PASS", "PLACE_CHOSEN", "PLACE_FORCED", "RECORD_EVENTS", "RECORD_SIZE", "starts_draw_run"
]

PLACE_CHOSEN = 0
PLACE_FORCED = 1
DRAW = 2
PASS = 3
KIND_NAMES = ("place", "place_forced", "draw", "pass")

EVENTS_PER_WORD = 5
EVENT_BITS = 11
RECORD_EVENTS = 130
RECORD_SIZE = 1 + RECORD_EVENTS // EVENTS_PER_WORD


@njit(inline="always")
def clear(array, base: int) -> None:
    """An empty record (a new round)."""
    array[base] = 0


@njit(inline="always")
def append(array, base: int, kind: int, seat: int, move: int) -> None:
    """Add one event; the first event of a word overwrites what the word held."""
    n = array[base]
    if n >= RECORD_EVENTS:
        return
    word = base + 1 + n // EVENTS_PER_WORD
    shift = EVENT_BITS * (n % EVENTS_PER_WORD)
    bits = (kind << 9) | (seat << 7) | move
    if shift == 0:
        array[word] = bits
    else:
        array[word] |= bits << shift
    array[base] = n + 1


@njit(inline="always")
def copy(source, source_base: int, target, target_base: int) -> None:
    """The record at ``source_base`` into ``target`` at ``target_base`` (used words only)."""
    n = source[source_base]
    target[target_base] = n
    for word in range((n + EVENTS_PER_WORD - 1) // EVENTS_PER_WORD):
        target[target_base + 1 + word] = source[source_base + 1 + word]


@njit(inline="always")
def event(array, base: int, index: int) -> tuple[int, int, int]:
    """Event ``index`` as ``(kind, seat, move)``."""
    word = array[base + 1 + index // EVENTS_PER_WORD]
    bits = (word >> (EVENT_BITS * (index % EVENTS_PER_WORD))) & ((1 << EVENT_BITS) - 1)
    return bits >> 9, (bits >> 7) & 3, bits & 127


@njit(inline="always")
def draw_kept(array, base: int, index: int) -> bool:
    """Did draw event ``index`` add a hidden tile to the hand? A drawn tile that fits is
    placed at once (the next event, ``PLACE_FORCED``); any other stays in the hand."""
    if index + 1 >= array[base]:
        return True
    return event(array, base, index + 1)[0] != PLACE_FORCED


@njit
def starts_draw_run(array, base: int, index: int) -> bool:
    """Is draw event ``index`` the first of a run, i.e. not right after a draw by the same
    seat? A seat that cannot place draws until a tile fits: the draws of one such turn
    are one run, with the same open values at each."""
    if index == 0:
        return True
    kind, seat, _ = event(array, base, index - 1)
    return kind != DRAW or seat != event(array, base, index)[1]
