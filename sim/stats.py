"""Interval estimates used by every summary and report: no figure is shown without one."""

from __future__ import annotations

import math

Z95 = 1.959963984540054
Z99 = 2.5758293035489004


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion; sound near 0 and 1, unlike the normal one."""
    if trials <= 0:
        return (math.nan, math.nan)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values, z: float = Z95) -> tuple[float, float, float]:
    """Mean with its normal-approximation interval: ``(mean, low, high)``."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(values.mean())
    if n == 1:
        return (mean, math.nan, math.nan)
    half = z * float(values.std(ddof=1)) / math.sqrt(n)
    return (mean, mean - half, mean + half)
