"""Benchmark of the engine as an environment (issue #50's targets), in one run.

Rows:
- ``batch``: a ``GameBatch`` of 4,096 games, 4 players, lineup position 0 played in Python
  by a NumPy random masked policy (a uniform legal move per waiting game, whole batch at
  once), the three others by ``greedy`` in the engine: outside decisions per second and
  games finished per second.
- ``simulate``: ``sniff simulate --no-rounds`` with four ``greedy`` (games/s), in the same
  run, and the batch's games/s as a fraction of it.

Usage: ``python scripts/env_bench.py [--games 4096] [--simulate-games 200000] [--repeats 3]
[--out results/env_bench.json]``; prints a Markdown table (docs/speed.md, "The batch").
Further rows (PettingZoo, OpenSpiel) are functions returning a dict, added to ``ROWS``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from sim.kernels.batch import OUTSIDE, GameBatch


def random_masked_policy(rng: np.random.Generator):
    """A uniform legal move for every waiting game at once (no per-game Python loop)."""

    def policy(decisions) -> np.ndarray:
        pick = (rng.random(len(decisions)) * decisions.n_moves).astype(np.int64)
        return decisions.moves[np.arange(len(decisions)), pick]

    return policy


def batch_row(games: int, repeats: int) -> dict:
    """Outside decisions and finished games per second through a ``GameBatch``."""
    GameBatch(4, [OUTSIDE, "greedy", "greedy", "greedy"], 64, 0)  # compile or load first
    times, decisions = [], 0
    for repeat in range(repeats):
        policy = random_masked_policy(np.random.default_rng(repeat))
        start = time.perf_counter()
        batch = GameBatch(4, [OUTSIDE, "greedy", "greedy", "greedy"], games, repeat)
        decisions = 0
        while not batch.done:
            pending = batch.pending()
            decisions += len(pending)
            batch.advance(policy(pending))
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"row": "batch", "games": games, "seconds": seconds,
            "decisions": decisions, "decisions_per_s": decisions / seconds,
            "games_per_s": games / seconds}


def simulate_row(games: int, repeats: int) -> dict:
    """``sniff simulate --no-rounds``, four greedy, whole run (Parquet included)."""
    from sim.run.simulation import simulate

    times = []
    with tempfile.TemporaryDirectory() as folder:
        simulate(4, "greedy,greedy", 1000, 0, rounds=False, out=f"{folder}/warm")
        for repeat in range(repeats):
            start = time.perf_counter()
            simulate(4, "greedy,greedy", games, repeat, rounds=False, out=f"{folder}/r{repeat}")
            times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"row": "simulate", "games": games, "seconds": seconds, "games_per_s": games / seconds}


ROWS = {"batch": batch_row, "simulate": simulate_row}


def table(rows: list[dict]) -> str:
    by_name = {row["row"]: row for row in rows}
    lines = ["| measure | games | seconds | rate |", "|---|---:|---:|---|"]
    if "batch" in by_name:
        b = by_name["batch"]
        lines.append(f"| batch: outside decisions | {b['games']:,} | {b['seconds']:.2f} | "
                     f"{b['decisions_per_s']:,.0f} decisions/s |")
        lines.append(f"| batch: games finished | {b['games']:,} | {b['seconds']:.2f} | "
                     f"{b['games_per_s']:,.0f} games/s |")
    if "simulate" in by_name:
        s = by_name["simulate"]
        lines.append(f"| `simulate --no-rounds`, 4 greedy | {s['games']:,} | "
                     f"{s['seconds']:.2f} | {s['games_per_s']:,.0f} games/s |")
    if "batch" in by_name and "simulate" in by_name:
        ratio = by_name["batch"]["games_per_s"] / by_name["simulate"]["games_per_s"]
        lines.append(f"| batch games/s over simulate's | | | {ratio:.2f}x |")
    for row in rows:
        if row["row"] not in ("batch", "simulate") and "text" in row:
            lines.append(row["text"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4096)
    parser.add_argument("--simulate-games", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows to run")
    parser.add_argument("--out", type=Path, default=Path("results/env_bench.json"))
    args = parser.parse_args(argv)
    rows = []
    for name in args.rows.split(","):
        games = args.simulate_games if name == "simulate" else args.games
        rows.append(ROWS[name](games, args.repeats))
    report = {"threads": numba.get_num_threads(), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"threads: {report['threads']}")
    print(table(rows))


if __name__ == "__main__":
    sys.exit(main())
