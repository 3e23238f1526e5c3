"""What a ranking can claim: rank intervals, tie groups, and whether the ratings fit at all.

Why: a table of strict ranks 1..n reads as "1 beats 2 beats 3", although strategies whose
ratings differ by less than their noise cannot be ordered by the data, and Bradley–Terry
ratings only summarise the matrix when the matrix is (close to) transitive. This module
adds to the ratings of :mod:`sim.stats.ratings`:

- **Rank intervals** (``rank_low``, ``rank_high``): the 2.5% and 97.5% quantiles of each
  strategy's rank over a *parametric bootstrap* of the ratings: draws from the normal
  distribution the fit already reports (mean = the ratings, covariance = the inverse
  Fisher information), ranked in each draw. Chosen over a bootstrap over games because it
  needs no refit (thousands of draws in milliseconds, the same on every machine for a
  seed) and is the distribution behind the printed rating intervals, so the two cannot
  disagree. Its weakness is that it trusts the model; so when the goodness-of-fit test
  finds more spread than Bradley–Terry allows, the covariance is inflated by the
  dispersion factor ``φ = max(1, χ²/df)`` (quasi-likelihood), the standard correction,
  which widens rank intervals and tie groups instead of overstating the evidence.
- **Tie groups** (``group``): strategies sorted by rating; a new group starts between two
  neighbours exactly when their rating difference is significant at 5%, Holm-adjusted over
  the ``n − 1`` neighbouring gaps (z-test on the difference, its variance from the same
  covariance, inflated by φ). A group is therefore a run of neighbours that the data
  cannot tell apart one step at a time; two members at its ends may still differ (ties
  need not be transitive), which the gaps table shows.
- **Goodness of fit**: Pearson's χ² over every cell of every contest (a pairing's wins for
  each side against what the fitted ratings predict), with
  ``df = Σ (sides − 1) − (strategies − 1)``: one free proportion per pairing with two
  sides, minus the fitted ratings. The deviance G² is reported too. Per-contest
  standardized residuals ``(observed − expected) / √(n·p·(1 − p))`` show which pairings
  the ratings miss. When ``p < 0.05`` the fit carries a plain-words warning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sim.stats.intervals import two_sided_p
from sim.stats.multiple import adjust, family_text, interval_z
from sim.stats.ratings import ELO_SCALE, Contest, Ratings, fit_ratings

__all__ = ["csv_table", "fit_text", "rank", "rank_text", "Ranking", "ranking_lines"]

DRAWS = 4000
FIT_ALPHA = 0.05


@dataclass(frozen=True)
class Fit:
    """Goodness of fit of the ratings: Pearson χ², deviance, residuals per contest side."""

    statistic: float
    df: int
    p_value: float
    deviance: float
    cells: int
    small_cells: int  # cells with an expected count under 5 (χ² approximation rough)
    residuals: pd.DataFrame = field(repr=False)

    @property
    def dispersion(self) -> float:
        """``max(1, χ²/df)``: how much wider than the model allows the results spread."""
        if self.df <= 0 or not math.isfinite(self.statistic):
            return 1.0
        return max(1.0, self.statistic / self.df)

    @property
    def fails(self) -> bool:
        return math.isfinite(self.p_value) and self.p_value < FIT_ALPHA

    @property
    def warning(self) -> str | None:
        """Plain words for a failed fit (``None`` when the test does not reject)."""
        if not self.fails:
            return None
        return (f"the ratings do not describe these results well (χ² = {self.statistic:.1f}, "
                f"df = {self.df}, p = {_p_text(self.p_value)}): read the matrix, not the "
                "ratings")

    def to_dict(self) -> dict:
        return {"test": "Pearson chi-square of the contests' wins against the fitted ratings",
                "statistic": self.statistic, "df": self.df, "p_value": self.p_value,
                "deviance": self.deviance, "dispersion": self.dispersion,
                "cells": self.cells, "small_cells": self.small_cells,
                "warning": self.warning}


@dataclass
class Ranking:
    """Ratings table with rank intervals and groups, neighbour gaps, and the fit.

    Attributes:
        table: ratings' columns + rank_low, rank_high, group.
        gaps: neighbours: higher, lower, difference, low, high, se, p_value, p_holm.
        fit: the goodness of fit of the ratings.
        draws: bootstrap draws of the ratings behind the rank ranges.
        seed: the seed of the draws.
        notes: notes on how the ranking was obtained.
    """

    table: pd.DataFrame  # ratings' columns + rank_low, rank_high, group
    gaps: pd.DataFrame  # neighbours: higher, lower, difference, low, high, se, p_value, p_holm
    fit: Fit
    draws: int
    seed: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"method": "parametric bootstrap of the ratings (covariance x dispersion); "
                          "groups: neighbours not separated at 5%, Holm over the gaps",
                "draws": self.draws, "seed": self.seed, "fit": self.fit.to_dict(),
                "gaps": self.gaps.to_dict(orient="records"), "notes": list(self.notes)}


def _p_text(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def rank_text(low: int, high: int) -> str:
    """``"3"`` or ``"2-5"``: how a rank interval is printed."""
    return f"{low}" if low == high else f"{low}-{high}"


def _theta(ratings: Ratings) -> dict[str, float]:
    table = ratings.table
    return {s: (r - 1500.0) / ELO_SCALE for s, r in zip(table["strategy"], table["rating"])}


def goodness_of_fit(contests: Sequence[Contest], ratings: Ratings) -> Fit:
    """Pearson χ² of every contest's observed wins against the ratings' expected wins.

    Contests between one strategy and itself (mirror matches) carry no information on the
    ratings and are skipped, as in the fit. Observed counts are the real wins (not the
    half-wins some fits add). With no degrees of freedom left (two strategies, one
    pairing) the test cannot be done: statistic 0, df 0, p NaN.
    """
    from scipy.stats import chi2  # scipy.stats takes seconds to import: only when needed

    theta = _theta(ratings)
    rows = []
    statistic = deviance = 0.0
    cells = small = free = 0
    for number, contest in enumerate(contests):
        if len(set(contest.sides)) < 2 or contest.games == 0:
            continue
        eta = np.array([theta[s] for s in contest.sides])
        prob = np.exp(eta - eta.max())
        prob /= prob.sum()
        observed = np.asarray(contest.wins, dtype=np.float64)
        n = observed.sum()
        expected = n * prob
        statistic += float(((observed - expected) ** 2 / expected).sum())
        positive = observed > 0
        deviance += float(2 * (observed[positive]
                               * np.log(observed[positive] / expected[positive])).sum())
        cells += observed.size
        small += int((expected < 5).sum())
        free += observed.size - 1
        for k, side in enumerate(contest.sides):
            rows.append({
                "contest": number, "sides": " vs ".join(contest.sides), "side": side,
                "games": int(n), "wins": int(observed[k]), "expected": float(expected[k]),
                "residual": float((observed[k] - expected[k])
                                  / math.sqrt(n * prob[k] * (1 - prob[k]))),
            })
    strategies = len(theta)
    df = free - (strategies - 1)
    p_value = float(chi2.sf(statistic, df)) if df > 0 else math.nan
    residuals = pd.DataFrame(rows, columns=["contest", "sides", "side", "games", "wins",
                                            "expected", "residual"])
    return Fit(statistic if df > 0 else 0.0, max(df, 0), p_value, deviance, cells, small,
               residuals)


def rank_intervals(ratings: Ratings, covariance: np.ndarray | None = None,
                   draws: int = DRAWS, seed: int = 0,
                   confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """``(rank_low, rank_high)`` per row of ``ratings.table`` from a parametric bootstrap.

    Ranks are 1 = best; ties within a draw (probability 0) are broken by table order.
    """
    table = ratings.table
    mean = table["rating"].to_numpy(dtype=np.float64)
    cov = ratings.covariance if covariance is None else covariance
    if cov is None:
        cov = np.diag(table["se"].to_numpy(dtype=np.float64) ** 2)
    rng = np.random.default_rng(seed)
    sample = rng.multivariate_normal(mean, cov, size=draws, method="eigh")
    order = np.argsort(-sample, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(draws)[:, None]
    ranks[rows, order] = np.arange(1, mean.size + 1)
    tail = (1 - confidence) / 2
    low = np.quantile(ranks, tail, axis=0, method="lower").astype(np.int64)
    high = np.quantile(ranks, 1 - tail, axis=0, method="higher").astype(np.int64)
    # a rank interval always contains the point rank (the fitted order)
    point = np.arange(1, mean.size + 1)
    return np.minimum(low, point), np.maximum(high, point)


def neighbour_gaps(ratings: Ratings, covariance: np.ndarray | None = None,
                   method: str = "holm", confidence: float = 0.95) -> pd.DataFrame:
    """Rating difference of each strategy and the next one down, with adjusted tests.

    Columns: ``higher``, ``lower``, ``difference`` (Elo points), ``se``, ``low``, ``high``
    (intervals at the adjusted level, consistent with ``separated``), ``p_value`` (z-test
    of no difference), ``p_holm`` (adjusted over the n − 1 gaps), ``separated``.
    """
    table = ratings.table
    cov = ratings.covariance if covariance is None else covariance
    rating = table["rating"].to_numpy(dtype=np.float64)
    names = table["strategy"].tolist()
    rows = []
    for k in range(len(names) - 1):
        if cov is not None:
            variance = cov[k, k] + cov[k + 1, k + 1] - 2 * cov[k, k + 1]
        else:
            variance = table["se"].iloc[k] ** 2 + table["se"].iloc[k + 1] ** 2
        se = math.sqrt(max(variance, 0.0))
        difference = rating[k] - rating[k + 1]
        p_value = two_sided_p(difference / se) if se > 0 else math.nan
        rows.append({"higher": names[k], "lower": names[k + 1], "difference": difference,
                     "se": se, "p_value": p_value})
    gaps = pd.DataFrame(rows, columns=["higher", "lower", "difference", "se", "p_value"])
    p = gaps["p_value"].to_numpy(dtype=np.float64)
    gaps["p_holm"] = adjust(p, method)
    z = interval_z(p, method, confidence)
    gaps["low"] = gaps["difference"] - z * gaps["se"]
    gaps["high"] = gaps["difference"] + z * gaps["se"]
    gaps["separated"] = np.where(np.isfinite(gaps["p_holm"]),
                                 gaps["p_holm"] <= 1 - confidence, False)
    gaps["family"] = family_text(method, len(gaps), "gaps between neighbours")
    return gaps[["higher", "lower", "difference", "se", "low", "high", "p_value", "p_holm",
                 "separated", "family"]]


def tie_groups(gaps: pd.DataFrame, n: int) -> np.ndarray:
    """Group number (1 = top) of each of the ``n`` ranked strategies from the gaps."""
    groups = np.ones(n, dtype=np.int64)
    for k, separated in enumerate(gaps["separated"].tolist()):
        groups[k + 1] = groups[k] + (1 if separated else 0)
    return groups


def rank(contests: Sequence[Contest], ratings: Ratings | None = None, *, draws: int = DRAWS,
         seed: int = 0, confidence: float = 0.95, method: str = "holm") -> Ranking:
    """Ranking with rank intervals, tie groups, neighbour gaps and the goodness of fit.

    ``ratings`` defaults to :func:`sim.stats.ratings.fit_ratings` of ``contests``; the same
    ``seed`` gives the same rank intervals. The returned table has the ratings' columns
    (rank, strategy, rating, low, high, se, games, wins) plus ``rank_low``, ``rank_high``
    and ``group`` (the columns of ``ranking.csv``).
    """
    ratings = ratings if ratings is not None else fit_ratings(contests)
    fit = goodness_of_fit(contests, ratings)
    notes = []
    cov = ratings.covariance
    if cov is not None and fit.dispersion > 1:
        cov = cov * fit.dispersion
        notes.append(f"the results spread {fit.dispersion:.2f} times more than the ratings "
                     "allow (χ²/df), so rank intervals and groups use a covariance widened "
                     "by that factor")
    low, high = rank_intervals(ratings, cov, draws=draws, seed=seed, confidence=confidence)
    gaps = neighbour_gaps(ratings, cov, method=method, confidence=confidence)
    table = ratings.table.copy()
    table["rank_low"] = low
    table["rank_high"] = high
    table["group"] = tie_groups(gaps, len(table))
    if fit.warning:
        notes.append(fit.warning)
    return Ranking(table, gaps, fit, draws, seed, notes)


def fit_text(fit: Fit) -> str:
    """One line on the goodness of fit: the warning, or that the ratings describe the data."""
    if fit.warning:
        return f"warning: {fit.warning}"
    if fit.df <= 0 or not math.isfinite(fit.p_value):
        return ("fit: not testable (no pairing left over once the ratings are fitted); "
                "read the matrix")
    return (f"fit: χ² = {fit.statistic:.1f}, df = {fit.df}, p = {_p_text(fit.p_value)}: the "
            "ratings describe the pairwise results")


def ranking_lines(ranking: Ranking) -> list[str]:
    """The printed ranking: rank range, tie group, rating with its interval, counts, fit.

    The rank is shown as its 95% range (``1-3``) rather than a strict place, and strategies
    the data cannot separate share a group number; the fit line (or the warning) follows.
    """
    table = ranking.table
    width = max(len(str(s)) for s in table["strategy"])
    ranks = [rank_text(int(lo), int(hi)) for lo, hi in zip(table["rank_low"],
                                                             table["rank_high"])]
    rank_width = max(len(r) for r in ranks)
    gaps = len(ranking.gaps)
    out = ["ranking: Bradley-Terry ratings fitted to all games (Elo scale, average 1500), "
           "95% CI;",
           f"  rank: its 95% range over {ranking.draws:,} draws of the ratings; group: "
           f"neighbours the data cannot separate (5%, Holm over the {gaps} gap"
           f"{'' if gaps == 1 else 's'})"]
    for text, (_, row) in zip(ranks, table.iterrows()):
        out.append(f"  {text:>{rank_width}}  group {int(row['group'])}  "
                   f"{row['strategy']:<{width}}  {row['rating']:6.0f} "
                   f"({row['low']:.0f}-{row['high']:.0f})   games {int(row['games']):,}, "
                   f"wins {int(row['wins']):,}")
    out.append("  " + fit_text(ranking.fit))
    out += [f"  note: {note}" for note in ranking.notes if note != ranking.fit.warning]
    return out


CSV_COLUMNS = ["rank", "strategy", "rating", "low", "high", "se", "games", "wins",
               "rank_low", "rank_high", "group"]


def csv_table(ranking: Ranking) -> pd.DataFrame:
    """``ranking.csv``: today's columns, then ``rank_low``, ``rank_high``, ``group``."""
    extra = [c for c in ranking.table.columns if c not in CSV_COLUMNS]
    return ranking.table[[c for c in CSV_COLUMNS if c in ranking.table.columns] + extra]
