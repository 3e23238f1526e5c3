"""Strength and cost of ``learned``: the strength–cost table of docs/learned.md.

Usage::

    python benchmarks/learned_bench.py [--players 2 --players 4] [--games 4000]
                                    [--expert-games 400] [--seed 1] [--model-2 PATH ...]
                                    [--json results/learned-bench.json]

Per player count, on duplicate deals with the seats rotating (2 and 4 players: game g
plays deal g // 2 with rotation g % players, the sides swapped within a deal, as ``sniff
simulate --duplicate``; 3 players: deal g // 3 in each of the 3 rotations, ``learned``
against two copies of the opponent), each row gives the first strategy's win rate with
the paired 95% interval (over deals) and the games per second of that matchup (one
batch, the threads numba is given). Rows: ``learned`` against ``partner`` and
``blocker``; ``expert`` against the strongest heuristic on the first ``--expert-games``
of the same deals, the speed reference; ``learned`` against ``expert`` head to head.
The ratio printed is learned's games/s against the strongest heuristic over expert's on
the same deals. All strategies play in one kernel (compiled once).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import strategies
from sim.kernels.runner import lineup_of, play_batch, winning_side
from sim.stats.intervals import mean_interval


def strongest(players: int) -> str:
    return "partner" if players == 4 else "blocker"


def match(players: int, first: str, second: str, games: int, seed: int) -> dict:
    """``first``'s duplicate-deal win rate against ``second`` and the games per second."""
    copies = players if players == 3 else 2
    games -= games % copies
    names = [first, second, second] if players == 3 else [first, second]
    lineup = lineup_of(players, [strategies.parse_spec(name) for name in names])
    ids = np.arange(games, dtype=np.int64)
    play_batch(lineup, seed, ids[:copies], deal_ids=ids[:copies] // copies,
               rotations=ids[:copies] % players)  # compile first
    started = time.perf_counter()
    result = play_batch(lineup, seed, ids, deal_ids=ids // copies, rotations=ids % players)
    seconds = time.perf_counter() - started
    won = (winning_side(result, players) == 0).astype(float)
    rate, low, high = mean_interval(won.reshape(-1, copies).mean(axis=1))  # over deals
    return {"players": players, "first": first, "second": second, "games": games,
            "wins": int(won.sum()), "rate": rate, "low": low, "high": high,
            "seconds": seconds, "games_per_second": games / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, action="append", choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=4000, help="games of the heuristic rows")
    parser.add_argument("--expert-games", type=int, default=400,
                        help="games of the rows with expert")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--learned", default="learned",
                        help="the learned player to measure (e.g. learned:model=PATH)")
    parser.add_argument("--no-expert", action="store_true", help="skip the expert rows")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    threads = os.environ.get("NUMBA_NUM_THREADS", str(os.cpu_count()))
    print("| players | A | B | games | A wins | 95% paired | games/s |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for players in args.players or [2, 4]:
        pairs = [(args.learned, "partner", args.games), (args.learned, "blocker", args.games)]
        if not args.no_expert:
            pairs += [("expert", strongest(players), args.expert_games),
                      (args.learned, "expert", args.expert_games)]
        for first, second, games in pairs:
            row = match(players, first, second, games, args.seed)
            rows.append(row)
            print(f"| {players} | `{first}` | `{second}` | {row['games']:,} | {row['rate']:.1%} "
                  f"| [{row['low']:.1%}, {row['high']:.1%}] | {row['games_per_second']:,.0f} |",
                  flush=True)
        if not args.no_expert:
            fast = next(r for r in rows if r["players"] == players and r["first"] == args.learned
                        and r["second"] == strongest(players))
            slow = next(r for r in rows if r["players"] == players and r["first"] == "expert")
            ratio = fast["games_per_second"] / slow["games_per_second"]
            print(f"|  | {players} players: learned plays {ratio:,.0f}x as many games/s as "
                  f"expert against {strongest(players)} |  |  |  |  |  |", flush=True)
    machine = f"{os.cpu_count()} cores ({platform.processor() or platform.machine()})"
    print(f"\nseed {args.seed}; numba threads {threads}; {machine}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "threads": threads, "machine": machine,
                                         "seed": args.seed}, indent=2) + "\n")


if __name__ == "__main__":
    main()
