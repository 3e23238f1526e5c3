"""Do the analysis's error rates order strategies as their tournament ratings do?

Plays a tournament of the strategies (four players unless ``--players`` says otherwise;
every pairing, the same games for the ratings and the analysis), analyses a sample of each
pairing's games with the command's defaults (each strategy's decisions pooled over its
pairings), and prints per strategy its rating, error rate and win chance lost per decision
with 95% intervals over games, then for each pair of neighbours in the ratings' order the
difference of their error rates and of their losses with a 95% interval from the same
resampled games (both strategies' figures recomputed on each resample, so their dependence
through shared games is kept).

Usage: python benchmarks/analyze_order.py [--strategies S] [--players N]
       [--games-per-pair N] [--analysed N] [--budget B] [--out FOLDER]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sim.analyze.folder import table_files
from sim.analyze.settings import AnalyzeSettings
from sim.analyze.stats import MARKS, Resamples
from sim.analyze.study import plan_analysis, run_analysis

STRATEGIES = "random,greedy,partner,learned,expert"


def play(strategies: str, players: int, games: int, folder: Path) -> pd.DataFrame:
    """The tournament, played by ``sniff tournament``; its ranking (strategy, rating...)."""
    subprocess.run([sys.executable, "-m", "sim.cli", "tournament", "--players", str(players),
                    "--strategies", strategies, "--games-per-pair", str(games), "--seed", "1",
                    "-o", str(folder), "-q"], check=True, stdout=subprocess.DEVNULL)
    return pd.read_csv(folder / "ranking.csv")


def boot(frame: pd.DataFrame, resamples: Resamples, strategy: str) -> dict[str, np.ndarray]:
    """A strategy's error rate and loss on every resample of the games."""
    mask = (frame["strategy"] == strategy).to_numpy()
    counts = np.bincount(resamples.cluster[mask], minlength=resamples.games).astype(float)
    out = {}
    for name, values in (("error_rate", frame["mark"].isin(MARKS).to_numpy(float)),
                         ("loss", frame["loss"].to_numpy(float))):
        sums = np.bincount(resamples.cluster[mask], weights=values[mask],
                           minlength=resamples.games)
        out[name] = (resamples.weights @ sums) / (resamples.weights @ counts)
    return out


def neighbours(frame: pd.DataFrame, order: list[str], seed: int) -> list[str]:
    """Each neighbour pair's differences (the weaker minus the stronger) with intervals."""
    resamples = Resamples(frame, 1000, seed)
    lines = []
    for weaker, stronger in zip(order[1:], order[:-1]):
        a, b = boot(frame, resamples, weaker), boot(frame, resamples, stronger)
        parts = []
        for name in ("error_rate", "loss"):
            diff = a[name] - b[name]
            low, high = np.percentile(diff, [2.5, 97.5])
            verdict = "separated" if low > 0 or high < 0 else "not separated"
            parts.append(f"{name} {100 * np.mean(diff):+.2f} [{100 * low:+.2f}, "
                         f"{100 * high:+.2f}] {verdict}")
        lines.append(f"{weaker} - {stronger}: " + "; ".join(parts))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", default=STRATEGIES,
                        help=f"the tournament's strategies (default {STRATEGIES})")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4,
                        help="players per game (default 4)")
    parser.add_argument("--games-per-pair", type=int, default=200,
                        help="tournament games per pairing (default 200)")
    parser.add_argument("--analysed", type=int, default=40, help="games analysed per pairing")
    parser.add_argument("--budget", type=int, default=AnalyzeSettings().budget,
                        help="deals per search (default: sniff analyze's)")
    parser.add_argument("--out", type=Path, help="keep the tournament and analysis here")
    args = parser.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="analyze-order-"))
    started = time.perf_counter()
    ranking = play(args.strategies, args.players, args.games_per_pair, base / "tournament")
    played = time.perf_counter() - started
    settings = AnalyzeSettings(budget=args.budget, games=args.analysed, part_games=20)
    started = time.perf_counter()
    tables = run_analysis(plan_analysis([base / "tournament"], settings), base / "analysis")
    seconds = time.perf_counter() - started
    frame = pd.concat(pd.read_parquet(path) for path in table_files(base / "analysis")[
        "decisions"]).reset_index(drop=True)
    table = tables["strategies"].set_index("strategy")
    order = list(ranking.sort_values("rating", ascending=False)["strategy"])
    print(f"tournament of {args.players} players: {args.games_per_pair} games per pairing "
          f"({played:.0f} s); analysed {args.analysed} per pairing, budget {args.budget}: "
          f"{len(frame):,} decisions in {seconds:.0f} s")
    print("| strategy | rating [95%] | games | decisions | error rate [95%] | "
          "lost per decision, points [95%] | noise |")
    print("|---|---|---|---|---|---|---|")
    for strategy in order:
        rating = ranking.set_index("strategy").loc[strategy]
        row = table.loc[strategy]
        print(f"| {strategy} | {rating['rating']:.0f} [{rating['low']:.0f}, "
              f"{rating['high']:.0f}] | {int(row['games']):,} | {int(row['decisions']):,} | "
              f"{100 * row['error_rate']:.2f}% [{100 * row['error_rate_low']:.2f}, "
              f"{100 * row['error_rate_high']:.2f}] | {100 * row['loss']:.2f} "
              f"[{100 * row['loss_low']:.2f}, {100 * row['loss_high']:.2f}] | "
              f"{100 * row['noise_share']:.1f}% |")
    print("\n".join(neighbours(frame, order, settings.seed)))
    print(f"folders: {base}")


if __name__ == "__main__":
    main()
