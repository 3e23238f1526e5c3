"""Exact counts of integer values, added chunk by chunk: the streaming form of an array.

Why: a report's figures are means, standard errors, quantiles, shares and value counts of
per-game and per-round quantities that are all integers (points, penalties, margins,
rounds) or integers over a fixed denominator (a side's win minus the average of the
others'). Their counts fit in a few hundred numbers whatever the run's size, so a
:class:`Tally` fed part by part gives the same figures as the whole array would, in
bounded memory, and (the counts being exact) whatever order or thread count the parts
were read in. :func:`tally_difference` is :func:`sim.stats.intervals.paired_difference`
of the values a tally holds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sim.stats.intervals import Z95, Difference, _difference

__all__ = ["merged", "Tally", "tally_difference"]


class Tally:
    """How often each integer occurs; the values stand for ``key * scale``."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.low = 0
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, values) -> None:
        """Count integer ``values`` (any shape)."""
        values = np.asarray(values).ravel()
        if values.size == 0:
            return
        if not np.issubdtype(values.dtype, np.integer):
            raise TypeError("a Tally counts integers")
        values = values.astype(np.int64, copy=False)
        low, high = int(values.min()), int(values.max())
        self._cover(low, high)
        self.counts += np.bincount(values - self.low, minlength=self.counts.size)

    def add_counts(self, low: int, counts: np.ndarray) -> None:
        """Add counts already made: ``counts[i]`` occurrences of the integer ``low + i``."""
        counts = np.asarray(counts, dtype=np.int64)
        where = np.flatnonzero(counts)
        if not where.size:
            return
        counts = counts[where[0]:where[-1] + 1]
        low = int(low) + int(where[0])
        self._cover(low, low + counts.size - 1)
        start = low - self.low
        self.counts[start:start + counts.size] += counts

    def merge(self, other: Tally) -> None:
        """Add another tally's counts (the same scale)."""
        if other.counts.size == 0:
            return
        if other.scale != self.scale:
            raise ValueError("tallies of different scales cannot be merged")
        self._cover(other.low, other.low + other.counts.size - 1)
        start = other.low - self.low
        self.counts[start:start + other.counts.size] += other.counts

    def _cover(self, low: int, high: int) -> None:
        if self.counts.size == 0:
            self.low, self.counts = low, np.zeros(high - low + 1, dtype=np.int64)
            return
        new_low = min(low, self.low)
        new_high = max(high, self.low + self.counts.size - 1)
        if new_low == self.low and new_high == self.low + self.counts.size - 1:
            return
        counts = np.zeros(new_high - new_low + 1, dtype=np.int64)
        counts[self.low - new_low:self.low - new_low + self.counts.size] = self.counts
        self.low, self.counts = new_low, counts

    def negated(self) -> Tally:
        """The tally of the values' negatives."""
        out = Tally(self.scale)
        if self.counts.size:
            out.low = -(self.low + self.counts.size - 1)
            out.counts = self.counts[::-1].copy()
        return out

    # --- what the values say

    def keys_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The integers that occur, ascending, and how often."""
        where = np.flatnonzero(self.counts)
        return where + self.low, self.counts[where]

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def _sum(self, power: int) -> int:
        keys, counts = self.keys_counts()
        return sum(int(k) ** power * int(c) for k, c in zip(keys, counts))

    @property
    def mean(self) -> float:
        n = self.n
        return self.scale * self._sum(1) / n if n else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (``ddof=1``), from exact integer sums."""
        n = self.n
        if n < 2:
            return math.nan
        m2 = n * self._sum(2) - self._sum(1) ** 2  # n * sum of squared deviations, exact
        return abs(self.scale) * math.sqrt(m2 / (n * (n - 1)))

    def mean_se(self) -> tuple[float, float]:
        """Mean and its standard error, as ``sim.report.tables.mean_se`` of the values."""
        n = self.n
        if n == 0:
            return math.nan, math.nan
        return self.mean, (self.std / math.sqrt(n) if n > 1 else math.nan)

    def share_above(self, threshold: float = 0.0) -> float:
        keys, counts = self.keys_counts()
        n = int(counts.sum())
        return float(counts[keys * self.scale > threshold].sum() / n) if n else math.nan

    def quantile(self, q: float) -> float:
        """``numpy.quantile(values, q)`` (its default, linear method) from the counts."""
        keys, counts = self.keys_counts()
        n = int(counts.sum())
        if n == 0:
            return math.nan
        virtual = n * q + (1 + q * (1 - 1 - 1)) - 1  # numpy's expression, alpha = beta = 1
        below = math.floor(virtual)
        gamma = virtual - below
        ends = np.cumsum(counts)

        def value(rank: int) -> float:
            rank = min(max(rank, 0), n - 1)
            return float(keys[int(np.searchsorted(ends, rank, side="right"))] * self.scale)

        a, b = value(below), value(below + 1)
        difference = b - a
        return b - difference * (1 - gamma) if gamma >= 0.5 else a + difference * gamma

    def value_counts(self, key: str, count: str = "count") -> pd.DataFrame:
        """Columns ``key``, ``count``, ``share``: as ``sim.report.tables.value_counts``."""
        keys, counts = self.keys_counts()
        total = counts.sum()
        values = keys if self.scale == 1 else keys * self.scale
        return pd.DataFrame({key: values, count: counts,
                             "share": counts / total if total else []})


def merged(tallies) -> Tally:
    """One tally of several (the same scale)."""
    tallies = list(tallies)
    out = Tally(tallies[0].scale if tallies else 1.0)
    for tally in tallies:
        out.merge(tally)
    return out


def tally_difference(tally: Tally, z: float = Z95, method: str = "paired") -> Difference:
    """``paired_difference`` of the values in ``tally`` (their mean against 0)."""
    n = tally.n
    if n == 0:
        return Difference(math.nan, math.nan, math.nan, math.nan, math.nan, 0, method)
    mean, se = tally.mean_se()
    mean_square = tally.scale * tally.scale * tally._sum(2) / n
    return _difference(mean, se, n, method, z, math.sqrt(mean_square / n))
