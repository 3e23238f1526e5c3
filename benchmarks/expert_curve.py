"""The strength-cost curve of ``expert``: win rate against the best heuristic, time per move.

Its figures feed docs/expert.md (the strength-cost curves).

Usage::

    python benchmarks/expert_curve.py [--budgets 32,128,384] [--games 4000] [--append]
        [--seed 1] [--extra rollout:samples=512] [--out results/expert-curve]
        [--chart docs/img/expert-curve.png]

For every budget it plays ``expert:budget=B`` against ``blocker`` with 2 players and
against ``partner`` with 4 (the strongest heuristics at those counts), ``--games`` games
each on duplicate deals (each deal twice, sides swapped; seats rotating), and gives the
win rate with two 95% intervals: Wilson's over games, and the paired one over deals
(the per-deal mean of the two games), which removes the luck of the deal.

Time per decision is measured apart from the games, on one thread: decisions are taken
from traced games of the opponent heuristic against itself (every position where a
strategy is asked, the same positions for every budget), and the expert's compiled
``choose`` is called on each in a compiled loop. So the time is the expert's alone (no
opponent, engine or Python), and games may use every core for the win rates. The figure
is the calling thread's CPU time (``time.thread_time``), which the other jobs of a shared
machine do not inflate; the wall time is written beside it. ``--extra``
adds other strategies (a rollout, an expert variant) measured the same way.

Writes ``curve.csv`` and ``curve.json`` under ``--out`` and the chart to ``--chart``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import strategies
from sim.core import engine
from sim.core import observation as view
from sim.core.layout import legal_moves, tile_moves
from sim.kernels.runner import lineup_of, play_batch, trace_events, winning_side
from sim.kernels.trace import placements_from_events
from sim.stats.intervals import Z95, mean_interval, wilson_interval

OPPONENT = {2: "blocker", 4: "partner"}
TARGET = {2: 0.80, 4: 0.68}  # expert's targets (docs/expert.md), drawn as dashed lines


def duplicate_wins(players: int, first: str, second: str, games: int, seed: int) -> np.ndarray:
    """1.0 for each game ``first`` won against ``second`` on duplicate deals, seats rotating.

    Game ``g`` has deal ``g // 2`` and rotation ``g % players``, as ``sniff simulate
    --duplicate``: the two games of a deal have the sides swapped (an even number of
    games is played).
    """
    games -= games % 2
    lineup = lineup_of(players, strategies.parse_lineup_text(f"{first},{second}"))
    game_ids = np.arange(games, dtype=np.int64)
    result = play_batch(lineup, seed, game_ids, deal_ids=game_ids // 2,
                        rotations=game_ids % players)
    return (winning_side(result, players) == 0).astype(float)


def paired_interval(per_game: np.ndarray) -> tuple[float, float]:
    """95% interval of the mean of ``per_game`` (wins, or differences of wins) over the
    deals of duplicate games: the two games of a deal are averaged first, since their
    outcomes are correlated."""
    _, low, high = mean_interval(per_game.reshape(-1, 2).mean(axis=1))
    return low, high


def duplicate_win_rate(players: int, first: str, second: str, games: int, seed: int) -> dict:
    """``first``'s win rate against ``second`` (:func:`duplicate_wins`), with its Wilson
    and paired (over deals) 95% intervals."""
    won = duplicate_wins(players, first, second, games, seed)
    games = won.size
    low, high = wilson_interval(int(won.sum()), games, Z95)
    paired_low, paired_high = paired_interval(won)
    return {"players": players, "strategy": first, "opponent": second, "games": games,
            "wins": int(won.sum()), "rate": float(won.mean()), "wilson_low": low,
            "wilson_high": high, "paired_low": paired_low, "paired_high": paired_high}


def positions(
    players: int, games: int, seed: int, text: str | None = None,
    seats: tuple[int, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations, moves and move counts of every asked decision in traced games.

    The games are the opponent heuristic against itself unless ``text`` gives the lineup;
    ``seats``, when given, keeps the decisions of those seats only. The engine state is
    rebuilt from each game's trace (``sim.kernels.trace.placements_from_events``) and the seat's
    view is copied out as the engine does.
    """
    text = text or f"{OPPONENT[players]},{OPPONENT[players]}"
    lineup = lineup_of(players, strategies.parse_lineup_text(text))
    observations, move_rows, counts = [], [], []
    for game_id in range(games):
        rows, _ = trace_events(lineup, seed, game_id)
        for state, seat, forced, move in placements_from_events(rows, players):
            if seats is not None and seat not in seats:
                continue
            moves = np.zeros(engine.MAX_MOVES, dtype=np.int64)
            layout = int(state[engine.LAYOUT])
            n_moves = (tile_moves(layout, move >> 2, moves) if forced
                       else legal_moves(layout, int(state[engine.HANDS + seat]), moves))
            if n_moves > 1:
                observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
                engine.fill_observation(state, seat, int(forced), observation)
                observations.append(observation)
                move_rows.append(moves)
                counts.append(n_moves)
    return np.array(observations), np.array(move_rows), np.array(counts, dtype=np.int64)


def make_timer(choose):
    """A compiled loop calling ``choose`` on every position (one thread, no Python)."""

    @njit(_nrt=True)
    def run_all(observations, moves, counts, params, seed):
        rng = np.zeros(1, dtype=np.uint64)
        checksum = 0
        for index in range(observations.shape[0]):
            rng[0] = np.uint64(seed + index)
            checksum += choose(observations[index], moves[index], counts[index], params, rng)
        return checksum

    return run_all


_timers: dict = {}


def seconds_per_decision(
    label: str, data: tuple[np.ndarray, ...], repeats: int = 3
) -> tuple[float, float]:
    """Mean CPU and wall time of one decision of ``label`` on one thread (best of repeats).

    The CPU time of the calling thread is the figure to compare: on a machine shared with
    other jobs the wall time also counts the time the thread waited for a core.
    """
    spec = strategies.parse_spec(label)
    strategy = spec.strategy
    choose = getattr(sys.modules[strategy.module], strategy.attribute)
    if strategy.name not in _timers:
        _timers[strategy.name] = make_timer(choose)
    timer = _timers[strategy.name]
    params = np.zeros(strategies.MAX_PARAMS)
    params[: len(spec.values)] = spec.values
    timer(data[0][:2], data[1][:2], data[2][:2], params, 0)  # compile outside the clock
    cpu = wall = np.inf
    for repeat in range(repeats):
        started, started_cpu = time.perf_counter(), time.thread_time()
        timer(*data, params, repeat)
        cpu = min(cpu, time.thread_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started)
    return cpu / data[0].shape[0], wall / data[0].shape[0]


def chart(rows: list[dict], path: Path, machine: str) -> None:
    """Win rate (paired 95% interval) against ms per decision, one line per player count."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 4.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for players, colour in ((2, "tab:blue"), (4, "tab:orange")):
        for family, marker, style in (("expert", "o", "-"), ("other", "s", "none")):
            points = [r for r in rows if r["players"] == players
                      and (r["strategy"].startswith("expert")) == (family == "expert")]
            if not points:
                continue
            x = [r["ms_per_decision"] for r in points]
            y = [100 * r["rate"] for r in points]
            error = [[100 * (r["rate"] - r["paired_low"]) for r in points],
                     [100 * (r["paired_high"] - r["rate"]) for r in points]]
            axes.errorbar(x, y, yerr=error, marker=marker, linestyle=style, color=colour,
                          capsize=3, label=f"{family}, {players} players vs "
                                           f"{OPPONENT[players]}")
            for r in points:
                name = r["strategy"].replace("expert:", "").replace("budget=", "")
                axes.annotate(name, (r["ms_per_decision"], 100 * r["rate"]), fontsize=7,
                              xytext=(4, -10), textcoords="offset points")
    for players, colour in ((2, "tab:blue"), (4, "tab:orange")):
        if any(r["players"] == players for r in rows):  # the target, dashed
            axes.axhline(100 * TARGET[players], color=colour, linewidth=0.8, linestyle="--")
    axes.set_xscale("log")
    axes.axvline(1.0, color="grey", linewidth=0.8, linestyle=":")
    axes.set_xlabel("ms per decision (one thread)")
    axes.set_ylabel("win rate, % (paired 95% interval)")
    axes.set_title("expert: strength against cost", fontsize=10)
    axes.legend(fontsize=7, loc="lower right")
    figure.text(0.01, 0.01, machine, fontsize=6, color="grey")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)


def save(out: Path, rows: list[dict], meta: dict) -> None:
    """The rows so far as CSV and JSON (rewritten after every row: a long run keeps them)."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out / "curve.csv", index=False)
    (out / "curve.json").write_text(json.dumps({**meta, "rows": rows}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="32,128,384",
                        help="expert's budgets, comma-separated ('' for none: --extra only)")
    parser.add_argument("--games", type=int, default=4000, help="games per point (even)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", default="2,4")
    parser.add_argument("--extra", action="append", default=[], metavar="STRATEGY",
                        help="another strategy to measure the same way (repeatable)")
    parser.add_argument("--timing-games", type=int, default=20,
                        help="traced games whose decisions are timed")
    parser.add_argument("--out", type=Path, default=Path("results/expert-curve"))
    parser.add_argument("--chart", type=Path, default=Path("docs/img/expert-curve.png"))
    parser.add_argument("--append", action="store_true",
                        help="add the rows to those already in --out (another budget range "
                             "or game count) and chart them all")
    parser.add_argument("--time-only", metavar="STRATEGIES",
                        help="only time these comma-separated strategies (no games), e.g. "
                             "for a ladder's time column")
    args = parser.parse_args()
    if args.time_only:
        for players in (int(p) for p in args.players.split(",")):
            data = positions(players, args.timing_games, args.seed + 1000)
            for label in (s.label for s in strategies.parse_lineup_text(args.time_only)):
                cpu, wall = seconds_per_decision(label, data)
                print(f"{players} players  {label:24s} {1000 * cpu:9.4f} ms CPU "
                      f"{1000 * wall:9.4f} ms wall per decision ({data[0].shape[0]} decisions)",
                      flush=True)
        return
    machine = (f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
               f"python {platform.python_version()}")
    labels = [f"expert:budget={b}" for b in args.budgets.split(",") if b] + args.extra
    rows = []
    if args.append and (args.out / "curve.json").exists():
        rows = json.loads((args.out / "curve.json").read_text())["rows"]
    commands = [" ".join(sys.argv)]
    if args.append and (args.out / "curve.json").exists():
        commands = json.loads((args.out / "curve.json").read_text())["commands"] + commands
    started = time.perf_counter()
    for players in (int(p) for p in args.players.split(",")):
        data = positions(players, args.timing_games, args.seed + 1000)
        for label in labels:
            row = duplicate_win_rate(players, label, OPPONENT[players], args.games, args.seed)
            cpu, wall = seconds_per_decision(label, data)
            row["ms_per_decision"], row["wall_ms_per_decision"] = 1000 * cpu, 1000 * wall
            row["timed_decisions"] = int(data[0].shape[0])
            rows.append(row)
            save(args.out, rows, {"commands": commands, "machine": machine})
            print(f"{players}p {label:32s} {row['rate']:.1%} "
                  f"[{row['paired_low']:.1%}, {row['paired_high']:.1%}] "
                  f"{row['ms_per_decision']:.3f} ms/decision", flush=True)
    chart(rows, args.chart, machine)
    print(f"wrote {args.out}/curve.csv, curve.json and {args.chart} "
          f"in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
