"""The fixed-size float vector a learner sees: the engine's public view, encoded.

A strategy's view (``sim.core.observation``) packs the public game into int64 bit fields;
a neural network wants a flat vector of small floats. ``encode`` turns views into rows of
``ENCODING_SIZE`` float32, reading nothing but the view, so it can show no more than the
engine shows a built-in strategy (no other hand, no boneyard order).

Everything seat-indexed is *relative to the deciding seat*: relative seat ``j`` is the seat
``j`` places after it (``(seat + j) % players``), relative team ``j`` that seat's team, so
the same network plays any seat. With fewer than four players the unused seat and team
slots are 0. Every value lies in ``[LOW, HIGH] = [-1, 2]`` (only scores leave [0, 1]).
The blocks, in order (``BLOCKS`` holds each name and size)::

    hand        28  1 for each tile in the deciding seat's hand
    played      28  1 for each tile on the table this round
    unseen      28  1 for each tile neither in the hand nor on the table (others' hands
                    and the boneyard: a public inference, not their contents)
    arms        44  per arm L, R, U, D: open, its open value one-hot (7), later double,
                    Sniff still terminal on it, silent (sim.core.layout's bit fields)
    sniff       10  the Sniff's state one-hot (none, terminal, open), its value one-hot (7)
    count        1  the count of the ends (what scores when it is a multiple of 5) / 60
    scores       4  score of relative team j / the target, clipped to [-1, 2] (LOW, HIGH)
    hand_sizes   4  tiles in relative seat j's hand / 21 (7 dealt and the 14 of the boneyard)
    lacks       28  per relative seat, the 7 pip values it is publicly known to lack
    boneyard     1  tiles left to draw / 28
    round        1  the round number / 200 (the default round cap), at most 1
    forced       1  1 when the move places the tile just drawn (no choice of tile)
    leader       4  one-hot: the relative seat that led this round
    players      3  one-hot: 2, 3 or 4 players
    target       1  the points that win / 250
    draws        4  tiles relative seat j drew this round / 14 (from the public record)
    passes       4  times relative seat j passed this round / 28 (from the public record)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import observation as slots
from sim.core.layout import (
    ARM_BITS,
    ARM_COUNT,
    ARM_DOUBLE,
    ARM_OPEN,
    ARM_SILENT,
    ARM_SNIFF,
    SNIFF_STATE_SHIFT,
    SNIFF_VALUE_SHIFT,
)
from sim.core.record import DRAW, EVENT_BITS, EVENTS_PER_WORD, PASS, RECORD_EVENTS
from sim.core.tiles import ALL_TILES, N_PIPS, N_TILES

__all__ = ["BLOCKS", "encode", "ENCODING_SIZE"]

LOW, HIGH = -1.0, 2.0

# (name, size) of each block of the encoding, in order
BLOCKS: tuple[tuple[str, int], ...] = (
    ("hand", N_TILES), ("played", N_TILES), ("unseen", N_TILES), ("arms", 4 * 11),
    ("sniff", 3 + N_PIPS), ("count", 1), ("scores", 4), ("hand_sizes", 4),
    ("lacks", 4 * N_PIPS), ("boneyard", 1), ("round", 1), ("forced", 1), ("leader", 4),
    ("players", 3), ("target", 1), ("draws", 4), ("passes", 4),
)
OFFSETS: dict[str, int] = {}
_offset = 0
for _name, _size in BLOCKS:
    OFFSETS[_name] = _offset
    _offset += _size
ENCODING_SIZE = _offset
del _offset, _name, _size

_BLOCK_SIZE = dict(BLOCKS)
_HAND, _PLAYED, _UNSEEN = OFFSETS["hand"], OFFSETS["played"], OFFSETS["unseen"]
_ARMS, _SNIFF, _COUNT = OFFSETS["arms"], OFFSETS["sniff"], OFFSETS["count"]
_SCORES, _SIZES, _LACKS = OFFSETS["scores"], OFFSETS["hand_sizes"], OFFSETS["lacks"]
_BONEYARD, _ROUND, _FORCED = OFFSETS["boneyard"], OFFSETS["round"], OFFSETS["forced"]
_LEADER, _PLAYERS, _TARGET = OFFSETS["leader"], OFFSETS["players"], OFFSETS["target"]
_DRAWS, _PASSES = OFFSETS["draws"], OFFSETS["passes"]
_EVENT_MASK = (1 << EVENT_BITS) - 1


def decode_tiles(row: np.ndarray, name: str) -> int:
    """The tile mask a tile block (hand, played, unseen) of one encoded row shows."""
    block = np.asarray(row)[OFFSETS[name]:OFFSETS[name] + N_TILES]
    return sum(1 << t for t in range(N_TILES) if block[t] > 0.5)


@njit(inline="always")
def _tiles(out, row: int, start: int, mask: int) -> None:
    for tile in range(N_TILES):
        out[row, start + tile] = (mask >> tile) & 1


@njit(inline="always")
def _layout(out, row: int, layout: int) -> None:
    count = 0
    for arm in range(4):
        field = (layout >> (8 * arm)) & ARM_BITS
        count += ARM_COUNT[field]
        base = _ARMS + 11 * arm
        if field & ARM_OPEN:
            out[row, base] = 1.0
            out[row, base + 1 + (field & 7)] = 1.0
        out[row, base + 8] = (field & ARM_DOUBLE) != 0
        out[row, base + 9] = (field & ARM_SNIFF) != 0
        out[row, base + 10] = (field & ARM_SILENT) != 0
    state = (layout >> SNIFF_STATE_SHIFT) & 3
    out[row, _SNIFF + min(state, 2)] = 1.0
    if state != 0:
        out[row, _SNIFF + 3 + ((layout >> SNIFF_VALUE_SHIFT) & 7)] = 1.0
    out[row, _COUNT] = count / 60.0


@njit(inline="always")
def _record_counts(out, row: int, view, seat: int, players: int) -> None:
    """Draws and passes per relative seat this round, read from the public record."""
    for index in range(min(view[slots.RECORD], RECORD_EVENTS)):
        word = view[slots.RECORD + 1 + index // EVENTS_PER_WORD]
        bits = (word >> (EVENT_BITS * (index % EVENTS_PER_WORD))) & _EVENT_MASK
        kind = bits >> 9
        relative = (((bits >> 7) & 3) - seat) % players
        if kind == DRAW:
            out[row, _DRAWS + relative] += 1.0 / 14.0
        elif kind == PASS:
            out[row, _PASSES + relative] += 1.0 / 28.0


@njit(cache=True)
def _encode_rows(views, out) -> None:
    for row in range(views.shape[0]):
        view = views[row]
        seat, players = view[slots.SEAT], view[slots.PLAYERS]
        hand, played = view[slots.HAND], view[slots.PLAYED]
        _tiles(out, row, _HAND, hand)
        _tiles(out, row, _PLAYED, played)
        _tiles(out, row, _UNSEEN, ALL_TILES & ~(hand | played))
        _layout(out, row, view[slots.LAYOUT])
        target = max(view[slots.TARGET], 1)
        teams = 2 if players == 4 else players
        for j in range(players):
            other = (seat + j) % players
            if j < teams:
                team = other % 2 if players == 4 else other
                out[row, _SCORES + j] = min(max(view[slots.SCORE + team] / target, LOW), HIGH)
            out[row, _SIZES + j] = view[slots.HAND_SIZE + other] / 21.0
            lacks = view[slots.LACKS + other]
            for pip in range(N_PIPS):
                out[row, _LACKS + N_PIPS * j + pip] = (lacks >> pip) & 1
        out[row, _BONEYARD] = view[slots.BONEYARD_SIZE] / 28.0
        out[row, _ROUND] = min(view[slots.ROUND] / 200.0, 1.0)
        out[row, _FORCED] = view[slots.FORCED] != 0
        out[row, _LEADER + (view[slots.LEADER] - seat) % players] = 1.0
        out[row, _PLAYERS + players - 2] = 1.0
        out[row, _TARGET] = view[slots.TARGET] / 250.0
        _record_counts(out, row, view, seat, players)


def encode(views: np.ndarray) -> np.ndarray:
    """Rows of public views (``(k, OBSERVATION_SIZE)`` int64, or one view) as float32
    rows of ``ENCODING_SIZE``; blocks and scales in the module docstring."""
    if type(views) is np.ndarray and views.ndim == 1 and views.dtype == np.int64:
        out = np.zeros((1, ENCODING_SIZE), dtype=np.float32)  # one view: the AEC's step
        _encode_rows(views.reshape(1, -1), out)
        return out[0]
    views = np.asarray(views, dtype=np.int64)
    single = views.ndim == 1
    rows = np.ascontiguousarray(views.reshape(-1, views.shape[-1]))
    out = np.zeros((len(rows), ENCODING_SIZE), dtype=np.float32)
    _encode_rows(rows, out)
    return out[0] if single else out


RECORD_FEATURES = 4 + 4 + N_TILES + 4  # kind, relative seat, tile, arm of one event
RECORD_ENCODING_SIZE = RECORD_EVENTS * RECORD_FEATURES


@njit(cache=True)
def _encode_record(view, out) -> None:
    seat, players = view[slots.SEAT], view[slots.PLAYERS]
    for index in range(min(view[slots.RECORD], RECORD_EVENTS)):
        word = view[slots.RECORD + 1 + index // EVENTS_PER_WORD]
        bits = (word >> (EVENT_BITS * (index % EVENTS_PER_WORD))) & _EVENT_MASK
        kind, move = bits >> 9, bits & 127
        base = index * RECORD_FEATURES
        out[base + kind] = 1.0
        out[base + 4 + (((bits >> 7) & 3) - seat) % players] = 1.0
        if kind != DRAW and kind != PASS:
            out[base + 8 + (move >> 2)] = 1.0
            out[base + 8 + N_TILES + (move & 3)] = 1.0


def encode_record(view: np.ndarray) -> np.ndarray:
    """The round's public record in one view as ``RECORD_ENCODING_SIZE`` float32: per event
    slot (``RECORD_EVENTS``, in order, unused slots 0) its kind one-hot (chosen placement,
    forced placement, draw, pass), the relative seat one-hot (4), and for a placement the
    tile (28) and arm (4) one-hot. OpenSpiel's information-state tensor appends it to
    ``encode``: a round is dealt afresh, so the round's record and the view are all that a
    seat knows that matters (earlier rounds leave only the scores, which the view holds)."""
    out = np.zeros(RECORD_ENCODING_SIZE, dtype=np.float32)
    _encode_record(np.ascontiguousarray(view, dtype=np.int64), out)
    return out
