"""Head-to-head win rates of the built-in strategies, as the Markdown table in docs/strategies.md.

Usage::

    python benchmarks/headtohead.py [--games 4000] [--rollout-games 1000] [--seed 1]
                                 [--pair A/B ...] [--players 2 --players 4]

Each row plays ``A`` against ``B`` (with 4 players, A partners A against B partnering B),
seats rotating game by game so both sides sit everywhere equally often, and gives A's win
rate with its 99% Wilson interval. Rows with a ``rollout`` side play ``--rollout-games``
games (rollout is a few thousand times slower per decision). Fixed seed, fixed game ids:
the same command prints the same table on any machine and any number of threads.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import strategies
from sim.kernels.runner import lineup_of, play_batch, winning_side
from sim.run.plan import rotation_for
from sim.stats.intervals import Z99, wilson_interval

HEURISTICS = ("greedy", "heavy", "defensive", "blocker", "partner", "weighted", "rollout")
DEFAULT_PAIRS = (
    [f"{name}/random" for name in HEURISTICS]
    + [f"{name}/greedy" for name in HEURISTICS[1:]]
    + ["rollout/blocker", "rollout/weighted", "rollout:samples=128/greedy",
       "rollout:samples=128/blocker"]
)


def head_to_head(
    players: int, first: str, second: str, games: int, seed: int
) -> tuple[int, float, float, float]:
    """``(wins of first, rate, 99% low, 99% high)`` over ``games`` rotated games.

    With 3 players ``first`` plays against two copies of ``second`` (parity is 1/3).
    """
    names = [first, second, second] if players == 3 else [first, second]
    lineup = lineup_of(players, [strategies.parse_spec(name) for name in names])
    game_ids = np.arange(games, dtype=np.int64)
    result = play_batch(
        lineup, seed, game_ids, rotations=rotation_for(game_ids, players),
    )
    wins = int((winning_side(result, players) == 0).sum())
    low, high = wilson_interval(wins, games, Z99)
    return wins, wins / games, low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=4000, help="games per row")
    parser.add_argument("--rollout-games", type=int, default=1000,
                        help="games per row with a rollout side")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pair", action="append", metavar="A/B",
                        help="a row to play (repeatable); default: the rows of docs/strategies.md")
    parser.add_argument("--players", type=int, action="append", choices=(2, 3, 4),
                        help="player counts (repeatable; 3 players: A against two B)")
    args = parser.parse_args()
    pairs = args.pair or DEFAULT_PAIRS
    player_counts = args.players or [2, 4]
    print("| A | B | players | games | A wins | 99% interval |")
    print("|---|---|---|---|---|---|")
    started = time.perf_counter()
    for pair in pairs:
        first, _, second = pair.partition("/")
        for players in player_counts:
            games = args.rollout_games if "rollout" in pair else args.games
            wins, rate, low, high = head_to_head(players, first, second, games, args.seed)
            print(f"| `{first}` | `{second}` | {players} | {games} | {rate:.1%} "
                  f"| [{low:.1%}, {high:.1%}] |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s on {os.cpu_count()} cores "
          f"({platform.processor() or platform.machine()}), seed {args.seed}")


if __name__ == "__main__":
    main()
