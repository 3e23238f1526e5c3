"""The ceiling, measured: how much faster can 4-player greedy games be played than the engine?

Its figures feed docs/speed.md (the ceiling).

Prototypes of the full rules (deal, lead, count and scoring, drawing, passing, domino and
blocked rounds, settlement, the target, the round cap) with greedy on every seat, written for
raw speed, played on the same deals as the engine (the same ``sim.core.rng`` streams, the same
shuffle) and checked to give the SAME games: every game's first leader, winner, rounds,
placements, draws, decisions and final scores must equal ``sim.kernels.runner.play_batch``'s.
Greedy draws no random numbers, so equality is exact, not statistical.

Contenders, on one numba thread, timed interleaved in rotating order, medians of the
per-repetition ratios to the engine (process CPU time and wall time):

- ``engine``: ``sim.kernels.runner.play_batch`` in the batches ``simulate`` uses (as ``sniff
bench``).
- ``kernel``: the engine's compiled batch alone, one call (no Python side, no round gather).
- ``proto-engine-like``: one loop behind the engine's strategy interface: legal moves written
  to a buffer, an observation filled per decision, the seat's strategy picked by id (greedy
  or random) and called, the buffer cleared; lacks, played tiles and strategy streams kept
  in a state array; a round row per round; the player count a run-time value.
- then, one element dropped at a time: ``proto-specialised`` (4 players and greedy fixed at
  compile time), ``proto-no-state``, ``proto-no-rows``, ``proto-no-obs``, and ``proto-bits``
  (no moves buffer: greedy reads the legal-move bit words directly, scalar state).
- ``proto-tight``: ``proto-bits`` with each move's count as one table read (the arm's new
  share) instead of a whole placement.
- ``proto-dense``: branch-free search of all 4 x 28 (arm, tile) slots, masked by legality:
  what a game costs where SIMD lanes must all run the same steps.
- ``lockstep``: 64 games per thread stepped together, one turn of each per step, state in
  structure-of-arrays form; a finished game's lane takes the next game.
- ``deal-only``: just the shuffles and leader draws of the same rounds.

    python scripts/ceiling.py                      # 8,192 games, 25 repetitions
    python scripts/ceiling.py --games 20000 --repeats 7 --check 20000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np
from ceiling_lockstep import deal_only, lockstep
from ceiling_loops import CHECKED, make_player

from sim.core import engine
from sim.core.buffers import Dispatch, Games, Tables
from sim.core.rng import seed_word
from sim.core.tiles import N_TILES
from sim.kernels.runner import BLOCK_SIZE, compile_lineup, lineup_of, play_batch
from strategies import parse_spec

# --- the engine, as the bench measures it


def engine_runner():
    from sim.run.chunks import batch_games

    lineup = lineup_of(4, [parse_spec("greedy")] * 4)
    batch = batch_games(1)

    def run(seed, game_ids, round_cap):
        return np.concatenate([
            play_batch(lineup, seed, game_ids[first:first + batch], round_cap=round_cap).games
            for first in range(0, game_ids.shape[0], batch)
        ])

    kernel, functions, params, seat_index = compile_lineup(lineup)
    slots: dict = {}

    def run_kernel(seed, game_ids, round_cap):
        n = game_ids.shape[0]
        games = np.zeros((n, engine.GAME_FIELDS), dtype=np.int64)
        specs = np.zeros((n, engine.MAX_PLAYERS), dtype=np.int64)
        specs[:, :4] = seat_index
        kernel.play_batch(
            Games(seed_word(seed), game_ids, game_ids, np.full(n, -1, np.int64), round_cap),
            Dispatch(4, specs, functions, params),
            Tables(games, slots.setdefault(n, np.zeros((n, 12, engine.ROUND_FIELDS), np.int32))),
            BLOCK_SIZE,
        )
        return games

    return run, run_kernel


def contenders() -> dict:
    run, run_kernel = engine_runner()
    found = {"engine": run, "kernel": run_kernel}
    for name, flags in (
        ("proto-engine-like", (True, True, True, True, True, 0)),
        ("proto-specialised", (False, True, True, True, True, 0)),
        ("proto-no-state", (False, False, True, True, True, 0)),
        ("proto-no-rows", (False, False, False, True, True, 0)),
        ("proto-no-obs", (False, False, False, False, True, 0)),
        ("proto-bits", (False, False, False, False, False, 0)),
        ("proto-tight", (False, False, False, False, False, 1)),
        ("proto-dense", (False, False, False, False, False, 2)),
    ):
        found[name] = make_player(*flags)
    found["lockstep"] = lockstep
    return found


def check(found: dict, games: int, seed: int, round_cap: int) -> None:
    ids = np.arange(games, dtype=np.int64)
    reference = found["engine"](seed, ids, round_cap)
    columns = list(CHECKED.values())
    for name, run in found.items():
        result = run(seed, ids, round_cap)
        bad = np.flatnonzero((result[:, columns] != reference[:, columns]).any(axis=1))
        if bad.size:
            raise SystemExit(f"{name}: game {int(bad[0])} differs from the engine: "
                             f"{result[bad[0], columns]} vs {reference[bad[0], columns]}")
    print(f"check: {len(found) - 1} contenders x {games:,} games (seed {seed}, round cap "
          f"{round_cap}) equal the engine in {', '.join(CHECKED)}")


def measure(found: dict, games: int, repeats: int, round_cap: int) -> None:
    """Wall and process-CPU time of every contender, interleaved; ratios per repetition."""
    ids = np.arange(games, dtype=np.int64) + 10_000_000
    rows = found["engine"](1, ids, round_cap)
    counts = rows[:, engine.GAME_ROUNDS].copy()
    rounds = int(counts.sum())
    deck, hands = np.zeros(N_TILES, np.int64), np.zeros(4, np.int64)
    timed = dict(found)
    timed["deal-only"] = lambda s, i, c: deal_only(seed_word(s), i, counts, deck, hands)
    for run in timed.values():
        run(1, ids[:500], round_cap)  # compiled and warm
    wall: dict = {name: [] for name in timed}
    cpu: dict = {name: [] for name in timed}
    names = list(timed)
    for repeat in range(repeats):
        # Interleaved, and each repetition starts one contender later (no fixed position).
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            run = timed[name]
            start, start_cpu = time.perf_counter(), time.process_time()
            run(1, ids, round_cap)
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    per_round = {key: rows[:, column].sum() / rounds for key, column in (
        ("placements", engine.GAME_PLACEMENTS), ("draws", engine.GAME_DRAWS),
        ("decisions", engine.GAME_DECISIONS))}
    print(f"\n{games:,} games, {rounds:,} rounds ({rounds / games:.2f} a game; per round "
          + ", ".join(f"{v:.2f} {k}" for k, v in per_round.items())
          + f"), 4 players, greedy on every seat, 1 numba thread, {repeats} interleaved "
          "repetitions (in rotating order); ratios are taken within each repetition\n")
    print("| contender | rounds/s (wall) | ns/round (CPU) | ratio to engine, CPU (min-max) | "
          "ratio to engine, wall (min-max) |")
    print("|---|---|---|---|---|")
    for name in timed:
        ratio = {}
        for label, times in (("cpu", cpu), ("wall", wall)):
            values = [e / v for e, v in zip(times["engine"], times[name])]
            ratio[label] = (f"{statistics.median(values):.2f}x "
                            f"({min(values):.2f}-{max(values):.2f})")
        print(f"| {name} | {rounds / statistics.median(wall[name]):,.0f} | "
              f"{1e9 * statistics.median(cpu[name]) / rounds:,.0f} | {ratio['cpu']} | "
              f"{ratio['wall']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8192, help="games per timed run")
    parser.add_argument("--repeats", type=int, default=25, help="interleaved repetitions")
    parser.add_argument("--check", type=int, default=10_000,
                        help="games compared with the engine (0: skip)")
    parser.add_argument("--round-cap", type=int, default=200)
    args = parser.parse_args()
    numba.set_num_threads(1)
    found = contenders()
    if args.check:
        check(found, args.check, 7, args.round_cap)
        check(found, min(args.check, 2000), 11, 2)  # round cap reached: unfinished games
    measure(found, args.games, args.repeats, args.round_cap)


if __name__ == "__main__":
    main()
