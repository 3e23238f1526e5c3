"""How many games a question needs, and the smallest difference a finished run can see.

Why: "is greedy better than heavy?" has no answer from 2,000 games if the true difference is
one point of win rate. Planning turns the question around: for a difference Δ worth
detecting, how many games (or duplicate deals) give a 95% two-sided test an 80% chance of
finding it; and for a run already played, which Δ it could have found. Normal
approximations throughout (the counts involved are large); ``α = 1 − confidence``,
``z_a = Φ⁻¹(1 − α/2)`` and ``z_b = Φ⁻¹(power)`` (1.960 and 0.842 by default).

Formulas:

- **Two independent proportions** (:func:`games_two_proportions`; e.g. a strategy's win
  rate in two different runs), per group::

      n = (z_a·√(2·p̄·(1 − p̄)) + z_b·√(p1·(1 − p1) + p2·(1 − p2)))² / (p1 − p2)²,
      p̄ = (p1 + p2) / 2

  (Fleiss, *Statistical Methods for Rates and Proportions*, without continuity
  correction; p1 = 0.50, p2 = 0.55 gives 1,565 per group).
- **One proportion against p0** (:func:`games_one_proportion`; a head-to-head: is the win
  rate 0.5?)::

      n = (z_a·√(p0·(1 − p0)) + z_b·√(p1·(1 − p1)))² / (p1 − p0)²

- **Two sides of the same games** (:func:`games_same_games`): the difference of their win
  rates is the mean of the per-game value ``[a won] − [b won]``, whose variance with every
  game decided and the sides level is about 1 (``= share of games decided``), so
  ``n = ((z_a + z_b)·σ / Δ)²`` with ``σ² = decided − Δ²`` taken under the alternative.
  With two sides and no undecided games this is the one-proportion formula for
  ``p1 = 0.5 + Δ/2``.
- **Paired (duplicate deals)** (:func:`deals_paired`): the per-deal mean difference has a
  standard deviation σ_d (estimated from a pilot duplicate run by :func:`per_deal_sd`), and
  ``n = ((z_a + z_b)·σ_d / Δ)²`` deals.

The inverse functions (``detectable_*``) solve the same equations for Δ given n (by
bisection where Δ enters the variance).
"""

from __future__ import annotations

import math

import numpy as np

from sim.errors import SettingError, SniffError
from sim.stats.intervals import normal_quantile

__all__ = ["detectable_line", "plan_text"]

POWER = 0.80
CONFIDENCE = 0.95


def _z(confidence: float, power: float) -> tuple[float, float]:
    if not 0 < confidence < 1:
        raise SniffError(f"confidence must be between 0 and 1, got {confidence}")
    if not 0 < power < 1:
        raise SniffError(f"power must be between 0 and 1, got {power}")
    return normal_quantile(0.5 + confidence / 2), normal_quantile(power)


def _check_rate(p: float, name: str) -> None:
    if not 0 < p < 1:
        raise SniffError(f"{name} must be a win rate strictly between 0 and 1, got {p}")


def _check_delta(delta: float) -> None:
    if not (math.isfinite(delta) and delta != 0):
        raise SniffError(f"the difference to detect must be a non-zero number, got {delta}")


def _raw_two(p1: float, p2: float, z_a: float, z_b: float) -> float:
    mean = (p1 + p2) / 2
    top = z_a * math.sqrt(2 * mean * (1 - mean)) + z_b * math.sqrt(p1 * (1 - p1)
                                                                   + p2 * (1 - p2))
    return top * top / (p1 - p2) ** 2


def games_two_proportions(p1: float, p2: float, power: float = POWER,
                          confidence: float = CONFIDENCE) -> int:
    """Games *per group* to tell win rates ``p1`` and ``p2`` of independent samples apart."""
    _check_rate(p1, "p1")
    _check_rate(p2, "p2")
    _check_delta(p1 - p2)
    return math.ceil(_raw_two(p1, p2, *_z(confidence, power)))


def games_one_proportion(p1: float, p0: float = 0.5, power: float = POWER,
                         confidence: float = CONFIDENCE) -> int:
    """Games to tell a win rate ``p1`` from ``p0`` (0.5: even chances head to head)."""
    _check_rate(p1, "p1")
    _check_rate(p0, "p0")
    _check_delta(p1 - p0)
    z_a, z_b = _z(confidence, power)
    top = z_a * math.sqrt(p0 * (1 - p0)) + z_b * math.sqrt(p1 * (1 - p1))
    return math.ceil(top * top / (p1 - p0) ** 2)


def games_same_games(delta: float, decided: float = 1.0, power: float = POWER,
                     confidence: float = CONFIDENCE) -> int:
    """Games to detect a win-rate difference ``delta`` between two sides of the same games.

    ``decided`` is the expected share of games won by either of the two (1 with two sides
    and no round-cap games; about 2/3 for two of three players at even strength).
    """
    _check_delta(delta)
    if not 0 < decided <= 1 or abs(delta) > decided:
        raise SniffError("decided must be in (0, 1] and at least the difference")
    z_a, z_b = _z(confidence, power)
    sd = math.sqrt(decided - delta * delta)
    return math.ceil(((z_a + z_b) * sd / delta) ** 2)


def deals_paired(delta: float, sd: float, power: float = POWER,
                 confidence: float = CONFIDENCE) -> int:
    """Duplicate deals to detect ``delta`` when per-deal differences have SD ``sd``."""
    _check_delta(delta)
    if not (math.isfinite(sd) and sd > 0):
        raise SniffError(f"the per-deal standard deviation must be positive, got {sd}")
    z_a, z_b = _z(confidence, power)
    return math.ceil(((z_a + z_b) * sd / delta) ** 2)


def per_deal_sd(differences: np.ndarray) -> float:
    """SD (ddof=1) of per-deal differences from a pilot duplicate run, for planning."""
    values = np.asarray(differences, dtype=np.float64)
    if values.size < 2:
        raise SniffError("estimating the per-deal SD needs at least two deals")
    return float(values.std(ddof=1))


def _bisect(needed, low: float, high: float, n: float) -> float:
    """Smallest Δ in (low, high] with ``needed(Δ) <= n`` (``needed`` decreasing in Δ)."""
    if needed(high) > n:
        return math.nan
    for _ in range(100):
        mid = (low + high) / 2
        if needed(mid) <= n:
            high = mid
        else:
            low = mid
    return high


def detectable_two_proportions(games_per_group: int, p: float = 0.5, power: float = POWER,
                               confidence: float = CONFIDENCE) -> float:
    """Smallest Δ = p2 − p (p2 above ``p``) detectable with this many games per group."""
    _check_rate(p, "p")
    z = _z(confidence, power)
    return _bisect(lambda d: _raw_two(p, p + d, *z), 1e-9, 1 - p - 1e-9, games_per_group)


def detectable_one_proportion(games: int, p0: float = 0.5, power: float = POWER,
                              confidence: float = CONFIDENCE) -> float:
    """Smallest departure ``p1 − p0`` (upwards) from ``p0`` detectable in ``games`` games."""
    _check_rate(p0, "p0")
    z_a, z_b = _z(confidence, power)

    def needed(d: float) -> float:
        p1 = p0 + d
        top = z_a * math.sqrt(p0 * (1 - p0)) + z_b * math.sqrt(p1 * (1 - p1))
        return top * top / (d * d)

    return _bisect(needed, 1e-9, 1 - p0 - 1e-9, games)


def detectable_same_games(games: int, decided: float = 1.0, power: float = POWER,
                          confidence: float = CONFIDENCE) -> float:
    """Smallest difference of two sides' win rates over the same ``games`` a run can see.

    The summary of ``sniff simulate`` prints this: with 2,000 games, every game decided,
    about 6.3 points (e.g. 53.1% against 46.9%).
    """
    if games < 2:
        return math.nan
    z_a, z_b = _z(confidence, power)
    k = ((z_a + z_b) ** 2) / games
    # n = k'·(decided − Δ²)/Δ²  ⇒  Δ² = k·decided / (1 + k)
    return math.sqrt(k * decided / (1 + k))


def detectable_paired(deals: int, sd: float, power: float = POWER,
                      confidence: float = CONFIDENCE) -> float:
    """Smallest per-deal mean difference ``deals`` duplicate deals can detect."""
    if deals < 2 or not sd > 0:
        return math.nan
    z_a, z_b = _z(confidence, power)
    return (z_a + z_b) * sd / math.sqrt(deals)


# (2.8 / 1e-5)^2: about 8e10 games, below sniff simulate's most (sim.checks.shape.MAX_GAMES, 10^12);
# a smaller difference is no plan anyone can play (and 1e-300 would overflow).
MIN_DIFFERENCE = 1e-5


def plan_text(delta: float, *, paired: bool = False, sd: float | None = None,
              decided: float = 1.0, power: float = POWER,
              confidence: float = CONFIDENCE) -> list[str]:
    """Lines for ``sniff plan``: games (or deals) needed for ``delta``, and the method."""
    level = f"{100 * confidence:g}% two-sided test, {100 * power:g}% power"
    if not (math.isfinite(delta) and 0 < delta < 1):
        raise SettingError(f"{{delta}} must be a win-rate difference between 0 and 1 "
                           f"(e.g. 0.02 for two points; its size, not its sign), got {delta:g}")
    if delta < MIN_DIFFERENCE:
        raise SettingError(f"{{delta={delta:g}}} is too small to plan for: differences under "
                           f"{MIN_DIFFERENCE:g} need more games than any run can play")
    if sd is not None and not paired:
        raise SettingError("{sd} is the per-deal SD of duplicate deals: it needs {paired}")
    if paired:
        if sd is None:
            raise SettingError("{paired} needs {sd}, the SD of per-deal differences "
                               "(from a pilot duplicate run)")
        if not (math.isfinite(sd) and 0 < sd <= 2):
            raise SettingError(f"{{sd}} must be a standard deviation of per-deal win-rate "
                               f"differences, between 0 and 2, got {sd:g}")
        deals = deals_paired(delta, sd, power, confidence)
        return [f"to detect a win-rate difference of {delta:.3g} with duplicate deals "
                f"(per-deal SD {sd:.3g}), {level}:",
                f"  {deals:,} deals",
                "  method: n = ((z_a + z_b) sd / difference)^2 (see docs/simulate.md)"]
    same = games_same_games(delta, decided, power, confidence)
    lines = [f"to detect a win-rate difference of {delta:.3g}, {level}:",
             f"  {same:,} games: two sides of the same games (one run, "
             f"{100 * decided:g}% of games decided)"]
    if abs(delta) < 0.5:
        runs = games_two_proportions(0.5, 0.5 + abs(delta), power, confidence)
        lines.append(f"  {runs:,} games in each of two runs: one strategy's win rate "
                     f"compared across runs (0.5 against {0.5 + abs(delta):.3g})")
    lines.append("  method: docs/simulate.md (planning); duplicate deals need fewer: "
                 "--paired --sd S")
    return lines

def detectable_line(games: int, decided: float = 1.0, power: float = POWER,
                    confidence: float = CONFIDENCE) -> str:
    """The summary line of a finished run: the smallest difference it could detect.

    ``decided``: the share of games won by one of the two sides compared (1 for two sides
    and no undecided games; about 2/3 with three players).
    """
    delta = detectable_same_games(games, decided, power, confidence)
    if not math.isfinite(delta):
        return "too few games to detect any difference between the sides"
    return (f"smallest win-rate difference between two sides these {games:,} games can detect "
            f"({100 * confidence:g}% two-sided, {100 * power:g}% power): {100 * delta:.1f} "
            f"points; games for a smaller one: sniff plan --difference D")
