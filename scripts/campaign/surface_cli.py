"""The ``cli`` surface: flags, numbers, names and special files (FIFOs, devices, links) as
the command line's inputs."""

from __future__ import annotations

import re

from campaign_run import _mkfifo
from outcomes import Case, Context, Outcome

# ------------------------------------------------------------------ the command line


def _cli_flag_cases() -> list[Case]:
    """Flags, numbers, strategy specs and special files as inputs."""
    base = ["simulate", "--players", "2", "--strategies", "greedy,random", "-o", "out", "-q"]
    cases = []
    for flags in (["--games", str(10**30)], ["--games", "-5"], ["--games", "1e3"],
                  ["--games", "0"], ["--seed", str(2**64)], ["--seed", "-1"],
                  ["--chunk-size", "0"], ["--chunk-size", str(10**20)], ["--precision", "0"],
                  ["--precision", "nan"], ["--precision", "1e-320"], ["--precision", "-1"],
                  ["--games", "10", "--threads", "0"], ["--games", "10", "--bogus"],
                  ["--games", "10", "--round-cap", "0"]):
        cases.append(Case("cli", f"simulate {' '.join(flags)[:50]}", [*base, *flags]))
    cases.append(Case("cli", "simulate --games in Arabic-Indic digits (twelve)",
                      [*base, "--games", "\u0661\u0662"], expect="either",
                      check=lambda c, o: _games_in(c, 12)))
    cases.append(Case("cli", "simulate --threads 100000", [*base, "--games", "10", "--threads",
                                                         "100000"], expect="either",
                      check=lambda c, o: None))
    for players in ("5", "0", "1", "x"):
        cases.append(Case("cli", f"--players {players}", ["simulate", "--players", players,
                                                         "--games", "10", "-o", "out"]))
    specs = ["nosuch,greedy", "greedy:x=1,random", "expert:budget=1e9,random",
             "weighted:points=nan,random", "weighted:points=1e309,random",
             "weighted:points=1e308,random", "greedy,\x1b[31mred\nsniff: error: x",
             "gr\u00ebedy,random", "@/dev/zero", "@fifo", "@.", "defensive:@/dev/zero,random",
             "defensive:@fifo,random", ",".join(["greedy"] * 5000),
             "learned:model=/dev/zero,greedy",
             "learned:model=fifo,greedy", "learned:model=.,greedy", "expert:policy=expert,random",
             "rollout:base=rollout,random"]
    for spec in specs:
        def setup(ctx):
            _mkfifo(ctx.dir / "fifo")
        cases.append(Case("cli", f"--strategies {spec[:40]!r}",
                          ["simulate", "--players", "2", "--strategies", spec, "--games", "10",
                           "-o", "out", "-q"], setup, timeout=60))
    cases.append(Case("cli", "an argument of 120 KB", ["simulate", "--strategies", "g" * 120_000,
                                                      "--games", "10", "-o", "out"]))
    special = {"/dev/zero": "/dev/zero", "a FIFO": "fifo", "a folder": ".",
               "/dev/stdin": "/dev/stdin", "a 300 MB sparse file": "big"}
    for name, path in special.items():
        def setup(ctx):
            _mkfifo(ctx.dir / "fifo")
            with open(ctx.dir / "big", "wb") as handle:
                handle.truncate(300 * 2**20)
        for command in (["report", path, "-o", "rep"], ["replay", path], ["hint", path],
                        ["verify", path], ["query", path, "SELECT 1"]):
            cases.append(Case("cli", f"{command[0]} {name}", command, setup, timeout=60,
                              stdin="/dev/zero"))
    return cases


def _cli_input_cases() -> list[Case]:
    """Traces, positions, folders and standard inputs of the other commands."""
    cases = []
    cases.append(Case("cli", "hint - from /dev/zero", ["hint", "-"], stdin="/dev/zero", timeout=60))
    cases.append(Case("cli", "replay a trace, game 10**20",
                      ["replay", "trace.jsonl", "--game", str(10**20)],
                      lambda ctx: ctx.copy("trace.jsonl")))

    def nested_trace(ctx):
        (ctx.dir / "t.jsonl").write_text("[" * 100_000 + "\n")
    cases.append(Case("cli", "replay a trace of one deeply nested line", ["replay", "t.jsonl"],
                      nested_trace))

    def long_line(ctx):
        with open(ctx.dir / "t.jsonl", "w") as handle:
            handle.write('{"event": "' + "x" * 50_000_000 + '"}\n')
    cases.append(Case("cli", "replay a trace with a 50 MB line", ["replay", "t.jsonl"], long_line))
    cases.append(Case("cli", "verify /", ["verify", "/"], timeout=60))
    cases.append(Case("cli", "verify /proc", ["verify", "/proc"], timeout=60))
    for flags in (["--difference", "0"], ["--difference", "nan"], ["--difference", "1e-300"],
                  ["--difference", "0.02", "--power", "2"],
                  ["--difference", "0.02", "--confidence", "1"],
                  ["--difference", "0.02", "--paired", "--sd", "-1"]):
        cases.append(Case("cli", f"plan {' '.join(flags)}", ["plan", *flags]))
    for points in (str(10**12), "1e3", "nan", "--"):
        cases.append(Case("cli", f"tally {points}", ["tally", points], timeout=30))
    cases.append(Case("cli", "tally -5 (a minus sign, then the tally)", ["tally", "--", "-5"],
                      expect="either", check=lambda c, o: None if o.out.lstrip().startswith(
                          ("\u2212", "-", "\u2572")) else f"not a negative tally: {o.out[:40]}"))
    cases.append(Case("cli", "trace --games 10**12", ["trace", "--players", "2", "--strategies",
                                                      "greedy,random", "--games", str(10**12),
                                                      "-o", "t.jsonl"], timeout=30))
    cases.append(Case("cli", "report --title with control characters",
                      ["report", "run", "-o", "rep", "--title", "T\x1b[2J\x07\nline"],
                      lambda ctx: ctx.copy("run"), expect="either", check=_no_raw_controls))
    cases.append(Case("cli", "play with an empty standard input",
                      ["play", "--players", "2", "--seed", "1", "--trace", "t.jsonl"],
                      stdin="/dev/null", expect="either", check=lambda c, o: None))
    cases.append(Case("cli", "play with /dev/zero as standard input",
                      ["play", "--players", "2", "--seed", "1", "--trace", "t.jsonl"],
                      stdin="/dev/zero", expect="either", check=lambda c, o: None, timeout=60))
    cases.append(Case("cli", "compare with --h1 nan", ["compare", "greedy", "random", "--h1",
                                                       "nan", "-o", "out"]))
    cases.append(Case("cli", "compare with --h0 above --h1", ["compare", "greedy", "random",
                                                              "--h0", "0.1", "--h1", "0.05",
                                                              "-o", "out"]))
    cases.append(Case("cli", "hint --budget 10**9 of a position",
                      ["hint", "--trace", "trace.jsonl", "--round", "1", "--turn", "1",
                       "--budget", str(10**9)], lambda ctx: ctx.copy("trace.jsonl")))
    cases.append(Case("cli", "learn -o a FIFO", ["learn", "--players", "2", "--iterations", "1",
                                                 "--games", "10", "-o", "fifo"],
                      lambda ctx: _mkfifo(ctx.dir / "fifo")))
    return cases


def cli_cases() -> list[Case]:
    return [*_cli_flag_cases(), *_cli_input_cases()]


def _games_in(ctx: Context, games: int) -> str | None:
    import pyarrow.parquet as pq

    found = pq.read_table(ctx.dir / "out" / "games", columns=["game_id"]).num_rows
    return None if found == games else f"{found} games where {games} were asked"


def _no_raw_controls(ctx: Context, outcome: Outcome) -> str | None:
    text = outcome.out + outcome.err
    for path in (ctx.dir / "rep").rglob("*.md"):
        text += path.read_text(errors="replace")
    return "a raw control character reached the output" if re.search(
        "[\x00-\x08\x0b-\x1f\x7f]", text.replace("\r", "")) else None
