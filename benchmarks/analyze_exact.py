"""The analysis's best move against the exact one, on positions where every hand is known.

With 2 players and an empty boneyard every hand is known, and the analysis solves the rest
of the round exactly (``--endgame exact``, the default; ``sim.analyze.endgame``, held to a
plain-Python solver by tests/sim/analyze/test_study.py). This takes every such decision of 300
two-player games (greedy against random), counts how many the solve finishes within its
node limit, and then values the same decisions by play-outs alone (``--endgame playout``)
with each play-out policy at each budget: of the decisions whose best move the play-outs
separate from the runner-up, how many agree with the exact best, and the decisions valued
per minute. The analysis's default agrees on every solved decision by construction.

Usage: python benchmarks/analyze_exact.py [--games N] [--budgets 32,100] [--policies ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sim.analyze.decisions import Pending, kind_of, phase_of
from sim.analyze.sources import GameRef
from sim.analyze.valuation import figures, search
from sim.hint.tracker import decisions
from sim.kernels.runner import lineup_of
from sim.kernels.trace import game_events
from strategies import parse_spec
from strategies.search.playout import POLICIES

THRESHOLDS = (0.01, 0.03, 0.1)


def endgame_decisions(games: int) -> list[Pending]:
    """Every decision with a choice, an empty boneyard and a tile on the table, of
    ``games`` two-player games of greedy against random (seed 23)."""
    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    found = [d.position for game in range(games) for d in decisions(game_events(lineup, 23, game))
             if d.position.boneyard == 0 and len(d.position.legal_moves()) > 1
             and d.position.table]
    return [Pending(GameRef("exact", i), 0, 1, 1, p.seat, 2, "x", phase_of(p),
                    kind_of(p, p.legal_moves()), p.legal_moves(), 0, p, 1000 + i)
            for i, p in enumerate(found)]


def agreement(wins: np.ndarray, truth: list[np.ndarray]) -> tuple[int, int]:
    """(agreeing, separated): of the decisions whose best move is separated from the
    runner-up, those whose best is an exact best."""
    agree = separated = 0
    for i, values in enumerate(truth):
        found = figures(wins[i, : len(values)], 0, THRESHOLDS)
        if found.best_separated:
            separated += 1
            agree += bool(values[found.best] >= values.max() - 1e-12)
    return agree, separated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300,
                        help="two-player games whose endgames are solved (default 300)")
    parser.add_argument("--budgets", default="32,100",
                        help="comma-separated play-out budgets to compare (default 32,100)")
    parser.add_argument("--policies", default=",".join(POLICIES),
                        help="comma-separated play-out policies (default: all of them)")
    args = parser.parse_args()
    pending = endgame_decisions(args.games)
    search(pending[:1], 2, 0)  # load the compiled search, untimed
    started = time.perf_counter()
    exact, _, solved = search(pending, 2, 0)
    seconds = time.perf_counter() - started
    kept = [i for i in range(len(pending)) if solved[i]]
    truth = [exact[i, : len(pending[i].moves), 0] for i in kept]
    cases = [pending[i] for i in kept]
    print(f"{len(pending)} decisions with every hand known; solved exactly: {len(kept)} "
          f"({seconds:.2f} s, {60 * len(pending) / seconds:,.0f} decisions/min)")
    print(f"{'policy':<9} {'budget':>6}  agrees (separated decisions)   decisions/min")
    for policy in args.policies.split(","):
        for budget in (int(b) for b in args.budgets.split(",")):
            started = time.perf_counter()
            wins, _, _ = search(cases, 2 * budget, POLICIES.index(policy), exact=False)
            seconds = time.perf_counter() - started
            agree, separated = agreement(wins, truth)
            print(f"{policy:<9} {budget:>6}  {agree}/{separated} "
                  f"({100 * agree / max(1, separated):.1f}%){'':>12} "
                  f"{60 * len(cases) / seconds:>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
