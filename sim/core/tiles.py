"""Tile encoding shared by the engine, the strategies and the tools.

A tile is an id 0..27 in the order (0,0), (0,1), ..., (0,6), (1,1), ..., (6,6), so that
``TILE_LOW[id] <= TILE_HIGH[id]``. A set of tiles (a hand, the boneyard's contents, the
tiles on the table) is a 28-bit mask with bit ``id`` set for each tile in it.

``PIP_MASK[v]`` is the mask of the seven tiles that show pip value ``v``, so the tiles of a
hand that fit an open end of value ``v`` are ``hand & PIP_MASK[v]``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ALL_TILES", "DOUBLES_MASK", "mask_tiles", "N_PIPS", "N_TILES", "parse_tile", "PIP_MASK",
    "TILE_HIGH", "tile_id", "TILE_LOW", "tile_name", "TILE_NAMES", "TILE_PIPS",
]

N_TILES = 28
N_PIPS = 7
ALL_TILES = (1 << N_TILES) - 1

TILE_LOW = np.zeros(N_TILES, dtype=np.int64)
TILE_HIGH = np.zeros(N_TILES, dtype=np.int64)
TILE_PIPS = np.zeros(N_TILES, dtype=np.int64)
PIP_MASK = np.zeros(N_PIPS, dtype=np.int64)
DOUBLES_MASK = 0

_tile_id = 0
for _low in range(N_PIPS):
    for _high in range(_low, N_PIPS):
        TILE_LOW[_tile_id] = _low
        TILE_HIGH[_tile_id] = _high
        TILE_PIPS[_tile_id] = _low + _high
        PIP_MASK[_low] |= 1 << _tile_id
        PIP_MASK[_high] |= 1 << _tile_id
        if _low == _high:
            DOUBLES_MASK |= 1 << _tile_id
        _tile_id += 1
del _tile_id, _low, _high

TILE_ID = {(int(TILE_LOW[t]), int(TILE_HIGH[t])): t for t in range(N_TILES)}


def tile_id(a: int, b: int) -> int:
    """Id of the tile with halves ``a`` and ``b`` (either order)."""
    return TILE_ID[(min(a, b), max(a, b))]


def tile_name(tile: int, first: int | None = None) -> str:
    """``"a-b"`` with ``first`` written first when given (the half that matched an end)."""
    low, high = int(TILE_LOW[tile]), int(TILE_HIGH[tile])
    if first is not None and first == high:
        low, high = high, low
    return f"{low}-{high}"


TILE_NAMES = tuple(tile_name(tile) for tile in range(N_TILES))  # "a-b" by tile id


def parse_tile(text: str) -> int:
    """Tile id from ``"a-b"``; raises ValueError on anything else."""
    parts = text.strip().split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a tile: {text!r} (expected 'a-b' with pips 0..6)")
    a, b = int(parts[0]), int(parts[1])
    if not (0 <= a <= 6 and 0 <= b <= 6):
        raise ValueError(f"not a tile: {text!r} (pips must be 0..6)")
    return tile_id(a, b)


def mask_tiles(mask: int) -> list[int]:
    """Tile ids in a mask, in id order."""
    return [t for t in range(N_TILES) if (mask >> t) & 1]


def tiles_mask(tiles: list[int]) -> int:
    """The 28-bit mask of a list of tile ids."""
    mask = 0
    for t in tiles:
        mask |= 1 << t
    return mask
