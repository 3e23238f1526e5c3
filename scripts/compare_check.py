"""``sniff compare``'s sequential test, checked by simulation: its figures feed docs/compare.md.

Two tables, for the default test (H0: difference <= 0, H1: >= 0.05, alpha = beta = 0.05,
checked every 50 deals):

- synthetic deals (no games, ``sim.stats.sprt.simulate_tests``): per-deal outcomes +1, 0,
  -1 with a given mean, at advantages 0, h1/2, h1, 2 h1 and 0.3;
- real games (``sim.compare.check``): one long duplicate run per matchup, read as
  consecutive independent tests: ``random`` against itself (a true null, 2 players) and
  ``partner`` against ``greedy`` (a large advantage, 4 players).

For each: the share of H1 and H0 decisions (with their Monte-Carlo 95% half-width), the
deals used (mean, median, 90th percentile), the deals of the fixed-size one-sided test of
the same error rates (``Sprt.fixed_deals`` with the outcomes' standard deviation; what
``sniff plan --paired`` would count at 95% power and one-sided 5%), their ratio, and the
mean estimate at the stop (its bias against the true difference).

    python scripts/compare_check.py                   # 2,000 synthetic tests a setting
    python scripts/compare_check.py --tests 1000 --real-games 3000000
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.compare import ALPHA, BETA, CHUNK_DEALS, H0, H1  # noqa: E402
from sim.compare.check import consecutive_tests, deal_outcomes, operating_characteristic  # noqa: E402,E501
from sim.stats.sprt import Sprt, simulate_tests  # noqa: E402

MAX_DEALS = 50_000


def mc(share: float, tests: int) -> float:
    return 1.96 * math.sqrt(max(share * (1 - share), 1e-12) / tests)


def row(name: str, truth: str, result: dict, fixed: int) -> str:
    tests = result["tests"]
    return (f"| {name} | {truth} | {result['h1_share']:.3f} ± {mc(result['h1_share'], tests):.3f}"
            f" | {result['h0_share']:.3f} ± {mc(result['h0_share'], tests):.3f} | "
            f"{result['mean_deals']:,.0f} | {result['median_deals']:,.0f} | "
            f"{result['p90_deals']:,.0f} | {fixed:,} | {result['mean_deals'] / fixed:.2f} | "
            f"{result['mean_estimate']:+.4f} |")


HEADER = ("| setting | true difference | H1 share | H0 share | mean deals | median | 90th pct "
          "| fixed-size deals | ratio | mean estimate at stop |\n|---|---|---|---|---|---|---|"
          "---|---|---|")


def synthetic(sprt: Sprt, tests: int, seed: int) -> list[str]:
    lines = [HEADER]
    for difference in (0.0, H1 / 2, H1, 2 * H1, 0.3):
        result = simulate_tests(sprt, difference, tests, CHUNK_DEALS, MAX_DEALS, seed)
        result["tests"] = tests
        lines.append(row(f"synthetic, {tests:,} tests", f"{difference:+.3f}", result,
                         sprt.fixed_deals(result["sd"])))
    return lines


def real(sprt: Sprt, games: int, seed: int) -> list[str]:
    import sim

    lines = [HEADER]
    for a, b, players, share in (("random", "random", 2, 1.0), ("partner", "greedy", 4, 0.1)):
        count = int(games * share) // 2 * 2
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            sim.simulate(players, f"{a},{b}", count, seed, duplicate=True, rounds=False,
                         out=Path(folder) / "run", chunk_size=500_000)
            table = pq.read_table(Path(folder) / "run" / "games", columns=["winner_side"])
            seconds = time.perf_counter() - started
        outcomes = deal_outcomes(table, players)
        tests = consecutive_tests(outcomes, sprt, CHUNK_DEALS, MAX_DEALS)
        result = operating_characteristic(tests)
        truth = float(outcomes.mean())
        sd = float(outcomes.std())
        lines.append(row(f"{a} vs {b}, {players} players: {result['tests']:,} tests over "
                         f"{count:,} games ({seconds:.0f} s)",
                         f"{truth:+.3f} (whole run)", result, sprt.fixed_deals(sd)))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=2000, help="synthetic tests a setting")
    parser.add_argument("--real-games", type=int, default=4_000_000,
                        help="games of the null run (the large-advantage run plays a tenth)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("results/compare-check.json"))
    args = parser.parse_args()
    sprt = Sprt(H0, H1, ALPHA, BETA)
    lines = ["Synthetic deals (+1/0/-1, 30% split deals):", "", *synthetic(sprt, args.tests,
                                                                           args.seed)]
    print("\n".join(lines), flush=True)
    real_lines = ["", "Real games, consecutive tests over one duplicate run:", "",
                  *real(sprt, args.real_games, args.seed)]
    print("\n".join(real_lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"lines": lines + real_lines}, indent=1))


if __name__ == "__main__":
    main()
