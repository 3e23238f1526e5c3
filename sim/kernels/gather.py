"""Copy the kernel's per-game round slots into one flat table of rounds, in game order.

The kernel cannot write rounds contiguously (a game's offset depends on every earlier
game's length, and games run in parallel), so it writes each game's rounds into that game's
own slots; this pass packs them. Self-contained, so its numba cache cannot go stale
through a callee in another file.
"""

from __future__ import annotations

from pathlib import Path

from numba import njit, prange

from sim.cache import use_writable_numba_cache

__all__: list[str] = []  # nothing here is used outside sim.kernels

use_writable_numba_cache(Path(__file__).parent)  # this module's cache is beside it


@njit(parallel=True, cache=True, nogil=True)
def gather_rounds(slotted, counts, offsets, columns):
    """``columns[f, offsets[g] + r] = slotted[g, r, f]`` for every round ``r < counts[g]``.

    Field-major output: the Parquet columns are then contiguous rows of ``columns``.
    """
    fields = slotted.shape[2]
    for game in prange(slotted.shape[0]):
        start = offsets[game]
        for number in range(counts[game]):
            for field in range(fields):
                columns[field, start + number] = slotted[game, number, field]
