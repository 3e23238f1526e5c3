"""An adversarial campaign against sniff: hostile caches, folders, plugins, inputs, requests.

Each case runs one ``sniff`` command in a process of its own, in a fresh folder (with its
own copy of the compile cache where the case tampers with one), under a time limit and an
address-space limit, and is classified by what came of it:

- ``clean``: one clear line and a non-zero exit, or the right output (exit 0);
- ``code execution``: a module, pickle or file the case planted ran (it leaves a file);
- ``data loss``: a file the case protects (a victim outside the folder, a run's parts)
  changed or went away;
- ``silently wrong``: exit 0 with an answer the case knows is wrong (a refusal expected);
- ``hang``: still running at the limit (a case that may block on purpose, such as a Python
  player that sleeps, gets Ctrl-C first: ending then in one line is clean);
- ``traceback``: a Python traceback, or death by a signal;
- ``unbounded memory``: past the memory bound;
- ``unclear``: refused, but not in one line (several lines, or none).

Surfaces: ``cache`` (``SNIFF_CACHE_DIR``, the generated modules and numba's files beside
them, the locks and markers of the background compile), ``folders`` (run, tournament,
openings and tuning folders, and the outputs every command writes), ``plugins``
(``--plugin`` modules and ``register_python`` players), ``cli`` (flags, numbers, names,
special files as inputs), ``serve`` (requests to one ``sniff serve``) and ``query`` (SQL).

Usage: ``python scripts/campaign`` (every case, a few minutes; ``--cases N``: the first N
of each surface, ``--surface S``: one surface, ``--out FILE``: one JSON line per case,
``--keep``: leave the work folder). Run it as root for the cases that need another owner
(they are skipped otherwise). Prints the table of outcomes by surface and each case that
is not clean.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from campaign_run import Campaign
from outcomes import KINDS, NOBODY, ROOT, SURFACES, Case
from surface_cache import NAMES, _names, cache_cases
from surface_cli import cli_cases
from surface_folders import folder_cases
from surface_plugins import plugin_cases
from surface_query import query_cases
from surface_serve import serve_cases


def all_cases(root: bool) -> list[Case]:
    return [*cache_cases(root), *folder_cases(), *plugin_cases(), *cli_cases(),
            *serve_cases(), *query_cases()]


def table(rows: list[dict]) -> str:
    counts = Counter((row["surface"], row["kind"]) for row in rows)
    kinds = [k for k in KINDS if any(counts[(s, k)] for s in SURFACES)] or ["clean"]
    lines = ["| surface | cases | " + " | ".join(kinds) + " |",
             "|---|---:|" + "---:|" * len(kinds)]
    for surface in SURFACES:
        total = sum(counts[(surface, k)] for k in KINDS)
        if total:
            lines.append(f"| {surface} | {total} | " + " | ".join(
                str(counts[(surface, k)]) for k in kinds) + " |")
    lines.append(f"| all | {len(rows)} | " + " | ".join(
        str(sum(counts[(s, k)] for s in SURFACES)) for k in kinds) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, metavar="N",
                        help="only the first N cases of each surface (a smoke run)")
    parser.add_argument("--surface", choices=SURFACES, action="append",
                        help="only this surface (repeatable)")
    parser.add_argument("--match", metavar="TEXT", help="only the cases whose name holds TEXT")
    parser.add_argument("--out", type=Path, help="one JSON line per case")
    parser.add_argument("--cache", type=Path,
                        help="the compile cache the cases copy [default: this user's]")
    parser.add_argument("--keep", action="store_true", help="leave the work folder")
    parser.add_argument("--code", type=Path, default=ROOT, metavar="DIR",
                        help="the checkout whose sniff the cases run [default: this one]")
    parser.add_argument("--from", dest="first", type=int, default=0, metavar="N",
                        help="start at case N (of the cases chosen), e.g. after a stop")
    parser.add_argument("--table", type=Path, metavar="JSONL",
                        help="print the table of the cases in this --out file, run nothing")
    args = parser.parse_args()
    if args.table:
        rows = [json.loads(line) for line in args.table.open()]
        print(table(rows))
        return
    from sim.cache import cache_base

    source = args.cache or cache_base()
    work = Path(tempfile.mkdtemp(prefix="sniff-campaign-"))
    os.chmod(work, 0o755)
    campaign = Campaign(work, source, args.code.resolve())
    print(f"campaign: work folder {work}", flush=True)
    rows: list[dict] = []
    try:
        campaign.build_base()
        NAMES.update(_names(campaign))
        cases = all_cases(campaign.is_root)
        if not campaign.runs_as(NOBODY):
            skipped = [c.name for c in cases if c.user is not None]
            print(f"campaign: {len(skipped)} case(s) skipped: sniff cannot run as uid {NOBODY} "
                  "here (its interpreter is not readable by that user)", flush=True)
            cases = [c for c in cases if c.user is None]
        if args.surface:
            cases = [c for c in cases if c.surface in args.surface]
        if args.match:
            cases = [c for c in cases if args.match in c.name]
        if args.cases is not None:
            kept: Counter = Counter()
            chosen = []
            for case in cases:
                if kept[case.surface] < args.cases:
                    kept[case.surface] += 1
                    chosen.append(case)
            cases = chosen
        for index, case in enumerate(cases):
            if index < args.first:
                continue
            row = campaign.run_case(case, index)
            rows.append(row)
            mark = "  " if row["kind"] == "clean" else "!!"
            print(f"{mark} {index:3d} {row['surface']:7s} {row['kind']:15s} {case.name[:60]}"
                  f" ({row['seconds']:.1f} s): {row['why'][:100]}", flush=True)
            if args.out:
                with args.out.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
            if not args.keep:
                shutil.rmtree(work / "cases", ignore_errors=True)
        server = campaign.stop_server()
        if server and (not server["alive_at_end"] or server["log_tracebacks"]):
            print(f"campaign: the server at the end: {server}")
    finally:
        if campaign.server is not None and campaign.server.poll() is None:
            campaign.server.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(rows))
    bad = [row for row in rows if row["kind"] != "clean"]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} clean")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
