"""How the long commands scale on a Dask cluster: ``local:2`` against ``local:1``.

Why: the project asks that an openings study under ``learned`` and a tournament of
``learned``, ``partner`` and ``greedy`` run at least 1.7x as fast with ``--scheduler
local:2`` (two worker processes of one numba thread each) as with ``local:1``. Each
measurement runs in a process of its own (the command's library call, as the CLI makes it,
timed from the call to its return: starting the local cluster, warming the kernel up on
every worker, playing, writing), and the two outputs are checked to be the same (the
openings table and summary figures; the tournament's ratings and matrix), since a faster
cluster that gave other answers would be no use.

    python benchmarks/cluster_bench.py                        # the figures of docs/speed.md
    python benchmarks/cluster_bench.py --deals 400 --part-deals 50 --games-per-pair 400 \\
        --chunk-size 50                                    # a small check that it works
    python benchmarks/cluster_bench.py --workers 0 --commands tournament --players 2 \\
        --tournament-strategies greedy,random --games-per-pair 4 --chunk-size 2  # no Dask

Prints a Markdown table (docs/speed.md, "On a cluster: every command") and writes JSON to
``--out``/cluster-bench.json. The kernels are compiled (or loaded) once before timing, so
no measurement includes a compile.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from sim.children import child_env

ROOT = Path(__file__).resolve().parents[1]

OPENINGS = """
import json, sys, time
from pathlib import Path
from sim.openings.play import make_config
from sim.openings.study import check_folder, measure_openings
from sim.run.settings import RunControl
players, strategies, deals, part_deals, seed, out, scheduler = sys.argv[1:]
scheduler = None if scheduler == "none" else scheduler
config = make_config(int(players), strategies, int(deals), int(seed))
folder = Path(out)
check_folder(folder, overwrite=True)
started = time.perf_counter()
table, summary = measure_openings(config, folder,
                                  control=RunControl(scheduler=scheduler, threads=1),
                                  part_deals=int(part_deals))
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "games": summary["games"],
                  "answer": table.to_json()}))
"""

TOURNAMENT = """
import json, sys, time
from sim.run.settings import RunControl
from sim.tournament import run_tournament
players, strategies, games, chunk, seed, out, scheduler = sys.argv[1:]
scheduler = None if scheduler == "none" else scheduler
started = time.perf_counter()
result = run_tournament(int(players), strategies, int(games), int(seed), out=out,
                        chunk_size=int(chunk), control=RunControl(
                            mode="overwrite", scheduler=scheduler, threads=1))
seconds = time.perf_counter() - started
games = sum(run.summary.games for run in result.runs)
print(json.dumps({"seconds": seconds, "games": games,
                  "answer": [result.ratings.to_dict(), result.matrix.to_json()]}))
"""

WARM = """
import sys
from sim.kernels.runner import lineup_of, lineup_code
from sim.openings.play import make_config
from strategies import parse_lineup_text
players, openings, tournament = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lineup_code(make_config(players, openings, 1).lineup)
for spec in parse_lineup_text(tournament):  # each strategy compiled alone
    lineup_code(lineup_of(players, [spec] * (3 if players == 3 else 2)))
print("{}")
"""


def run(script: str, *args: str) -> dict:
    env = child_env(dict(os.environ, SNIFF_PRECOMPILE="0"))
    done = subprocess.run([sys.executable, "-P", "-c", script, *map(str, args)], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, args))}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def scheduler_of(workers: int) -> str:
    """``local:N``, or ``none`` for 0 workers: the command in its own process, no Dask."""
    return f"local:{workers}" if workers else "none"


def measure(name: str, script: str, args: list, out: Path, workers: tuple[int, ...]) -> dict:
    rows = {}
    for n in workers:
        got = run(script, *args, out / f"{name}-local{n}", scheduler_of(n))
        rows[n] = got
        print(f"  {name} {scheduler_of(n)}: {got['seconds']:.1f} s, {got['games']:,} games",
              file=sys.stderr)
    same = len({json.dumps(row["answer"], sort_keys=True) for row in rows.values()}) == 1
    first, last = rows[workers[0]], rows[workers[-1]]
    return {"name": name, "args": [str(a) for a in args],
            "seconds": {scheduler_of(n): round(row["seconds"], 2) for n, row in rows.items()},
            "games": first["games"], "speedup": round(first["seconds"] / last["seconds"], 2),
            "same_answer": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--openings-strategies", default="learned")
    parser.add_argument("--deals", type=int, default=40_000)
    parser.add_argument("--part-deals", type=int, default=10_000,
                        help="deals per part, the unit of work on the cluster "
                             "(sniff openings: 10,000)")
    parser.add_argument("--tournament-strategies", default="learned,partner,greedy")
    parser.add_argument("--games-per-pair", type=int, default=200_000)
    parser.add_argument("--chunk-size", type=int, default=25_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="local cluster sizes to time, the first the reference (0: no "
                             "cluster, the command in its own process)")
    parser.add_argument("--commands", nargs="+", choices=("openings", "tournament"),
                        default=["openings", "tournament"], help="the commands to time")
    parser.add_argument("--out", type=Path, default=Path("results/cluster-bench"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    workers = tuple(args.workers)

    started = time.perf_counter()
    run(WARM, args.players, args.openings_strategies, args.tournament_strategies)
    print(f"kernels ready ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    commands = {
        "openings": (OPENINGS, [args.players, args.openings_strategies, args.deals,
                                args.part_deals, args.seed]),
        "tournament": (TOURNAMENT, [args.players, args.tournament_strategies,
                                    args.games_per_pair, args.chunk_size, args.seed]),
    }
    results = [measure(name, *commands[name], out, workers) for name in args.commands]
    record = {"machine": platform.processor() or platform.machine(),
              "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
              else os.cpu_count(),
              "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": " ".join(["python", "benchmarks/cluster_bench.py", *sys.argv[1:]]),
              "results": results}
    (args.out / "cluster-bench.json").write_text(json.dumps(record, indent=2) + "\n")
    names = [scheduler_of(n) for n in workers]
    print(f"| command | games | {' | '.join(names)} | speed-up | same answer |")
    print("|---|---|" + "---|" * len(names) + "---|---|")
    for row in results:
        times = " | ".join(f"{row['seconds'][n]:.1f} s" for n in names)
        print(f"| {row['name']} ({' '.join(row['args'][:2])}) | {row['games']:,} | {times} | "
              f"{row['speedup']:.2f}x | {'yes' if row['same_answer'] else 'NO'} |")


if __name__ == "__main__":
    main()
