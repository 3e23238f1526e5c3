"""How fast ``sniff analyze`` values decisions: a run of four-player games analysed whole.

Usage: python benchmarks/analyze_speed.py [--games N] [--budget B] [--strategies S]
       [--players P] [--endgame exact|playout]
Prints the games, the decisions, the seconds and decisions per minute (the run is played
first, untimed; the analysis's first search is warmed up on one game, untimed).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import sim
from sim.analyze.settings import AnalyzeSettings, Endgame
from sim.analyze.study import analyse_games, plan_analysis, run_analysis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200,
                        help="games played, then analysed whole (default 200)")
    parser.add_argument("--budget", type=int, default=AnalyzeSettings().budget,
                        help="deals per search (default: sniff analyze's)")
    parser.add_argument("--strategies", default="greedy,random",
                        help="the run's lineup (default greedy,random)")
    parser.add_argument("--players", type=int, default=4, help="2, 3 or 4 (default 4)")
    parser.add_argument("--endgame", default=AnalyzeSettings().endgame.value,
                        choices=[e.value for e in Endgame])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        run = Path(base) / "run"
        sim.simulate(players=args.players, strategies=args.strategies, games=args.games,
                     seed=1, out=run)
        settings = AnalyzeSettings(budget=args.budget, games=args.games, part_games=20,
                                   endgame=Endgame(args.endgame))
        plan = plan_analysis([run], settings)
        analyse_games(plan, list(plan.games[:1]))  # load the compiled search, untimed
        started = time.perf_counter()
        tables = run_analysis(plan, Path(base) / "out")
        seconds = time.perf_counter() - started
    decisions = int(tables["strategies"]["decisions"].sum())
    print(f"{args.games:,} games of {args.players} players, {decisions:,} decisions, budget "
          f"{args.budget} (x2 deals), endgames {args.endgame}, "
          f"{seconds:.1f} s: {60 * decisions / seconds:,.0f} decisions/min, "
          f"{args.games / seconds * 600:,.0f} games per 10 min")


if __name__ == "__main__":
    main()
