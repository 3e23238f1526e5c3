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
from sim.stats.intervals import Z95
from sim.stats.multiple import adjust, family_text

METRICS = {"differential": "differential", "p_win": "side_won"}
COLUMNS = ["metric", "tile_a", "tile_b", "tile_a_id", "tile_b_id", "deals", "estimate",
           "low", "high", "se", "p_value", "p_adjusted", "different", "family"]
ALPHA = 0.05


def _per_deal(games: pd.DataFrame, column: str) -> np.ndarray:
    """Deals × 28 tiles: the forced games' value of ``column`` (deals with all 28 only)."""
    forced = games.loc[games["forced"], ["deal_id", "opening_tile_id", column]].copy()
    forced[column] = forced[column].astype(np.float64)
    grid = forced.pivot_table(index="deal_id", columns="opening_tile_id",
                              values=column, aggfunc="first", observed=True)
    grid = grid.reindex(columns=range(N_TILES)).dropna()
    return grid.to_numpy(dtype=np.float64)


def tile_pairs(games: pd.DataFrame, method: str = "holm") -> pd.DataFrame:
    """Every pair of tiles, for each figure: paired difference, interval, raw and adjusted p.

    ``games`` is an openings run's games table (``games.parquet``). Each row reads "better
    − worse" (``tile_a`` has the higher mean, so ``estimate`` ≥ 0). Columns: ``metric``
    (``differential`` in points, ``p_win`` as a probability), ``tile_a``, ``tile_b`` and
    their ids, ``deals``, ``estimate``, ``low``, ``high``, ``se``, ``p_value``,
    ``p_adjusted`` (over the metric's 378 pairs), ``different`` (adjusted p < 5%),
    ``family``.
    """
    frames = []
    for metric, column in METRICS.items():
        values = _per_deal(games, column)
        n = values.shape[0]
        means = values.mean(axis=0) if n else np.full(N_TILES, np.nan)
        cov = np.cov(values, rowvar=False, ddof=1) if n > 1 else np.full((N_TILES, N_TILES),
                                                                           np.nan)
        rows = []
        for i in range(N_TILES):
            for j in range(i + 1, N_TILES):
                a, b = (i, j) if means[i] >= means[j] else (j, i)
                estimate = float(means[a] - means[b])
                variance = cov[a, a] + cov[b, b] - 2 * cov[a, b]
                se = math.sqrt(max(variance, 0.0) / n) if n > 1 else math.nan
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
