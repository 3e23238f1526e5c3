"""Where ``sniff tune --accept sprt`` saves games (#36 item 4): its figures feed docs/tune.md.

The sequential acceptance against the defaults is set against the fixed validation of equal
error rates: the deals ``sniff plan --paired`` counts for the same h1, one-sided alpha
(``--confidence 1 - 2 alpha``) and power ``1 - beta`` (``sim.stats.planning.deals_paired``),
and against today's fixed match of ``--validate-games`` (20,000 games: 10,000 deals).

- synthetic deals (``sim.stats.sprt.simulate_tests``, no games): outcomes +1, 0, -1 with a
  share of split deals, at true advantages 0, h1/2, h1 and 2 h1, capped as tune caps the
  test (``--validate-games``): the operating characteristic and the deals used;
- real validations (``sim.tune.study.tune`` with ``--accept sprt`` on several seeds, sigma so
  small that the tuned values stay at the start, so the candidate is known): ``weighted``'s
  defaults against themselves, a candidate near them (``points=1.1``), and the clearly
  better tuned set of docs/tune.md, 4 players. For each, one fixed match of the cap
  (``--accept fixed``) measures the per-deal SD that the plan's fixed size needs.

    python scripts/tune_accept.py                      # 2,000 synthetic tests, 10 seeds
    python scripts/tune_accept.py --tests 500 --seeds 4 --cap 20000
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.compare import ALPHA, BETA, CHUNK_DEALS, H0, H1  # noqa: E402
from sim.stats.planning import deals_paired  # noqa: E402
from sim.stats.sprt import Sprt, simulate_tests  # noqa: E402

BETTER = ("weighted:points=1.914,shed=0.6147,reply=-2.954,follow=0.2745,doubles=-5.932,"
          "suits=1.126,block=13.55,partner=1.147")
CASES = (("defaults against themselves", "weighted"),
         ("near the defaults (points=1.1)", "weighted:points=1.1"),
         ("clearly better (docs/tune.md's tuned set)", BETTER))
STAY = {"games": 80, "games_per_trial": 20, "popsize": 2, "sigma": 1e-6}


def plan_deals(sprt: Sprt, sd: float) -> int | None:
    """``sniff plan --paired --difference H1-H0 --sd SD --power 1-beta --confidence
    1-2alpha``: the fixed size with the SPRT's error rates (None when every deal splits)."""
    if sd <= 0:
        return None
    return deals_paired(sprt.h1 - sprt.h0, sd, power=1 - sprt.beta,
                        confidence=1 - 2 * sprt.alpha)


def synthetic(sprt: Sprt, tests: int, cap_deals: int, seed: int) -> list[str]:
    lines = ["| true advantage | H1 (accepted) | H0 (rejected) | undecided at the cap | mean "
             "deals | 90th pct | plan's fixed deals | SPRT / plan | SPRT / today's fixed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for difference in (0.0, sprt.h1 / 2, sprt.h1, 2 * sprt.h1):
        r = simulate_tests(sprt, difference, tests, CHUNK_DEALS, cap_deals, seed)
        fixed = plan_deals(sprt, r["sd"])
        lines.append(
            f"| {difference:+.3f} | {r['h1_share']:.3f} | {r['h0_share']:.3f} | "
            f"{r['undecided_share']:.3f} | {r['mean_deals']:,.0f} | {r['p90_deals']:,.0f} | "
            f"{fixed:,} | {r['mean_deals'] / fixed:.2f} | {r['mean_deals'] / cap_deals:.2f} |")
    return lines


def real(sprt: Sprt, seeds: int, cap: int) -> list[str]:
    from sim.tune.study import tune

    lines = ["| candidate against weighted's defaults, 4 players | decisions over seeds | mean "
             "games (min-max) | fixed match: difference [95%] | per-deal SD | plan's fixed "
             "games | today's fixed games | seconds |", "|---|---|---|---|---|---|---|---|"]
    for name, strategy in CASES:
        started = time.perf_counter()
        decisions, games = [], []
        with tempfile.TemporaryDirectory() as folder:
            for seed in range(seeds):
                result = tune(strategy, "weighted", players=4, seed=seed, validate_games=cap,
                              accept="sprt", h0=sprt.h0, h1=sprt.h1, alpha=sprt.alpha,
                              beta=sprt.beta, out=Path(folder) / f"sprt-{seed}", **STAY)
                decisions.append(result.acceptance["decision"])
                games.append(result.acceptance["games"])
            fixed = tune(strategy, "weighted", players=4, seed=0, validate_games=cap,
                         out=Path(folder) / "fixed", **STAY).validation[0]
        d = fixed.difference
        sd = d["se"] * math.sqrt(d["n"])
        planned = plan_deals(sprt, sd)
        shares = ", ".join(f"{key} {decisions.count(key)}" for key in ("H1", "H0", "undecided")
                           if decisions.count(key))
        lines.append(
            f"| {name} | {shares} of {seeds} | {sum(games) / seeds:,.0f} ({min(games):,}-"
            f"{max(games):,}) | {d['estimate']:+.2%} [{d['low']:+.2%}, {d['high']:+.2%}] | "
            f"{sd:.3f} | {'any (every deal split)' if planned is None else f'{2 * planned:,}'}"
            f" | {cap:,} | {time.perf_counter() - started:.0f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=2000, help="synthetic tests a setting")
    parser.add_argument("--seeds", type=int, default=10, help="real validations a candidate")
    parser.add_argument("--cap", type=int, default=20_000,
                        help="--validate-games: the SPRT's cap and today's fixed match")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("results/tune-accept.json"))
    args = parser.parse_args()
    sprt = Sprt(H0, H1, ALPHA, BETA)
    cap_deals = args.cap // 2
    lines = [f"Synthetic deals (+1/0/-1, 30% split), {args.tests:,} tests a row, capped at "
             f"{cap_deals:,} deals ({args.cap:,} games):", "",
             *synthetic(sprt, args.tests, cap_deals, args.seed)]
    print("\n".join(lines), flush=True)
    real_lines = ["", f"Real validations, sniff tune --accept sprt on seeds 0..{args.seeds - 1}"
                  f" (cap {args.cap:,} games):", "", *real(sprt, args.seeds, args.cap)]
    print("\n".join(real_lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"lines": lines + real_lines}, indent=1))


if __name__ == "__main__":
    main()
