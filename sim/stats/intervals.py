"""Interval estimates used by every summary and report: no figure is shown without one."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

__all__ = [
    "mean_interval", "Moments", "paired_difference", "proportion_difference",
    "wilson_half_width", "wilson_interval", "win_rate_difference", "Z95", "Z99",
]

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


class Moments:
    """Count, mean and variance of a stream of integers, added chunk by chunk.

    The streaming form of :func:`mean_interval` (same interval, same ``ddof=1``) for runs
    too big to keep every value: ``add`` each chunk's values, then ask ``interval``. The
    sums are exact integers, so the result does not depend on how the stream was chunked.
    ``scale`` multiplies every value (e.g. ``1 / k`` to feed sums of ``k`` values as means).
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.n = 0
        self.total = 0
        self.total_sq = 0

    def add(self, values) -> None:
        import numpy as np

        values = np.asarray(values).ravel()
        if values.size == 0:
            return
        if not np.issubdtype(values.dtype, np.integer):
            raise TypeError("Moments takes integers (exact sums); use mean_interval for floats")
        values = values.astype(np.int64)
        self.n += int(values.size)
        self.total += int(values.sum())
        self.total_sq += int((values * values).sum())

    def add_sums(self, n: int, total: int, total_sq: int) -> None:
        """Add values already summed: their count, sum and sum of squares."""
        self.n += n
        self.total += total
        self.total_sq += total_sq

    @property
    def mean(self) -> float:
        return self.scale * self.total / self.n if self.n else math.nan

    @property
    def std(self) -> float:
        if self.n < 2:
            return math.nan
        m2 = self.n * self.total_sq - self.total * self.total  # n * sum of squared deviations
        return abs(self.scale) * math.sqrt(m2 / (self.n * (self.n - 1)))

    def half_width(self, z: float = Z95) -> float:
        return z * self.std / math.sqrt(self.n) if self.n > 1 else math.nan

    def interval(self, z: float = Z95) -> tuple[float, float, float]:
        """``(mean, low, high)`` as :func:`mean_interval` gives for all values at once."""
        if self.n == 0:
            return (math.nan, math.nan, math.nan)
        half = self.half_width(z)
        return (self.mean, self.mean - half, self.mean + half)


# --- normal distribution (math only: scipy is not a dependency)


def normal_cdf(x: float) -> float:
    """Standard normal distribution function, from ``math.erfc`` (exact to rounding)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Inverse of :func:`normal_cdf`: Acklam's rational approximation, polished by Newton.

    The approximation is good to about 1e-9; two Newton steps on ``normal_cdf`` take it to
    the precision of ``math.erfc``, so ``normal_quantile(0.975)`` is ``Z95`` to 1e-15.
    """
    if not 0.0 < p < 1.0:
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        raise ValueError(f"probability must be in [0, 1], got {p}")
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00)
    low = 0.02425
    if p < low:
        q = math.sqrt(-2 * math.log(p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    elif p <= 1 - low:
        q = p - 0.5
        r = q * q
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
            ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    else:
        q = math.sqrt(-2 * math.log(1 - p))
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    for _ in range(2):
        density = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        if density > 0:
            x -= (normal_cdf(x) - p) / density
    return x


def two_sided_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic ``z``."""
    if math.isnan(z):
        return math.nan
    return math.erfc(abs(z) / math.sqrt(2.0))


def wilson_half_width(successes: float, trials: float, z: float = Z95) -> float:
    """Half the width of the Wilson interval: the precision a ``--precision`` run aims at."""
    low, high = wilson_interval(successes, trials, z)
    return (high - low) / 2


# --- differences between win rates


@dataclass(frozen=True)
class Difference:
    """A difference of win rates with its interval, standard error and two-sided p-value.

    ``p_value`` tests "no difference" (the estimate is 0); ``n`` is the number of units the
    standard error was computed from (games, deals, or the two sample sizes added).
    """

    estimate: float
    low: float
    high: float
    se: float
    p_value: float
    n: int
    method: str

    def to_dict(self) -> dict:
        return asdict(self)


def _difference(estimate: float, se: float, n: int, method: str, z: float,
                null_se: float) -> Difference:
    """Normal interval ``estimate +- z se`` (kept within -1..1); p-value from ``null_se``."""
    if n < 2 or not math.isfinite(se):
        return Difference(estimate, math.nan, math.nan, math.nan, math.nan, n, method)
    if null_se > 0:
        p_value = two_sided_p(estimate / null_se)
    else:
        p_value = 1.0
    low = max(-1.0, estimate - z * se)
    high = min(1.0, estimate + z * se)
    return Difference(estimate, low, high, se, p_value, n, method)


def paired_difference(values, z: float = Z95, method: str = "paired") -> Difference:
    """Mean of per-unit differences with a normal interval and a test against 0.

    The units are independent (games of one run, or the deals of a duplicate run), the
    values inside them need not be: the win-rate difference of two sides of the same games
    is the mean of ``[a won] - [b won]`` per game, and for duplicate deals the mean of the
    per-deal averages, whose spread shows how much the shared cards cancel. The interval's
    standard error uses ``ddof=1``, as :func:`mean_interval` and ``Moments`` do. The p-value
    is the score test of a zero mean, whose standard error is taken under that hypothesis,
    ``sqrt(mean(x**2) / n)``: for per-game values it is McNemar's (sign) test
    ``(a - b) / sqrt(a + b)``, which stays sound when one side wins nearly everything,
    where the plain ``mean / se`` would overstate the evidence.
    """
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    if n == 0:
        return Difference(math.nan, math.nan, math.nan, math.nan, math.nan, 0, method)
    estimate = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    null_se = math.sqrt(float((values * values).mean()) / n)
    return _difference(estimate, se, n, method, z, null_se)


def win_rate_difference(wins_a: int, wins_b: int, games: int, z: float = Z95) -> Difference:
    """Difference of two sides' win rates over the same ``games`` (one run).

    The two rates come from the same games, so they are not independent (with two sides
    they add up to the decided share): everything follows from the per-game value
    ``[a won] - [b won]``, which needs only the two win counts; the same numbers as
    ``paired_difference`` of those values. When one side won every game either won, the
    normal interval collapses to a point; the interval is then the Wilson interval of
    ``a``'s share of those games, scaled by their share of all games.
    """
    if games < 2:
        return Difference(math.nan, math.nan, math.nan, math.nan, math.nan, games, "games")
    pa, pb = wins_a / games, wins_b / games
    estimate = pa - pb
    variance = max(0.0, (pa + pb - estimate * estimate) * games / (games - 1))
    null_se = math.sqrt(wins_a + wins_b) / games
    result = _difference(estimate, math.sqrt(variance / games), games, "games", z, null_se)
    if variance == 0 and wins_a + wins_b > 0:
        decided = wins_a + wins_b
        low, high = wilson_interval(wins_a, decided, z)
        scale = decided / games
        result = replace(result, low=scale * (2 * low - 1), high=scale * (2 * high - 1))
    return result


def proportion_difference(x1: int, n1: int, x2: int, n2: int, z: float = Z95) -> Difference:
    """Difference of two independent proportions ``x1/n1 - x2/n2`` (e.g. from two runs).

    Interval: Newcombe's hybrid score interval (from the two Wilson intervals), sound near
    0 and 1 and for unequal sizes; p-value: the pooled two-proportion z-test.
    """
    if n1 <= 0 or n2 <= 0:
        return Difference(math.nan, math.nan, math.nan, math.nan, math.nan, 0, "independent")
    p1, p2 = x1 / n1, x2 / n2
    estimate = p1 - p2
    l1, u1 = wilson_interval(x1, n1, z)
    l2, u2 = wilson_interval(x2, n2, z)
    low = estimate - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = estimate + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    pooled = (x1 + x2) / (n1 + n2)
    se0 = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    if se0 > 0:
        p_value = two_sided_p(estimate / se0)
    else:
        p_value = 1.0 if estimate == 0 else 0.0
    return Difference(estimate, max(-1.0, low), min(1.0, high), se, p_value, n1 + n2,
                      "independent")
