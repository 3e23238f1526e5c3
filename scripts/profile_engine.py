"""Where the compiled engine spends its time: instruction-pointer samples of a running kernel.

Its figures feed docs/speed.md (where the time goes).

``perf`` needs hardware counters that sandboxes and many VMs lack, so this samples the old
way: a tiny C program stops every thread of the process with ``ptrace`` a few hundred times
a second and records its instruction pointer; gdb then names each address (numba registers
its compiled functions with gdb's JIT interface). Needs gcc and gdb, and permission to
trace one's own processes.

    python scripts/profile_engine.py                      # 4-player greedy, the default --seconds
    python scripts/profile_engine.py --strategy random --players 2 --seconds 10 --by-offset

Prints the share of samples per compiled function (inlined code counts in its caller);
``--by-offset`` adds the hottest 64-byte spans of the turn loop, to read beside
``gdb -p PID -batch -ex "x/40i ADDRESS"``.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim.children import child_env

SAMPLER = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
int main(int argc, char **argv) {
    int pid = atoi(argv[1]), n = atoi(argv[2]);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    for (int i = 0; i < n; i++) {
        DIR *tasks = opendir(path);
        if (!tasks) return 0;
        struct dirent *entry;
        while ((entry = readdir(tasks))) {
            if (entry->d_name[0] == '.') continue;
            int tid = atoi(entry->d_name), status;
            if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) continue;
            ptrace(PTRACE_INTERRUPT, tid, 0, 0);
            waitpid(tid, &status, __WALL);
            struct user_regs_struct regs;
            if (ptrace(PTRACE_GETREGS, tid, 0, &regs) == 0) printf("%llx\n", regs.rip);
            ptrace(PTRACE_DETACH, tid, 0, 0);
        }
        closedir(tasks);
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, 0);
    }
    return 0;
}
"""

TARGET = """
import sys, time, numpy as np, numba
from sim.kernels.runner import lineup_of, play_batch
from strategies import parse_spec
numba.set_num_threads(1)
lineup = lineup_of({players}, [parse_spec({strategy!r})] * {players})
ids = np.arange(20000, dtype=np.int64)
play_batch(lineup, 0, ids[:100])
print("ready", flush=True)
end = time.time() + {seconds} + 30
while time.time() < end:
    play_batch(lineup, 1, ids)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="greedy")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--by-offset", action="store_true")
    args = parser.parse_args()
    if args.players not in (2, 3, 4):
        sys.exit(f"profile_engine.py: --players must be 2, 3 or 4, got {args.players}")
    if not args.seconds > 0:
        sys.exit(f"profile_engine.py: --seconds must be positive, got {args.seconds}")
    missing = [tool for tool in ("gcc", "gdb") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"profile_engine.py: needs {' and '.join(missing)} on PATH")
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as work:
        sampler = Path(work) / "sampler"
        (Path(work) / "sampler.c").write_text(SAMPLER)
        subprocess.run(["gcc", "-O2", "-o", str(sampler), f"{work}/sampler.c"], check=True)
        code = TARGET.format(players=args.players, strategy=args.strategy, seconds=args.seconds)
        target = subprocess.Popen([sys.executable, "-P", "-c", code], cwd=repo, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=child_env())
        try:
            if target.stdout.readline().strip() != "ready":  # compiled and warm
                sys.exit(f"profile_engine.py: the game process failed (is {args.strategy!r} a "
                         "strategy? see `sniff strategies`)")
            time.sleep(1)
            count = int(args.seconds * 300)
            pcs = subprocess.run([str(sampler), str(target.pid), str(count)], check=True,
                                 capture_output=True, text=True).stdout.split()
            samples = collections.Counter(pcs)
            addresses = sorted(samples)
            script = Path(work) / "names.gdb"
            script.write_text("".join(f"info symbol 0x{a}\n" for a in addresses))
            names = subprocess.run(["gdb", "-p", str(target.pid), "-batch", "-x", str(script)],
                                   capture_output=True, text=True).stdout
        finally:
            target.kill()
    lines = [line for line in names.splitlines() if " in section " in line or "No symbol" in line]
    by_function: collections.Counter = collections.Counter()
    spans: collections.Counter = collections.Counter()
    for address, line in zip(addresses, lines):
        name = re.split(r"[(\[]| \+ | in section", line)[0].split("::")[-1]
        if "futex" in name or "No symbol" in line:
            continue  # idle threads waiting for work
        by_function[name] += samples[address]
        offset = re.search(r"\+ (\d+) in section", line)
        if "play_turns" in name and offset:
            spans[int(offset.group(1)) // 64 * 64] += samples[address]
    total = sum(by_function.values()) or 1
    print(f"{total} busy samples, {args.players} players, {args.strategy} on every seat")
    for name, n in by_function.most_common(12):
        print(f"{100 * n / total:5.1f}%  {name}")
    if args.by_offset:
        print("hottest 64-byte spans of play_turns (offset from its start):")
        for offset, n in spans.most_common(15):
            print(f"  +{offset:<6d} {100 * n / total:5.1f}%")


if __name__ == "__main__":
    if os.name != "posix":
        sys.exit("scripts/profile_engine.py needs Linux (ptrace and /proc)")
    main()
