"""Does the network make ``sniff hint``'s ranking agree more often with a long search?
(docs/learned.md, "The network in sniff hint").

Usage::

    python scripts/hint_agreement.py --players 2 --positions 60 --budget 500 \\
        --reference-budget 8000 --seed 1

Positions: the decisions with two or more legal moves of traced games of ``learned``
against ``blocker`` (2 and 3 players) or ``partner`` (4), spread evenly over the games.
Each position is analysed as ``sniff hint`` analyses it (``sim.hint.estimate.analyse``):
short searches at ``--budget`` play-outs a move with ``--policy greedy`` (the default) and
``--policy learned`` (the network plays the rounds out), and long ones at
``--reference-budget`` with each policy, on other deals (another seed). For each short
search and for the network's own pick (the move ``learned`` plays there, which the hint
lists beside the heuristics'), it prints how often its best move is the long search's
best, and its mean loss: the long search's chance to win of its best move minus that of
the move chosen (in points of chance; 0 when they agree), with a 95% interval over the
positions. The seconds are the searches' own (``Hint.seconds``), one thread.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from sim.hint.estimate import analyse
from sim.hint.position import decisions
from sim.kernels.trace import trace_games

REFERENCE_SALT = 1_000_000


def positions(players: int, seed: int, wanted: int, games: int) -> list:
    """``wanted`` decisions with a choice, spread evenly over ``games`` traced games."""
    lineup = ["learned", "partner"] if players == 4 else ["learned"] + ["blocker"] * (
        players - 1)
    events = trace_games(players, seed, lineup, games)
    found = [d.position.check() for game in range(games) for d in decisions(events, game)
             if len(d.position.legal_moves()) > 1]
    if len(found) < wanted:
        raise SystemExit(f"only {len(found)} decisions in {games} games: ask for more --games")
    step = len(found) / wanted
    return [found[int(i * step)] for i in range(wanted)]


def summary(losses: list[float]) -> tuple[float, float]:
    values = np.array(losses)
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return float(values.mean()), float(half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--reference-budget", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--out", type=Path, default=None, help="JSON of the results")
    args = parser.parse_args()
    chosen = positions(args.players, args.seed, args.positions, args.games)
    references = {"greedy": [], "learned": []}
    shorts = {"greedy": [], "learned": []}
    picks = []
    seconds = {f"{kind}:{policy}": 0.0 for kind in ("short", "long")
               for policy in ("greedy", "learned")}
    for index, position in enumerate(chosen):
        for policy in ("greedy", "learned"):
            short = analyse(position, args.budget, policy, seed=index)
            long = analyse(position, args.reference_budget, policy,
                           seed=REFERENCE_SALT + index)
            shorts[policy].append(short)
            references[policy].append(long)
            seconds[f"short:{policy}"] += short.seconds
            seconds[f"long:{policy}"] += long.seconds
        picks.append(shorts["greedy"][-1].heuristics["learned"])
        print(f"\r{index + 1}/{len(chosen)} positions", end="", flush=True)
    print()
    rows = []
    for reference_policy, longs in references.items():
        contenders = {f"hint, {args.budget} play-outs, policy {p}": [s.best.move for s in shorts[p]]
                      for p in ("greedy", "learned")}
        contenders["learned's own pick (one ply)"] = picks
        for name, moves in contenders.items():
            agree = [long.best.move == move for long, move in zip(longs, moves)]
            losses = [100 * (long.best.win.mean - long.value_of(move).win.mean)
                      for long, move in zip(longs, moves)]
            loss, half = summary(losses)
            rows.append({"reference": f"{args.reference_budget} play-outs, policy "
                                      f"{reference_policy}", "contender": name,
                         "agree": float(np.mean(agree)), "loss": loss, "loss_half": half})
    print(f"{args.players} players, {len(chosen)} positions (seed {args.seed})")
    for row in rows:
        print(f"  against {row['reference']}: {row['contender']:<40} agrees "
              f"{row['agree']:.0%}, loss {row['loss']:.2f} ± {row['loss_half']:.2f} points")
    per = {key: value / len(chosen) for key, value in seconds.items()}
    print("  seconds per position: " + ", ".join(f"{k} {v:.2f}" for k, v in per.items()))
    if args.out:
        args.out.write_text(json.dumps({"players": args.players, "positions": len(chosen),
                                        "rows": rows, "seconds": per}, indent=2) + "\n")


if __name__ == "__main__":
    main()
