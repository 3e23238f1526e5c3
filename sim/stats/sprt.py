"""The sequential probability ratio test of ``sniff compare``: stop as soon as the evidence
suffices, either way.

The unit is a duplicate deal (2 games with the sides swapped; with 3 players the rotation
group of 3 games). Its outcome ``x`` is strategy A's win-rate advantage on that deal: the mean
over its games of ``1{A won} - 1{B won}`` (with 3 players, A against the mean of B's two
seats: ``1{A won} - 1{a B seat won} / 2``), so the mean of ``x`` over deals is the win-rate
difference ``sniff simulate`` prints (A's win rate minus B's, per seat).

The test is Wald's SPRT of H0: mean ``<= h0`` against H1: mean ``>= h1`` in the generalized
form that chess engine testing uses (fishtest; M. Van den Bergh, "A simple derivation of
the GSPRT"): the per-deal outcomes are taken as normal with the variance estimated from the
deals played so far, which gives the log-likelihood ratio

    LLR = n (h1 - h0) (2 mean - h0 - h1) / (2 var)

and Wald's bounds ``log(beta / (1 - alpha))`` (accept H0) and ``log((1 - beta) / alpha)``
(accept H1). The LLR is checked after every chunk of deals (a fixed chunk, so the decision is
the same for any thread count); the error rates this gives are measured, not assumed
(:func:`simulate_tests`, docs/compare.md, "Checked by simulation").

On a scale of Elo: with two sides, a win-rate difference ``d`` is an expected score of
``(1 + d) / 2`` head to head, ``400 log10((1 + d) / (1 - d))`` Elo (:func:`elo_of_difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.errors import SettingError
from sim.stats.intervals import Z95, Moments, normal_quantile

__all__ = ["DealOutcomes", "elo_of_difference", "simulate_tests", "Sprt"]

MIN_VARIANCE = 1e-4  # a run of identical deals (variance 0) still has a finite LLR


def elo_of_difference(difference: float) -> float:
    """Elo of a two-sided win-rate difference (A's rate minus B's)."""
    if not -1 < difference < 1:
        return math.copysign(math.inf, difference)
    return 400 * math.log10((1 + difference) / (1 - difference))


@dataclass(frozen=True)
class Sprt:
    """The hypotheses (win-rate differences) and planned error rates of one test.

    Attributes:
        h0: the win-rate difference of the null hypothesis.
        h1: the win-rate difference of the alternative.
        alpha: the planned chance of deciding H1 when H0 holds.
        beta: the planned chance of deciding H0 when H1 holds.
    """

    h0: float
    h1: float
    alpha: float
    beta: float

    def __post_init__(self) -> None:
        for name in ("h0", "h1"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    -1 < value < 1):
                raise SettingError(f"{{{name}}} must be a win-rate difference between -1 and "
                                   f"1, got {value}")
        if self.h1 <= self.h0:
            raise SettingError(f"{{h1}} must be above {{h0}} (H1: A's advantage is at least "
                               f"h1, H0: at most h0), got h0={self.h0:g}, h1={self.h1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not (
                    0 < value < 0.5):
                raise SettingError(f"{{{name}}} must be an error rate between 0 and 0.5 "
                                   f"(e.g. 0.05), got {value}")

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, n: float, mean: float, variance: float) -> float:
        """The log-likelihood ratio of H1 against H0 after ``n`` deals."""
        if n < 2:
            return 0.0
        variance = max(variance, MIN_VARIANCE)
        return n * (self.h1 - self.h0) * (2 * mean - self.h0 - self.h1) / (2 * variance)

    def decision(self, llr: float) -> str | None:
        """"H0", "H1", or None while the LLR is between the bounds."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def fixed_deals(self, sd: float) -> int:
        """Deals of the fixed-size one-sided test with the same error rates: it rejects H0 at
        level alpha and has power 1 - beta at h1 (``(z_alpha + z_beta) sd / (h1 - h0)``,
        squared), for per-deal outcomes of standard deviation ``sd``."""
        z = normal_quantile(1 - self.alpha) + normal_quantile(1 - self.beta)
        return math.ceil((z * sd / (self.h1 - self.h0)) ** 2)

    def to_dict(self) -> dict:
        return {"h0": self.h0, "h1": self.h1, "alpha": self.alpha, "beta": self.beta,
                "lower": self.lower, "upper": self.upper,
                "h0_elo": elo_of_difference(self.h0), "h1_elo": elo_of_difference(self.h1)}


class DealOutcomes:
    """The running outcomes of A's deals: count, mean and variance, exact and streaming.

    Fed each chunk's games in id order (``winner_side``: the lineup side that won, -1 none;
    ``deal_id``). Side 0 is A; with 2 sides side 1 is B, with 3 sides (3 players, lineup
    A,B,B) sides 1 and 2 are B's seats. A deal's games are consecutive ids, and a chunk never
    cuts one (``sniff compare``'s chunks are whole deals).
    """

    def __init__(self, sides: int, group: int) -> None:
        self.sides = sides
        self.group = group
        # 2 x per game is an integer with 3 sides (2 1{A} - 1{B}); sums per deal are exact.
        self.double = 2 if sides == 3 else 1
        self.moments = Moments(scale=1 / (self.double * group))

    def add(self, winner_side: np.ndarray, deal_id: np.ndarray) -> None:
        winner_side = np.asarray(winner_side)
        deal_id = np.asarray(deal_id)
        if winner_side.size % self.group or (
                winner_side.size and np.any(deal_id[::self.group] != deal_id[self.group - 1::
                                                                            self.group])):
            raise ValueError("a chunk of a sequential test must hold whole deals")
        a_won = (winner_side == 0).astype(np.int64)
        b_won = (winner_side > 0).astype(np.int64)
        x = (2 * a_won - b_won) if self.sides == 3 else (a_won - b_won)
        self.moments.add(x.reshape(-1, self.group).sum(axis=1))

    @property
    def deals(self) -> int:
        return self.moments.n

    @property
    def mean(self) -> float:
        return self.moments.mean

    @property
    def variance(self) -> float:
        """The population variance of the per-deal outcomes (as the GSPRT uses it)."""
        n = self.moments.n
        if n < 1:
            return math.nan
        scale = self.moments.scale
        m2 = n * self.moments.total_sq - self.moments.total ** 2
        return scale * scale * m2 / (n * n)

    def interval(self, z: float = Z95) -> tuple[float, float, float]:
        """``(mean, low, high)``: the fixed-sample interval of the mean difference (at a
        stopping time it is qualified, not corrected: docs/compare.md)."""
        return self.moments.interval(z)


def simulate_tests(sprt: Sprt, difference: float, tests: int, chunk_deals: int,
                   max_deals: int, seed: int, tie_share: float = 0.3) -> dict:
    """The operating characteristic of ``sprt`` on synthetic deals (no games): ``tests``
    independent tests of deals whose outcome is +1, 0 or -1 (A won both games, split, lost
    both) with mean ``difference`` and a share ``tie_share`` of splits, checked after every
    ``chunk_deals`` deals up to ``max_deals``. The shares of H1, H0 and undecided, the mean
    and quantiles of the deals used, and the mean estimate at the stop (its bias)."""
    rng = np.random.default_rng(seed)
    p_win = (1 - tie_share + difference) / 2
    p_loss = (1 - tie_share - difference) / 2
    if min(p_win, p_loss) < 0:
        raise ValueError("difference too large for this tie share")
    n = np.zeros(tests)
    total = np.zeros(tests)
    total_sq = np.zeros(tests)
    decided = np.zeros(tests, dtype=np.int8)  # 0 running, 1 H1, -1 H0
    used = np.zeros(tests)
    estimate = np.full(tests, np.nan)
    for _ in range(-(-max_deals // chunk_deals)):
        running = np.flatnonzero(decided == 0)
        if running.size == 0:
            break
        draws = rng.choice(np.array([1.0, 0.0, -1.0]), p=[p_win, tie_share, p_loss],
                           size=(running.size, chunk_deals))
        n[running] += chunk_deals
        total[running] += draws.sum(axis=1)
        total_sq[running] += (draws * draws).sum(axis=1)
        mean = total[running] / n[running]
        variance = np.maximum(total_sq[running] / n[running] - mean * mean, MIN_VARIANCE)
        llr = n[running] * (sprt.h1 - sprt.h0) * (2 * mean - sprt.h0 - sprt.h1) / (2 * variance)
        verdict = np.where(llr >= sprt.upper, 1, np.where(llr <= sprt.lower, -1, 0))
        verdict[n[running] >= max_deals] = np.where(verdict[n[running] >= max_deals] == 0, 2,
                                                    verdict[n[running] >= max_deals])
        stopping = running[verdict != 0]
        decided[stopping] = verdict[verdict != 0]
        used[stopping] = n[stopping]
        estimate[stopping] = mean[verdict != 0]
    return {
        "difference": difference, "tests": tests, "h1_share": float(np.mean(decided == 1)),
        "h0_share": float(np.mean(decided == -1)), "undecided_share": float(np.mean(decided == 2)),
        "mean_deals": float(used.mean()), "median_deals": float(np.median(used)),
        "p90_deals": float(np.quantile(used, 0.9)), "mean_estimate": float(np.nanmean(estimate)),
        "sd": math.sqrt(1 - tie_share - difference * difference),
    }
