"""Throughput measurements: the compiled engine, the strategies, the plain-Python model,
``simulate`` end to end, compile times and peak memory.

Ratios are measured within one run, side by side, and every figure is the median of several
repetitions taken after compilation. Run it on a quiet machine: other processes on the
same cores lower every figure.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numba
import numpy as np

from sim.checks.shape import MAX_GAMES
from sim.children import child_env
from sim.core import engine
from sim.core.seating import PLAYER_COUNTS
from sim.errors import SettingError, SniffError
from sim.kernels.runner import lineup_of, play_batch
from strategies import available, parse_spec

__all__ = ["engine_rate", "run", "table"]

T = TypeVar("T")


def _median_time(run: Callable[[], T], repeats: int) -> tuple[float, T]:
    """The median seconds of ``repeats`` calls of ``run`` (at least one), and what the last
    returned."""
    times = []
    while True:
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
        if len(times) >= repeats:
            return statistics.median(times), result


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        # numba.config sets its settings when imported, out of the type checker's sight
        "numba_threads": numba.config.NUMBA_NUM_THREADS,  # type: ignore[attr-defined]
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
    }


def engine_rate(players: int, strategy: str, threads: int, games: int, repeats: int) -> dict:
    """Rounds, games and placements per second of the engine alone (``play_batch``, in the
    batches ``simulate`` uses, every game and round row returned)."""
    from sim.run.chunks import batch_games

    lineup = lineup_of(players, [parse_spec(strategy)] * players)
    ids = np.arange(games, dtype=np.int64)
    play_batch(lineup, 0, ids[:256])
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    batch = batch_games(threads)  # the kernel calls that simulate makes

    def play() -> np.ndarray:
        return np.concatenate([
            play_batch(lineup, 1, ids[first:first + batch]).games
            for first in range(0, games, batch)
        ])

    try:
        seconds, results = _median_time(play, repeats)
    finally:
        numba.set_num_threads(previous)
    rounds = int(results[:, engine.GAME_ROUNDS].sum())
    placements = int(results[:, engine.GAME_PLACEMENTS].sum())
    decisions = int(results[:, engine.GAME_DECISIONS].sum())
    return {
        "players": players, "strategy": strategy, "threads": threads, "games": games,
        "seconds": seconds, "rounds_per_s": rounds / seconds, "games_per_s": games / seconds,
        "ns_per_placement": 1e9 * seconds / placements,
        "ns_per_decision": 1e9 * seconds / max(decisions, 1),
        "rounds_per_game": rounds / games,
    }


def python_model_rate(players: int, strategy: str, games: int) -> dict:
    """The same games in the plain-Python model (``sim.reference.python_model``)."""
    from sim.reference.python_model import play_game

    seats = [strategy] * players
    start = time.perf_counter()
    rounds = sum(play_game(players, 1, game, seats).rounds for game in range(games))
    seconds = time.perf_counter() - start
    return {"players": players, "strategy": strategy, "games": games, "seconds": seconds,
            "rounds_per_s": rounds / seconds}


def compile_times(wait_s: float = 1800) -> dict:
    """Start-up of ``sniff simulate`` on a machine with an empty cache, as a user meets it.

    The first run (the default lineup) compiles the game loop's ``play_batch`` and its two
    strategies and starts the background compile of the rest; then the same run again
    (warm); then, once the background compile is done, a lineup never run before
    (``blocker,partner``). ``background_s`` is from the first run's start until the
    background compile is done.
    """
    from sim.kernels import shared

    def simulate(out: str, *options: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-P", "-m", "sim.cli", "simulate", "--games", "2000",
                        "--quiet", "--out", out, *options], env=env, check=True,
                       capture_output=True)
        return time.perf_counter() - start

    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = child_env(dict(os.environ, SNIFF_CACHE_DIR=cache, SNIFF_PRECOMPILE="1"))
        started = time.perf_counter()
        cold = simulate(f"{out}/cold")
        warm = simulate(f"{out}/warm")
        previous = os.environ.get("SNIFF_CACHE_DIR")
        os.environ["SNIFF_CACHE_DIR"] = cache
        try:
            while not shared.done_marker().exists():
                if time.perf_counter() - started > wait_s or shared.failed_marker().exists():
                    return {"cold_s": cold, "warm_s": warm}
                time.sleep(1)
        finally:
            if previous is None:
                del os.environ["SNIFF_CACHE_DIR"]
            else:
                os.environ["SNIFF_CACHE_DIR"] = previous
        background = time.perf_counter() - started
        new_lineup = simulate(f"{out}/new", "--strategies", "blocker,partner")
    return {"cold_s": cold, "warm_s": warm, "background_s": background,
            "new_lineup_s": new_lineup}


# VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over from the forking parent
# (here the bench itself, with every kernel and array it loaded) across exec.
PEAK_RSS = """
import resource, sys
from sim.cli.main import main
try:
    main(sys.argv[1:], prog_name="sniff")
except SystemExit as done:
    if done.code:
        raise
try:
    with open("/proc/self/status") as status:
        print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")))
except OSError:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_memory(games: int) -> dict:
    """Peak resident memory of one ``sniff simulate`` of ``games`` games, in its own process.

    A small run first makes sure the kernel is cached: compiling it (LLVM) peaks near 2 GiB
    once, which says nothing about how memory grows with the number of games.
    """
    with tempfile.TemporaryDirectory() as out:
        try:
            subprocess.run(
                [sys.executable, "-m", "sim.cli", "simulate", "--games", "1000", "--quiet",
                 "--out", f"{out}/warm"],
                check=True, capture_output=True, env=child_env(),
            )
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", PEAK_RSS, "simulate", "--games", str(games),
                 "--quiet", "--out", f"{out}/run"],
                check=True, capture_output=True, text=True, env=child_env(),
            )
        except subprocess.CalledProcessError as error:  # its own line, not a traceback
            said = (error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes)
                    else error.stderr or "").strip().splitlines()
            raise SniffError(f"the peak-memory run of {games:,} games failed (exit "
                             f"{error.returncode}): {said[-1] if said else 'no message'}"
                             ) from None
        seconds = time.perf_counter() - start
    peak_kib = int(done.stdout.strip().splitlines()[-1])
    return {"games": games, "peak_rss_mib": peak_kib / 1024, "seconds": seconds}


def simulate_ratio(games: int, repeats: int) -> dict:
    """``simulate`` (chunks, tables, Parquet, summary) against the engine alone, same games:
    4 players, greedy on every seat, all threads; with both tables and with ``--no-rounds``.

    The three are timed in turn within each repetition (the order rotating), so a slow
    spell of a shared machine falls on all of them; each ratio is the engine's median time
    over the run's.
    """
    from sim.run.chunks import batch_games
    from sim.run.plan import rotation_for
    from sim.run.simulation import simulate

    lineup = lineup_of(4, [parse_spec("greedy")] * 4)
    ids = np.arange(games, dtype=np.int64)
    play_batch(lineup, 0, ids[:256])
    batch = batch_games(numba.get_num_threads())  # the kernel calls simulate makes

    def engine_only() -> None:
        for first in range(0, games, batch):
            some = ids[first:first + batch]
            play_batch(lineup, 1, some, rotations=rotation_for(some, 4))

    times: dict[str, list[float]] = {"engine": [], "simulate": [], "no_rounds": []}
    with tempfile.TemporaryDirectory() as folder:
        jobs: dict[str, Callable[..., object]] = {
            "engine": engine_only,
            "simulate": lambda k: simulate(4, "greedy,greedy", games, 1,
                                           out=f"{folder}/run{k}"),
            "no_rounds": lambda k: simulate(4, "greedy,greedy", games, 1, rounds=False,
                                            out=f"{folder}/games-only{k}"),
        }
        names = list(jobs)
        for k in range(repeats):
            for name in names[k % 3:] + names[:k % 3]:
                start = time.perf_counter()
                jobs[name]() if name == "engine" else jobs[name](k)
                times[name].append(time.perf_counter() - start)
    engine_s = statistics.median(times["engine"])
    end_to_end_s = statistics.median(times["simulate"])
    no_rounds_s = statistics.median(times["no_rounds"])
    return {"games": games, "engine_s": engine_s, "end_to_end_s": end_to_end_s,
            "games_per_s": games / end_to_end_s, "ratio": engine_s / end_to_end_s,
            "no_rounds_s": no_rounds_s, "no_rounds_games_per_s": games / no_rounds_s,
            "no_rounds_ratio": engine_s / no_rounds_s}


def strategy_costs(games: int, repeats: int) -> list[dict]:
    """Time per decision with one strategy on every seat, 4 players, all threads."""
    rows = []
    for name in available():
        count = games if name not in ("rollout", "expert") else max(50, games // 200)
        row = engine_rate(4, name, numba.get_num_threads(), count, repeats)
        rows.append({"strategy": name, "ns_per_decision": row["ns_per_decision"],
                     "games": count})
    return rows


QUICK_SCALE = 0.05  # --quick: the sizes of every measurement, scaled


def run(quick: bool = False, memory_games: int = 10_000_000, out: Path | None = None) -> dict:
    """Every measurement; ``quick`` shrinks the sizes (a smoke run, not figures to publish)."""
    from sim.files import write_atomic
    from sim.kernels.shared import PRECOMPILE_ENV
    from sim.store.folders import check_output_file

    if isinstance(memory_games, bool) or not isinstance(memory_games, int) or not (
            1 <= memory_games <= MAX_GAMES):  # refused now, not after the minutes of measuring
        raise SettingError(f"{{memory_games}} must be a number of games from 1 to "
                           f"{MAX_GAMES:,}, got {memory_games!r}")
    if quick and int(memory_games * QUICK_SCALE) < 1:
        raise SettingError(f"{{memory_games}} {memory_games:,} with {{quick}} plays "
                           f"{QUICK_SCALE:g} x as many games, none: give at least "
                           f"{math.ceil(1 / QUICK_SCALE):,}")
    if out is not None:  # before the minutes of measuring: never a link, nor in a sniff folder
        out.parent.mkdir(parents=True, exist_ok=True)
        check_output_file(out, "{out}", "json")
    scale = QUICK_SCALE if quick else 1.0
    repeats = 3 if quick else 5
    # No background compile during the measurements: each strategy measured is compiled
    # (or loaded) by its warm-up, before its timing.
    os.environ[PRECOMPILE_ENV] = "0"
    threads_all = numba.get_num_threads()
    report: dict = {"machine": machine(), "quick": quick, "engine": [], "python_model": []}
    for players in PLAYER_COUNTS:
        for strategy in ("random", "greedy"):
            games = int({"random": 40_000, "greedy": 150_000}[strategy] * scale) or 1000
            for threads in sorted({1, threads_all}):
                report["engine"].append(engine_rate(players, strategy, threads, games, repeats))
            model = python_model_rate(players, strategy, max(20, int(300 * scale)))
            single = next(r for r in report["engine"] if r["players"] == players
                          and r["strategy"] == strategy and r["threads"] == 1)
            model["speedup_per_thread"] = single["rounds_per_s"] / model["rounds_per_s"]
            report["python_model"].append(model)
    report["simulate"] = simulate_ratio(int(400_000 * scale) or 1000, repeats)
    report["strategies"] = strategy_costs(int(40_000 * scale) or 1000, repeats)
    report["compile"] = compile_times()
    report["memory"] = peak_memory(int(memory_games * scale) if quick else memory_games)
    if out is not None:
        write_atomic(out, lambda temporary: temporary.write_text(json.dumps(report, indent=2)))
    return report


def table(report: dict) -> str:
    """The report as Markdown tables, as docs/speed.md publishes them."""
    lines = [
        f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} cores, "
        f"Python {report['machine']['python']}, numba {report['machine']['numba']}"
        + (" (quick run: small sizes)" if report["quick"] else ""),
        "",
        "| players | strategy | threads | rounds/s | games/s | ns/placement |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["engine"]:
        lines.append(
            f"| {row['players']} | {row['strategy']} | {row['threads']} | "
            f"{row['rounds_per_s']:,.0f} | {row['games_per_s']:,.0f} | "
            f"{row['ns_per_placement']:.0f} |"
        )
    if report["python_model"]:
        lines += ["", "| players | strategy | Python model rounds/s | engine speed-up per thread |",
                  "|---|---|---|---|"]
        for row in report["python_model"]:
            lines.append(f"| {row['players']} | {row['strategy']} | {row['rounds_per_s']:,.0f} | "
                         f"{row['speedup_per_thread']:,.0f}x |")
    lines += ["", "| strategy | ns per decision (4 players, all threads, engine included) |",
              "|---|---|"]
    for row in report["strategies"]:
        lines.append(f"| {row['strategy']} | {row['ns_per_decision']:,.0f} |")
    compile_ = report["compile"]
    memory = report["memory"]
    lines += [
        "",
        f"`sniff simulate` start-up: cold (empty cache) {compile_['cold_s']:.1f} s, "
        f"warm {compile_['warm_s']:.1f} s"
        + (f"; background compile done {compile_['background_s']:.0f} s after the first run "
           f"started; then a new lineup (blocker,partner) {compile_['new_lineup_s']:.1f} s."
           if "background_s" in compile_ else "; the background compile was not done in time."),
        f"Peak memory of `sniff simulate --games {memory['games']:,}`: "
        f"{memory['peak_rss_mib']:,.0f} MiB ({memory['seconds']:.0f} s).",
    ]
    if "simulate" in report:
        s = report["simulate"]
        lines.append(
            f"`simulate` end to end (Parquet included): {s['games_per_s']:,.0f} games/s, "
            f"{s['ratio']:.2f} of the engine-only rate; with --no-rounds "
            f"{s['no_rounds_games_per_s']:,.0f} games/s, {s['no_rounds_ratio']:.2f}."
        )
    return "\n".join(lines)
