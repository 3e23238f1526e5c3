"""Benchmark of the engine as an environment (docs/speed.md's targets), in one run.

Rows:
- ``batch``: a ``GameBatch`` of 4,096 games, 4 players, lineup position 0 played in Python
  by a NumPy random masked policy (a uniform legal move per waiting game, whole batch at
  once), the three others by ``greedy`` in the engine: outside decisions per second and
  games finished per second, the median of ``4 x repeats`` batches played after the
  process's first ``FIRST_GAMES`` games, which are timed too (all of them, and the very
  first batch, cold).
- ``simulate``: ``sniff simulate --no-rounds`` with four ``greedy`` (games/s), in the same
  run, and the batch's games/s as a fraction of it. With both rows, the two are timed in
  alternating turns (one ``simulate`` run, then four batches).

Usage: ``python benchmarks/env_bench.py [--games 4096] [--simulate-games 200000] [--repeats 5]
[--first-games 200000] [--out results/env_bench.json]``; prints a Markdown table
(docs/speed.md, "The batch").
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

from sim.kernels.batch import GameBatch
from sim.kernels.decisions import OUTSIDE

FIRST_GAMES = 200_000  # played in batches from the process's first, before the timed ones


def random_masked_policy(rng: np.random.Generator):
    """A uniform legal move for every waiting game at once (no per-game Python loop)."""

    def policy(decisions) -> np.ndarray:
        pick = (rng.random(len(decisions)) * decisions.n_moves).astype(np.int64)
        return decisions.moves[np.arange(len(decisions)), pick]

    return policy


def _play_batch(games: int, seed: int) -> tuple[float, float, int]:
    """One batch played to the end: wall seconds, CPU seconds, outside decisions."""
    policy = random_masked_policy(np.random.default_rng(seed))
    start, cpu_start = time.perf_counter(), time.process_time()
    batch = GameBatch(4, [OUTSIDE, "greedy", "greedy", "greedy"], games, seed)
    decisions = 0
    while not batch.done:
        pending = batch.pending()
        decisions += len(pending)
        batch.advance(policy(pending))
    return time.perf_counter() - start, time.process_time() - cpu_start, decisions


def _first_batches(games: int, total: int) -> dict:
    """Compile or load the kernel, then ``total`` games in batches of ``games`` one after
    another, from the process's first: seconds in all, and of the first batch (cold).

    A process's first batches are slower than the later ones: their buffers are fresh
    memory (a page fault per 4 KiB touched, until the C allocator keeps freed blocks for
    reuse after a few batches) and the thread-sharing model (``sim.kernels.sharing``) has
    no costs yet. ``simulate``'s row pays such costs once in 200,000 games; these games,
    as many, pay them the same way. The batches timed after them are the steady rate."""
    GameBatch(4, [OUTSIDE, "greedy", "greedy", "greedy"], 64, 0)
    batches = max(1, -(-total // games))
    start = time.perf_counter()
    cold = _play_batch(games, 0)[0]
    for seed in range(1, batches):
        _play_batch(games, seed)
    seconds = time.perf_counter() - start
    return {"cold_seconds": cold, "cold_games_per_s": games / cold,
            "stream_games": batches * games, "stream_seconds": seconds,
            "stream_games_per_s": batches * games / seconds}


def _batch_result(games: int, runs: list, first: dict) -> dict:
    seconds = statistics.median(run[0] for run in runs)
    decisions = statistics.median(run[2] for run in runs)
    return {"row": "batch", "games": games, "seconds": seconds, "repeats": len(runs),
            "decisions": decisions, "decisions_per_s": decisions / seconds,
            "games_per_s": games / seconds, "cpu_seconds": statistics.median(r[1] for r in runs),
            **first}


def batch_row(games: int, repeats: int, first_games: int = FIRST_GAMES) -> dict:
    """Outside decisions and finished games per second through a ``GameBatch`` (and per
    second of the process's CPU time, steadier than the wall clock on a shared machine):
    the median of ``repeats`` batches after the process's first ``first_games`` games
    (timed too: ``_first_batches``)."""
    first = _first_batches(games, first_games)
    runs = [_play_batch(games, 1000 + repeat) for repeat in range(repeats)]
    return _batch_result(games, runs, first)


def _simulate_once(games: int, seed: int, folder: str) -> float:
    from sim.run.simulation import simulate

    start = time.perf_counter()
    simulate(4, "greedy,greedy", games, seed, rounds=False, out=f"{folder}/r{seed}")
    return time.perf_counter() - start


def _simulate_result(games: int, times: list[float]) -> dict:
    seconds = statistics.median(times)
    return {"row": "simulate", "games": games, "seconds": seconds, "games_per_s": games / seconds}


def simulate_row(games: int, repeats: int) -> dict:
    """``sniff simulate --no-rounds``, four greedy, whole run (Parquet included)."""
    with tempfile.TemporaryDirectory() as folder:
        _simulate_once(1000, 10**6, folder)  # warm-up
        times = [_simulate_once(games, repeat, folder) for repeat in range(repeats)]
    return _simulate_result(games, times)


def paired_rows(batch_games: int, simulate_games: int, repeats: int,
                first_games: int = FIRST_GAMES) -> list[dict]:
    """The batch and ``simulate`` rows in alternating turns (one ``simulate`` run, then 4
    batches, ``repeats`` times), so that a change of the machine's load during the run falls
    on both: their ratio is the one the target is about."""
    first = _first_batches(batch_games, first_games)
    runs, times = [], []
    with tempfile.TemporaryDirectory() as folder:
        _simulate_once(1000, 10**6, folder)  # warm-up
        for turn in range(repeats):
            times.append(_simulate_once(simulate_games, turn, folder))
            runs += [_play_batch(batch_games, 1000 + 4 * turn + i) for i in range(4)]
    return [_batch_result(batch_games, runs, first), _simulate_result(simulate_games, times)]


def pettingzoo_row(games: int, repeats: int) -> dict:
    """PettingZoo's own ``performance_benchmark`` (random masked steps for its fixed time, resets
    included) on one 4-player AEC game; ``games`` and ``repeats`` are not used."""
    import contextlib
    import io

    from pettingzoo.test import performance_benchmark

    from sim.env.aec import SniffAEC

    env = SniffAEC(4)
    env.reset(seed=0)
    for _ in range(50):  # compile or load first
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    printed = io.StringIO()
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(printed):
        performance_benchmark(env)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = float(next(line.split()[0] for line in printed.getvalue().splitlines()
                       if "turns per second" in line))
    per_cpu = steps * wall / cpu  # the same steps per CPU second (the run is single-threaded)
    return {"row": "pettingzoo", "steps_per_s": steps, "steps_per_cpu_s": per_cpu,
            "text": f"| PettingZoo AEC, 4 players (`performance_benchmark`) | | {wall:.1f} | "
                    f"{steps:,.0f} steps/s ({per_cpu:,.0f} per CPU second) |"}


def _random_playouts(game, cpu_seconds: float, seed: int) -> tuple[float, int, int]:
    """Random games (chance by its probabilities) for at least ``cpu_seconds`` of CPU time:
    CPU seconds, actions and playouts. CPU time, so that both games are timed alike on a
    shared machine (the playouts are single-threaded)."""
    import random

    rng = random.Random(seed)
    actions = playouts = 0
    start = time.process_time()
    while time.process_time() - start < cpu_seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            actions += 1
        playouts += 1
    return time.process_time() - start, actions, playouts


def openspiel_row(games: int, repeats: int) -> dict:
    """Random playouts through pyspiel of ``python_sniff`` (2 players) and of OpenSpiel's
    own ``python_block_dominoes``, in the same run, ``repeats`` CPU seconds of each in
    alternating half-second turns (so that a change of the machine's load falls on both):
    actions/s and playouts/s (a Sniff game runs to 250 points over many rounds, a
    block-dominoes game is one hand, so actions/s is the like-for-like rate)."""
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers it)

    import sim.env.openspiel  # noqa: F401  (registers python_sniff)

    games = {name: pyspiel.load_game(name) for name in ("python_sniff", "python_block_dominoes")}
    totals = {name: [0.0, 0, 0] for name in games}
    for game in games.values():
        _random_playouts(game, 0.1, 0)  # compile or load first
    for turn in range(2 * repeats):
        for name, game in games.items():
            for index, value in enumerate(_random_playouts(game, 0.5, 1 + turn)):
                totals[name][index] += value
    rows = {name: {"playouts": playouts, "seconds": seconds, "actions": actions,
                   "actions_per_s": actions / seconds, "playouts_per_s": playouts / seconds}
            for name, (seconds, actions, playouts) in totals.items()}
    ratio = rows["python_sniff"]["actions_per_s"] / rows["python_block_dominoes"]["actions_per_s"]
    lines = [f"| OpenSpiel `{name}`, random playouts (CPU s) | {r['playouts']:,} | "
             f"{r['seconds']:.2f} | "
             f"{r['actions_per_s']:,.0f} actions/s, {r['playouts_per_s']:,.1f} playouts/s |"
             for name, r in rows.items()]
    lines.append(f"| `python_sniff` actions/s over `python_block_dominoes`' | | | {ratio:.2f}x |")
    return {"row": "openspiel", **rows, "ratio": ratio, "text": "\n".join(lines)}


ROWS = {"batch": batch_row, "simulate": simulate_row, "pettingzoo": pettingzoo_row,
        "openspiel": openspiel_row}


def table(rows: list[dict]) -> str:
    by_name = {row["row"]: row for row in rows}
    lines = ["| measure | games | seconds | rate |", "|---|---:|---:|---|"]
    if "batch" in by_name:
        b = by_name["batch"]
        lines.append(f"| batch: outside decisions | {b['games']:,} | {b['seconds']:.3f} | "
                     f"{b['decisions_per_s']:,.0f} decisions/s "
                     f"({b['decisions'] / b['cpu_seconds']:,.0f} per CPU second) |")
        lines.append(f"| batch: games finished | {b['games']:,} | {b['seconds']:.3f} | "
                     f"{b['games_per_s']:,.0f} games/s |")
        lines.append(f"| batch: the process's first {b['stream_games']:,} games, in batches "
                     f"of {b['games']:,} | {b['stream_games']:,} | {b['stream_seconds']:.2f} | "
                     f"{b['stream_games_per_s']:,.0f} games/s |")
        lines.append(f"| batch: the process's first batch (cold) | {b['games']:,} | "
                     f"{b['cold_seconds']:.3f} | {b['cold_games_per_s']:,.0f} games/s |")
    if "simulate" in by_name:
        s = by_name["simulate"]
        lines.append(f"| `simulate --no-rounds`, 4 greedy | {s['games']:,} | "
                     f"{s['seconds']:.2f} | {s['games_per_s']:,.0f} games/s |")
    if "batch" in by_name and "simulate" in by_name:
        ratio = by_name["batch"]["games_per_s"] / by_name["simulate"]["games_per_s"]
        simulated = by_name["simulate"]["games_per_s"]
        stream = by_name["batch"]["stream_games_per_s"] / simulated
        cold = by_name["batch"]["cold_games_per_s"] / simulated
        lines.append(f"| batch games/s over simulate's | | | {ratio:.2f}x (first games: "
                     f"{stream:.2f}x, first batch: {cold:.2f}x) |")
    for row in rows:
        if row["row"] not in ("batch", "simulate") and "text" in row:
            lines.append(row["text"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4096,
                        help="games of each batch and of the other rows (default %(default)s)")
    parser.add_argument("--simulate-games", type=int, default=200_000,
                        help="games of each timed sniff simulate (default %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs of each row (the batch row: 4 times as many; "
                             "default %(default)s)")
    parser.add_argument("--first-games", type=int, default=FIRST_GAMES,
                        help="games the batch row plays before its timed batches, timed "
                             "apart (default %(default)s)")
    parser.add_argument("--rows", default=",".join(ROWS),
                        help="comma-separated rows to run (default %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("results/env_bench.json"),
                        help="the JSON report (default %(default)s)")
    args = parser.parse_args(argv)
    names = args.rows.split(",")
    unknown = [name for name in names if name not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}: choose among {', '.join(ROWS)}")
    paired = "batch" in names and "simulate" in names
    rows = (paired_rows(args.games, args.simulate_games, args.repeats, args.first_games)
            if paired else [])
    for name in names:
        if paired and name in ("batch", "simulate"):
            continue
        if name == "batch":
            rows.append(batch_row(args.games, 4 * args.repeats, args.first_games))
            continue
        games = args.simulate_games if name == "simulate" else args.games
        rows.append(ROWS[name](games, args.repeats))
    report = {"threads": numba.get_num_threads(), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"threads: {report['threads']}")
    print(table(rows))


if __name__ == "__main__":
    sys.exit(main())
