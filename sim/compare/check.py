"""The sequential test's operating characteristic measured on real games.

Many comparisons of A against B cost many runs; but a run's duplicate deals are independent
draws of the same outcome distribution, so one long duplicate run of A against B serves as
many tests: test 1 reads deals from the first on, chunk by chunk as ``sniff compare`` does,
until it decides; test 2 starts at the next deal; and so on. Each test sees deals no other
test saw, so the tests are independent, and the share of each decision and the deals used
are what ``sniff compare`` would give on as many seeds.
"""

from __future__ import annotations

import numpy as np

from sim.stats.sprt import MIN_VARIANCE, Sprt

__all__: list[str] = []  # nothing here is used outside sim.compare


def consecutive_tests(outcomes: np.ndarray, sprt: Sprt, chunk_deals: int, max_deals: int
                      ) -> list[dict]:
    """Tests run one after another over ``outcomes`` (per-deal win-rate differences in deal
    order); each: its decision ("H0", "H1", "undecided"), deals used and estimate at the stop.
    A test that would run past the end of the deals is left out (it has no decision yet)."""
    tests = []
    start = 0
    checks = np.arange(chunk_deals, max_deals + 1, chunk_deals)
    while start + chunk_deals <= outcomes.size:
        window = outcomes[start:start + max_deals]
        n = checks[checks <= window.size]
        sums = np.cumsum(window)[n - 1]
        squares = np.cumsum(window * window)[n - 1]
        mean = sums / n
        variance = np.maximum(squares / n - mean * mean, MIN_VARIANCE)
        llr = n * (sprt.h1 - sprt.h0) * (2 * mean - sprt.h0 - sprt.h1) / (2 * variance)
        crossed = np.flatnonzero((llr >= sprt.upper) | (llr <= sprt.lower))
        if crossed.size:
            at = crossed[0]
            decision = "H1" if llr[at] >= sprt.upper else "H0"
        elif window.size >= max_deals:
            at, decision = n.size - 1, "undecided"
        else:
            break  # the deals ran out before this test finished
        tests.append({"decision": decision, "deals": int(n[at]), "estimate": float(mean[at])})
        start += int(n[at])
    return tests


def operating_characteristic(tests: list[dict]) -> dict:
    """The shares of each decision and the deals used, over ``tests``."""
    deals = np.array([t["deals"] for t in tests], dtype=float)
    decisions = [t["decision"] for t in tests]
    return {
        "tests": len(tests),
        "h1_share": decisions.count("H1") / len(tests),
        "h0_share": decisions.count("H0") / len(tests),
        "undecided_share": decisions.count("undecided") / len(tests),
        "mean_deals": float(deals.mean()), "median_deals": float(np.median(deals)),
        "p90_deals": float(np.quantile(deals, 0.9)),
        "mean_estimate": float(np.mean([t["estimate"] for t in tests])),
    }


def deal_outcomes(games_table, players: int) -> np.ndarray:
    """Per-deal win-rate differences of a duplicate run's games table (A is lineup side 0),
    as ``sim.stats.sprt.DealOutcomes`` counts them."""
    from sim.run.plan import deal_group
    from sim.store.arrow import to_numpy

    group = deal_group(players, True)
    winner = to_numpy(games_table["winner_side"])
    a_won = (winner == 0).astype(float)
    b_won = (winner > 0).astype(float)
    x = a_won - (b_won / 2 if players == 3 else b_won)
    return x[: x.size - x.size % group].reshape(-1, group).mean(axis=1)
