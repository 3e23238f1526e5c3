"""Intervals of the run summaries (``sim.stats.intervals``): streaming moments give the
interval of the whole sample whatever the chunking, and Wilson's interval covers a fair
match's win rate as often as it says."""

from __future__ import annotations

import numpy as np
import pytest

from sim.stats.intervals import Moments, mean_interval, wilson_interval


def test_streaming_moments_equal_mean_interval_for_any_chunking():
    values = np.random.default_rng(3).integers(-40, 90, 10_001)
    results = []
    for pieces in (1, 7, 1000):
        moments = Moments()
        for piece in np.array_split(values, pieces):
            moments.add(piece)
        results.append(moments.interval())
    assert results[0] == results[1] == results[2]
    assert results[0] == pytest.approx(mean_interval(values))
    halves = Moments(scale=0.5)
    halves.add(values)
    assert halves.interval() == pytest.approx(mean_interval(values / 2))


def test_wilson_coverage_on_symmetric_matchups():
    rng = np.random.default_rng(2024)
    wins = rng.binomial(1000, 0.5, size=200)
    covered = [lo <= 0.5 <= hi for lo, hi in (wilson_interval(w, 1000) for w in wins)]
    assert 0.90 <= np.mean(covered) <= 0.99
