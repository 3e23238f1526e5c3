"""How reading a run scales: simulate, verify, report, a query and loading, at given sizes.

Why: the project asks that everything reading a run works in bounded memory and that
``sniff report`` of a 10 M-game run take at most 3x ``sniff verify``'s time with at most
1.5 GB peak memory, flat from 1 M to 100 M games. This script measures each step as a user
meets it, as a separate process under ``/usr/bin/time -f %e:%M`` (wall seconds, peak RSS),
and prints a Markdown table (docs/speed.md, "Reading at scale") and writes JSON.

    python benchmarks/scale_bench.py --games 1000000 10000000 --out results/scale
    python benchmarks/scale_bench.py --games 100000000 --steps simulate verify report query
    python benchmarks/scale_bench.py --games 1000000 --openings-deals 10000 100000

Steps: ``simulate`` (4 players, greedy against random, seed 11, -q; skipped when the run
folder is already complete), ``verify``, ``report`` (``--placement-sample 0``: the sample
traces a bounded 300 games whatever the size, so it is timed apart by ``report-sample``),
``query`` (rounds by end reason), ``load-games`` (``sim.load(run).games`` into pandas, or
its one-line refusal when it would not fit; above 20 M games only when named in
``--steps``) and ``openings`` at each ``--openings-deals``
(``sniff openings`` and ``sniff report`` of its folder). The run folders are kept in
``--out`` (a 10 M-game run is 1.4 GB, 100 M 14 GB) for re-measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from sim.children import child_env

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("simulate", "verify", "report", "report-sample", "query", "load-games")
QUERY = "SELECT end_reason, count(*) AS rounds FROM rounds GROUP BY ALL ORDER BY 1"
LOAD = "import sim, sys; print(len(sim.load(sys.argv[1]).games))"


def timed(command: list[str], log: Path) -> dict:
    """Run ``command`` under /usr/bin/time: wall seconds, peak RSS (MB), exit status."""
    with open(log, "w") as out:
        done = subprocess.run(["/usr/bin/time", "-f", "TIME %e:%M", *command], stdout=out,
                              stderr=subprocess.STDOUT, cwd=ROOT,
                              env=child_env({**os.environ, "SNIFF_PRECOMPILE": "0"}))
    last = [line for line in log.read_text().splitlines() if line.startswith("TIME ")][-1]
    wall, rss = last.removeprefix("TIME ").split(":")
    return {"wall_s": float(wall), "peak_rss_mb": int(rss) / 1024, "status": done.returncode,
            "log": str(log)}


def sniff(*args: str) -> list[str]:
    return [sys.executable, "-P", "-m", "sim.cli", *args]


def complete(folder: Path) -> bool:
    try:
        return json.loads((folder / "manifest.json").read_text()).get("status") == "complete"
    except (OSError, ValueError):
        return False


def measure(games: int, out: Path, steps, threads: int | None,
            explicit: bool = False) -> list[dict]:
    folder = out / f"g{games}"
    rows = []

    def step(name: str, command: list[str]) -> None:
        result = timed(command, out / f"g{games}-{name}.log")
        rows.append({"games": games, "step": name, **result})
        print(f"{games:>12,}  {name:<14} {result['wall_s']:8.1f} s  "
              f"{result['peak_rss_mb']:8.0f} MB  exit {result['status']}", flush=True)

    if "simulate" in steps and not complete(folder):
        extra = ["--threads", str(threads)] if threads else []
        step("simulate", sniff("simulate", "--players", "4", "--strategies", "greedy,random",
                               "--games", str(games), "--seed", "11", "--out", str(folder),
                               "--overwrite", "-q", *extra))
    if "verify" in steps:
        step("verify", sniff("verify", str(folder)))
    if "report" in steps:
        step("report", sniff("report", str(folder), "-o", str(out / f"report-g{games}"),
                             "--placement-sample", "0"))
    if "report-sample" in steps:
        step("report-sample", sniff("report", str(folder), "-o",
                                    str(out / f"report-g{games}-sample")))
    if "query" in steps:
        step("query", sniff("query", str(folder), QUERY))
    if "load-games" in steps and (games <= 20_000_000 or explicit):
        # the whole games table in pandas: it works for runs that fit (docs/speed.md), so past
        # 20 M games it is run only when asked for by name
        step("load-games", [sys.executable, "-P", "-c", LOAD, str(folder)])
    return rows


def measure_openings(deals: int, out: Path) -> list[dict]:
    folder = out / f"openings-{deals}"
    rows = []
    for name, command in (
            ("openings", sniff("openings", "--players", "4", "--strategies", "greedy",
                               "--deals", str(deals), "--seed", "7", "--out", str(folder),
                               "--overwrite", "-q")),
            ("openings-report", sniff("report", str(folder), "-o",
                                      str(out / f"report-openings-{deals}")))):
        result = timed(command, out / f"openings-{deals}-{name}.log")
        rows.append({"deals": deals, "step": name, **result})
        print(f"{deals:>12,}d {name:<15} {result['wall_s']:8.1f} s  "
              f"{result['peak_rss_mb']:8.0f} MB  exit {result['status']}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| size | step | wall (s) | peak RSS (MB) | exit |", "|---|---|---|---|---|"]
    for row in rows:
        size = (f"{row['games']:,} games" if "games" in row else f"{row['deals']:,} deals")
        lines.append(f"| {size} | {row['step']} | {row['wall_s']:.1f} | "
                     f"{row['peak_rss_mb']:.0f} | {row['status']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--steps", nargs="*", choices=STEPS)
    parser.add_argument("--openings-deals", type=int, nargs="*", default=[])
    parser.add_argument("--threads", type=int)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "scale")
    args = parser.parse_args()
    args.out = args.out.resolve()  # the commands run in the repository's folder
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for games in args.games:
        rows += measure(games, args.out, args.steps or STEPS, args.threads,
                        explicit=args.steps is not None)
    for deals in args.openings_deals:
        rows += measure_openings(deals, args.out)
    (args.out / "scale.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
