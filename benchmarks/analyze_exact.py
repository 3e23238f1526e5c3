"""The analysis's best move against an exhaustive solver, per play-out policy.

With 2 players and an empty boneyard every hand is known; tests/test_analyze.py's
``exact_values`` searches the rest of the round to its end (each side maximising its own
chance to win the game, valued as the search values a round's end). Over the endgame
decisions of 300 two-player games (greedy against random), this counts the decisions whose
best move the analysis separates from the runner-up, and how many of those agree with the
exact best. Usage: python benchmarks/analyze_exact.py [--budget B]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_analyze import exact_values  # noqa: E402  (the tests' solver, one copy)

from sim.analyze.decisions import Pending, kind_of, phase_of  # noqa: E402
from sim.analyze.sources import GameRef  # noqa: E402
from sim.analyze.valuation import figures, search  # noqa: E402
from sim.hint.position import decisions  # noqa: E402
from sim.kernels.runner import lineup_of  # noqa: E402
from sim.kernels.trace import game_events  # noqa: E402
from strategies import parse_spec  # noqa: E402
from strategies.search.playout import POLICIES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=32)
    args = parser.parse_args()
    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    found = [d.position for game in range(300) for d in decisions(game_events(lineup, 23, game))
             if d.position.boneyard == 0 and len(d.position.legal_moves()) > 1
             and d.position.table and sum(d.position.sizes) <= 10]
    pending = [Pending(GameRef("exact", i), 0, 1, 1, p.seat, 2, "x", phase_of(p),
                       kind_of(p, p.legal_moves()), p.legal_moves(), 0, p, 1000 + i)
               for i, p in enumerate(found)]
    exact = [exact_values(p) for p in found]
    print(f"{len(found)} endgame decisions, budget {args.budget} (x2 deals)")
    for policy in POLICIES:
        wins, _ = search(pending, 2 * args.budget, POLICIES.index(policy))
        agree = separated = 0
        for i, values in enumerate(exact):
            result = figures(wins[i, : len(values)], 0, (0.01, 0.03, 0.1))
            if result.best_separated:
                separated += 1
                agree += values[result.best] >= max(values) - 1e-12
        print(f"{policy:<9} agrees on {agree}/{separated} separated decisions "
              f"({100 * agree / separated:.1f}%)")


if __name__ == "__main__":
    main()
