"""Tile against tile: every pair of opening tiles compared on the same deals, family-adjusted.

Why: the ranked table says how each tile compares with the *average* tile; a player
choosing between two tiles in hand asks how they compare with *each other*. Both tiles
of a pair are led on the same deals (common random numbers, ``sim.openings.play``), so
the comparison is paired: per deal, tile A's result minus tile B's, averaged over the
deals, with the normal interval of that mean and the two-sided z-test p-value.

**The family and its correction.** 28 tiles make 378 pairs per figure; read without a
correction, some twenty of them would look "different" at 5% by chance alone. The 378
pairs of one figure (``differential``, or ``p_win``) are one family, adjusted with
**Holm's** method (``p_adjusted``), and the family is named in ``family``. Why Holm and
not Benjamini–Hochberg: (1) the pairwise differences share tiles and deals, so they are
dependent in both directions (A−B and A−C rise together, A−B and C−A move apart); BH's
false-discovery guarantee needs independence or positive dependence (PRDS), which this
family does not have, while Holm's family-wise guarantee holds under any dependence;
(2) the table is read as decisions about particular pairs ("lead 4-6 rather than 5-5"),
where one false claim is the error that matters, not a share of errors among many
screened findings; (3) it is the correction the rest of the openings output already uses
(tile against the average tile, Holm over the 28 tiles), so the two tables agree in
kind. The price is power: with 378 tests a pair needs a raw p below about 0.05/378 to
be called different first. Intervals are the plain 95% ones (``low``, ``high``);
``different`` says whether the Holm-adjusted test rejects at 5%.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sim.core.tiles import N_TILES, TILE_NAMES
from sim.stats.intervals import Z95, Moments
from sim.stats.multiple import adjust, family_text

__all__: list[str] = []  # nothing here is used outside its room

METRICS = {"differential": "differential", "p_win": "side_won"}
COLUMNS = ["metric", "tile_a", "tile_b", "tile_a_id", "tile_b_id", "deals", "estimate",
           "low", "high", "se", "p_value", "p_adjusted", "different", "family"]
ALPHA = 0.05


class CrossSums:
    """Per-deal sums that every paired figure between the 28 tiles needs, added chunk by chunk.

    Why: a paired interval between tiles a and b needs the spread of the per-deal difference
    ``v_a - v_b``, which is ``var(a) + var(b) - 2 cov(a, b)``; the 28 tile sums and the 28 x 28
    sums of per-deal products give every such variance (and the tile-vs-average ones) without
    keeping the deals. The values are integers (``scale`` turns them back into the figure:
    0.5 for half points), so the sums are exact and the figures do not depend on how the
    deals were chunked.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.n = 0
        self.total = np.zeros(N_TILES, dtype=np.int64)
        self.cross = np.zeros((N_TILES, N_TILES), dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        """Add deals: ``values`` is deals x 28 integers (one deal per row, tile id order)."""
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != N_TILES or not np.issubdtype(
            values.dtype, np.integer
        ):
            raise TypeError("CrossSums takes a deals x 28 integer array")
        values = values.astype(np.int64)
        self.n += values.shape[0]
        self.total += values.sum(axis=0)
        self.cross += values.T @ values

    def means(self) -> np.ndarray:
        """Each tile's mean (as ``values.mean(axis=0)`` gives for the deals at once)."""
        if self.n == 0:
            return np.full(N_TILES, np.nan)
        return (self.scale * self.total.astype(np.float64)) / self.n

    def combination(self, weights: np.ndarray) -> Moments:
        """The moments of ``weights @ v`` over the deals (integer weights, ``scale`` kept):
        its sum and its sum of squares follow from the tile sums and the products."""
        ints = [int(w) for w in weights]
        total = sum(w * int(t) for w, t in zip(ints, self.total))
        square = sum(ints[i] * ints[j] * int(self.cross[i, j])
                     for i in range(N_TILES) if ints[i]
                     for j in range(N_TILES) if ints[j])
        moments = Moments(scale=self.scale)
        moments.add_sums(self.n, total, square)
        return moments

    def difference(self, a: int, b: int) -> Moments:
        """The moments of the per-deal difference ``v_a - v_b``."""
        weights = np.zeros(N_TILES, dtype=np.int64)
        weights[a] += 1
        weights[b] -= 1
        return self.combination(weights)

    def versus_average(self, tile: int) -> Moments:
        """The moments of ``v_tile`` minus the deal's mean over the 28 tiles (scaled by 28 in
        integers, so the sums stay exact)."""
        weights = np.full(N_TILES, -1, dtype=np.int64)
        weights[tile] += N_TILES
        moments = self.combination(weights)
        moments.scale = self.scale / N_TILES
        return moments


def _cross_sums(games: pd.DataFrame, column: str) -> CrossSums:
    """The sums of the forced games' ``column`` per deal (deals with all 28 tiles only)."""
    forced = games.loc[games["forced"], ["deal_id", "opening_tile_id", column]].copy()
    forced[column] = forced[column].astype(np.float64)
    pivot = forced.pivot_table(index="deal_id", columns="opening_tile_id",
                               values=column, aggfunc="first", observed=True)
    grid = pivot.reindex(columns=range(N_TILES)).dropna().to_numpy(dtype=np.float64)
    scale = 0.5 if column == "differential" else 1.0
    integers = np.rint(grid / scale)
    if not np.array_equal(integers * scale, grid):
        raise ValueError(f"the games' {column} is not a multiple of {scale}")
    sums = CrossSums(scale)
    sums.add(integers.astype(np.int64))
    return sums


def tile_pairs(games: pd.DataFrame, method: str = "holm") -> pd.DataFrame:
    """Every pair of tiles, for each figure: paired difference, interval, raw and adjusted p.

    ``games`` is an openings run's games table (``games.parquet``, or its parts read
    together). Each row reads "better − worse" (``tile_a`` has the higher mean, so
    ``estimate`` ≥ 0). Columns: ``metric`` (``differential`` in points, ``p_win`` as a
    probability), ``tile_a``, ``tile_b`` and their ids, ``deals``, ``estimate``, ``low``,
    ``high``, ``se``, ``p_value``, ``p_adjusted`` (over the metric's 378 pairs),
    ``different`` (adjusted p < 5%), ``family``. The same as :func:`pairs_table` of the
    run's :class:`CrossSums`, which is how ``sniff openings`` gets them without the games.
    """
    return pairs_table({metric: _cross_sums(games, column)
                        for metric, column in METRICS.items()}, method)


def pairs_table(sums: dict[str, CrossSums], method: str = "holm") -> pd.DataFrame:
    """The table of :func:`tile_pairs` from each metric's per-deal sums (``METRICS`` keys)."""
    frames = []
    for metric in METRICS:
        cross = sums[metric]
        n = cross.n
        means = cross.means()
        rows = []
        for i in range(N_TILES):
            for j in range(i + 1, N_TILES):
                a, b = (i, j) if means[i] >= means[j] else (j, i)
                estimate = float(means[a] - means[b])
                se = cross.difference(a, b).std / math.sqrt(n) if n > 1 else math.nan
                if se > 0:
                    p = math.erfc(abs(estimate) / se / math.sqrt(2.0))
                else:
                    p = 1.0 if estimate == 0 else (0.0 if math.isfinite(se) else math.nan)
                rows.append({"metric": metric, "tile_a": TILE_NAMES[a], "tile_b": TILE_NAMES[b],
                             "tile_a_id": a, "tile_b_id": b, "deals": n, "estimate": estimate,
                             "low": estimate - Z95 * se, "high": estimate + Z95 * se,
                             "se": se, "p_value": p})
        frame = pd.DataFrame(rows)
        frame["p_adjusted"] = adjust(frame["p_value"].to_numpy(), method)
        frame["different"] = frame["p_adjusted"] < ALPHA
        frame["family"] = family_text(method, int(np.isfinite(frame["p_value"]).sum()),
                                      f"tile pairs ({metric})")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def neighbours(pairs: pd.DataFrame, ranked_tiles: list[str],
               metric: str = "differential") -> pd.DataFrame:
    """The pairs of tiles next to each other in the ranking (best first), from ``pairs``.

    Their adjusted p-values stay those of the whole family (all 378 pairs): picking the
    neighbours out afterwards does not make the family smaller.
    """
    rows = pairs[pairs["metric"] == metric]
    index = {frozenset((a, b)): k for k, (a, b) in enumerate(zip(rows["tile_a"],
                                                                 rows["tile_b"]))}
    picked = [index[frozenset((x, y))] for x, y in zip(ranked_tiles, ranked_tiles[1:])
              if frozenset((x, y)) in index]
    return rows.iloc[picked].reset_index(drop=True)
