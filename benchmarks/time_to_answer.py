"""Time to answer the three main jobs, end to end, cold (empty kernel cache) and warm.

Its figures feed docs/speed.md (time to answer).

    python benchmarks/time_to_answer.py [--strategies LIST] [--precision 0.01] [--deals 10000]
        [--jobs rank,openings] [--caches cold,warm] [-o results/time-to-answer]
    python benchmarks/time_to_answer.py --jobs rank --strategies greedy,random \\
        --precision 0.3 --caches current       # a check that it runs: seconds

(a) ``rank``: a 4-player tournament of the strategies, each pairing played until every win
    rate's 95% half-width is at most ``--precision`` (``sniff tournament --precision``),
    then ``sniff report`` of it;
(b) ``openings``: the value of all 28 opening tiles for greedy (``sniff openings --deals``),
    with the widest 95% half-width of the leader's side's round-1 points, then
    ``sniff report`` of it.

Each job runs twice: first with an empty kernel cache (``SNIFF_CACHE_DIR`` pointed at a new
folder, so everything compiles, as on a fresh machine), then again with that cache warm
(``--caches warm`` alone uses a cache the script fills first with a small run of the same
strategies, so only play and report are timed).
Commands run as a user runs them (``python -m sim.cli``), each in its own process; the
figures are wall-clock seconds. It prints a Markdown table (docs/speed.md publishes it) and
writes it with the raw figures as JSON under ``-o``, the runs and their reports under
``-o``/runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from sim.children import child_env

EVERY_BUILTIN = "random,greedy,heavy,defensive,blocker,partner,weighted,rollout,expert"


def run(command: list[str], cache: str | None) -> float:
    """Wall seconds of ``sniff COMMAND`` in a process of its own, with the kernel cache
    ``cache`` (None: the one this process has)."""
    env = dict(os.environ, SNIFF_PRECOMPILE="0")
    if cache is not None:
        env["SNIFF_CACHE_DIR"] = cache
    start = time.perf_counter()
    # -P, child_env: not the working folder's modules (sim.children says why)
    subprocess.run([sys.executable, "-P", "-m", "sim.cli", *command], env=child_env(env),
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def rank_job(strategies: str, precision: float, folder: Path) -> list[list[str]]:
    return [
        ["tournament", "--players", "4", "--strategies", strategies, "--precision",
         str(precision), "--duplicate", "--seed", "1", "-q", "--out", str(folder / "play")],
        ["report", str(folder / "play"), "-o", str(folder / "report")],
    ]


def openings_job(deals: int, folder: Path) -> list[list[str]]:
    return [
        ["openings", "--players", "4", "--strategies", "greedy", "--deals", str(deals),
         "--seed", "1", "-q", "--out", str(folder / "play")],
        ["report", str(folder / "play"), "-o", str(folder / "report")],
    ]


def warm_up_command(name: str, options, folder: Path) -> list[str]:
    """A small run that compiles what the job's run needs (the same strategies)."""
    if name == "rank":
        return ["tournament", "--players", "4", "--strategies", options.strategies,
                "--games-per-pair", "2", "-q", "--out", str(folder)]
    return ["openings", "--players", "4", "--strategies", "greedy", "--deals", "2", "-q",
            "--out", str(folder)]


def widest_half_width(folder: Path) -> float:
    table = pq.read_table(folder / "play" / "openings.parquet").to_pandas()
    return float(((table["side_points_high"] - table["side_points_low"]) / 2).max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", default=EVERY_BUILTIN)
    parser.add_argument("--precision", type=float, default=0.01)
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--jobs", default="rank,openings")
    parser.add_argument("--caches", default="cold,warm",
                        help="cold (an empty kernel cache first), warm, or both; or current "
                             "(the kernel cache this process has, as it is)")
    parser.add_argument("-o", "--out", type=Path, default=Path("results/time-to-answer"))
    options = parser.parse_args()
    for name in options.jobs.split(","):
        if name not in ("rank", "openings"):
            parser.error(f"--jobs: unknown job {name!r} (rank, openings)")
    for state in options.caches.split(","):
        if state not in ("cold", "warm", "current"):
            parser.error(f"--caches: unknown cache state {state!r} (cold, warm, current)")
    jobs = {
        "rank": lambda folder: rank_job(options.strategies, options.precision, folder),
        "openings": lambda folder: openings_job(options.deals, folder),
    }
    rows: list[dict] = []
    warm_up_s: dict[str, float] = {}
    work = options.out / "runs"  # the runs and reports are kept: the answers themselves
    shutil.rmtree(work, ignore_errors=True)
    with tempfile.TemporaryDirectory() as cache:
        for name in options.jobs.split(","):
            for state in options.caches.split(","):
                if state == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                    os.makedirs(cache)
                elif state == "warm" and "cold" not in options.caches.split(","):
                    warm_up = work / f"{name}-warm-up"  # fill the cache first
                    warm_up_s[name] = run(warm_up_command(name, options, warm_up), cache)
                used = None if state == "current" else cache
                folder = work / f"{name}-{state}"
                play, report = jobs[name](folder)
                row = {"job": name, "cache": state, "play_s": run(play, used),
                       "report_s": run(report, used), "play": "sniff " + " ".join(play),
                       "report": "sniff " + " ".join(report)}
                if name in warm_up_s:
                    row["warm_up_s"] = warm_up_s[name]
                if name == "openings":
                    row["widest_half_width"] = widest_half_width(folder)
                rows.append(row)
                print(json.dumps(row), flush=True)
    lines = ["| job | cache | play (s) | report (s) | command |", "|---|---|---|---|---|"]
    for row in rows:
        extra = (f" (widest half-width {row['widest_half_width']:.2f} points)"
                 if "widest_half_width" in row else "")
        if "warm_up_s" in row:
            extra += f"; compiling first (a 2-game run, empty cache) took {row['warm_up_s']:.0f} s"
        lines.append(f"| {row['job']} | {row['cache']} | {row['play_s']:.0f} | "
                     f"{row['report_s']:.0f} | `{row['play']}`{extra} |")
    text = "\n".join(lines)
    print(text)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "time-to-answer.json").write_text(json.dumps(
        {"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
         "rows": rows}, indent=2))
    (options.out / "time-to-answer.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
