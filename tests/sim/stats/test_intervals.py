"""Intervals of the run summaries (``sim.stats.intervals``): streaming moments give the
interval of the whole sample whatever the chunking, and Wilson's interval covers a fair
match's win rate as often as it says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.stats.intervals import (
    Z95,
    Z99,
    Moments,
    mean_interval,
    normal_cdf,
    normal_quantile,
    paired_difference,
    proportion_difference,
    two_sided_p,
    wilson_interval,
    win_rate_difference,
)


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


def test_normal_quantiles():
    assert normal_quantile(0.975) == pytest.approx(Z95, abs=1e-12)
    assert normal_quantile(0.995) == pytest.approx(Z99, abs=1e-12)
    for p in (1e-9, 0.01, 0.3, 0.5, 0.8, 0.999999):
        assert normal_cdf(normal_quantile(p)) == pytest.approx(p, rel=1e-9)
    assert two_sided_p(Z95) == pytest.approx(0.05)
    assert two_sided_p(0.0) == 1.0


def test_win_rate_difference_is_the_mean_of_per_game_differences():
    rng = np.random.default_rng(3)
    winner = rng.choice([0, 1, -1], size=2000, p=[0.55, 0.44, 0.01])
    x = (winner == 0).astype(float) - (winner == 1)
    direct = paired_difference(x)
    counted = win_rate_difference(int((winner == 0).sum()), int((winner == 1).sum()), 2000)
    for field in ("estimate", "low", "high", "se", "p_value"):
        assert getattr(counted, field) == pytest.approx(getattr(direct, field))
    assert counted.se == pytest.approx(x.std(ddof=1) / math.sqrt(2000))
    a, b = int((winner == 0).sum()), int((winner == 1).sum())
    assert counted.p_value == pytest.approx(two_sided_p((a - b) / math.sqrt(a + b)))  # McNemar
    one_sided = win_rate_difference(30, 0, 30)  # no spread at all: Wilson, not a point
    assert one_sided.low == pytest.approx(2 * wilson_interval(30, 30)[0] - 1)
    assert one_sided.low < 1 == one_sided.estimate == pytest.approx(one_sided.high)


def test_independent_difference_is_newcombes_interval():
    # Newcombe (1998), example (e): 56/70 vs 48/80 gives 0.2000, 95% CI 0.0524 to 0.3339.
    result = proportion_difference(56, 70, 48, 80)
    assert result.estimate == pytest.approx(0.2)
    assert result.low == pytest.approx(0.0524, abs=5e-4)
    assert result.high == pytest.approx(0.3339, abs=5e-4)
    pooled = 104 / 150
    z = 0.2 / math.sqrt(pooled * (1 - pooled) * (1 / 70 + 1 / 80))
    assert result.p_value == pytest.approx(two_sided_p(z))
