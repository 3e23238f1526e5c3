"""Every file of scripts/, benchmarks/ and examples/ runs: a tiny real run each.

Each file has its cases here (a new file without one fails), each run as a user runs it: a
child ``python -P FILE`` of this interpreter (``-P``: never a module of the working folder,
which is a temporary folder), with ``sim`` found through ``PYTHONPATH`` and no ``PATH`` of
the test's (the system's default one), so a file that starts ``python`` or ``sniff`` found on
``PATH`` fails here. The runs share the kernel cache of the tests: seconds each once it holds
the strategies they play.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.helpers import ROOT

FOLDERS = ("scripts", "benchmarks", "examples")
HELP = ("--help",)


@dataclass(frozen=True)
class Case:
    """One run of a file: its arguments, what its output must show (regular expressions),
    and the modules and programs it needs; ``without``: the run that replaces it where one of
    those is missing (the file must then say so in one line), else the case is skipped."""

    args: tuple[str, ...]
    shows: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    timeout: int = 300
    without: Case | None = None
    exit_code: int = 0

    def missing(self) -> list[str]:
        return ([m for m in self.modules if importlib.util.find_spec(m) is None]
                + [p for p in self.programs if shutil.which(p, path=os.defpath) is None])

    def here(self) -> Case:
        """The run this machine can make: this case, or its ``without``."""
        return self.without if self.missing() and self.without is not None else self


SERVE = ("starlette", "uvicorn", "httpx")
# file -> its cases: the smallest real run of each (seconds once the kernels are cached)
CASES: dict[str, list[Case]] = {
    "scripts/campaign": [Case(
        ("--surface", "cli", "--cases", "1"),
        (r"\| cli \| 1 \| 1 \|", r"1 of 1 clean"))],
    "scripts/profile_engine.py": [Case(
        ("--seconds", "0.2", "--players", "2"), (r"busy samples, 2 players",),
        programs=("gcc", "gdb"))],
    "scripts/score_table.py": [Case(("--games", "20", "--out", "table.py"),
                                    (r"4 players: \d+ round starts", r"wrote table\.py"))],
    "scripts/serve_screenshots.py": [Case(
        ("--only", "phone", "--until", "start", "--out", "shots"),
        (r"wrote shots/serve-start-phone\.png",), (*SERVE, "selenium"),
        ("chromium", "chromedriver"))],
    "benchmarks/analyze_exact.py": [Case(
        ("--games", "2", "--budgets", "8", "--policies", "greedy"),
        (r"policy +budget +agrees", r"greedy +8 +\d+/\d+"))],
    "benchmarks/analyze_speed.py": [Case(
        ("--games", "2", "--budget", "8"), (r"2 games of 4 players, \d+ decisions, budget 8",))],
    "benchmarks/analyze_order.py": [Case(
        ("--strategies", "random,greedy", "--games-per-pair", "4", "--analysed", "2",
         "--budget", "8", "--out", "order"), (r"\| greedy \| \d+ \[", r"random - greedy: "))],
    "benchmarks/cluster_bench.py": [Case(
        ("--workers", "0", "--commands", "tournament", "--players", "2",
         "--openings-strategies", "greedy", "--tournament-strategies", "greedy,random",
         "--games-per-pair", "4", "--chunk-size", "2", "--out", "out"),
        (r"\| tournament \(2 greedy,random\) \| 4 \| .* \| yes \|",))],
    "benchmarks/compile_once.py": [Case(
        ("waits", "--repeats", "1", "--waits", "python-player", "--warm", "engine"),
        (r'"new Python player"',))],
    "benchmarks/env_bench.py": [Case(
        ("--rows", "batch,simulate", "--games", "8", "--simulate-games", "100", "--repeats",
         "1", "--first-games", "8", "--out", "bench.json"), (r"batch games/s over simulate",))],
    "benchmarks/expert_curve.py": [Case(
        ("--budgets", "", "--extra", "greedy", "--games", "4", "--players", "2",
         "--timing-games", "1", "--out", "curve", "--chart", "curve.png"),
        (r"2p greedy .* ms/decision", r"wrote curve/curve\.csv"))],
    "benchmarks/headtohead.py": [Case(("--games", "4", "--pair", "greedy/random", "--players",
                                       "2"), (r"\| `greedy` \| `random` \| 2 \| 4 \|",))],
    "benchmarks/learned_bench.py": [Case(("--players", "2", "--games", "4", "--no-expert"),
                                         (r"\| 2 \| `learned` \| `blocker` \| 4 \|",))],
    "benchmarks/parquet_encoding.py": [Case(("--games", "20", "--repeats", "1"),
                                            (r"project \(lz4\) +median",))],
    "benchmarks/scale_bench.py": [Case(
        ("--games", "100", "--steps", "simulate", "verify", "--out", "scale"),
        (r"100  simulate .* exit 0", r"100  verify .* exit 0"))],
    "benchmarks/serve_memory.py": [Case(("--games", "2", "--clients", "1"), (r"after 2: ",),
                                        SERVE)],
    "benchmarks/serve_timings.py": [Case(
        ("--games", "1", "--hints", "0", "--replays", "1", "--at-once", "2", "--target", "50"),
        (r"move, 2 games at once +median",), SERVE)],
    "benchmarks/time_to_answer.py": [Case(
        ("--jobs", "rank", "--strategies", "greedy,random", "--precision", "0.3", "--caches",
         "current", "-o", "answer"), (r"\| rank \| current \|",))],
    "examples/openspiel_ismcts.py": [Case(
        ("--players", "2", "--opponent", "greedy", "--deals", "1", "--simulations", "2",
         "--out", "games.jsonl"),
        (r"IS-MCTS \(2 simulations, game play-outs by random\) vs greedy, 2 players: \d/2",),
        ("pyspiel",))],
    # torch is too big for CI (the rl extra): there the example must say so in one line
    "examples/train_maskable_ppo.py": [Case(HELP, (r"usage:",)), Case(
        ("--timesteps", "1", "--n-envs", "1", "--eval-every", "1000", "--eval-games", "2",
         "--final-games", "2", "--out", "ppo"), (r'"timesteps"',), ("torch", "sb3_contrib"),
        without=Case(("--timesteps", "1"), (r"\Atrain_maskable_ppo: error: [^\n]* not "
                                            r"installed; pip install -e '\.\[env,rl\]' adds "
                                            r"them\n?\Z",), exit_code=1))],
}


def child_env() -> dict[str, str]:
    """The test's environment for a child, but ``PATH`` the system's default and ``sim``
    found through ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", SNIFF_PRECOMPILE="0", PATH=os.defpath)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_script(name: str, args, timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -P ROOT/name args`` in a fresh temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        return subprocess.run([sys.executable, "-P", str(ROOT / name), *args], cwd=folder,
                              env=child_env(), capture_output=True, text=True,
                              encoding="utf-8", timeout=timeout)


def test_every_file_has_a_case() -> None:
    """Every file, and every runnable folder (one with a ``__main__.py``, run as
    ``python -P FOLDER``)."""
    found = {str(path.relative_to(ROOT)) for folder in FOLDERS
             for path in (ROOT / folder).glob("*.py")}
    found |= {str(path.parent.relative_to(ROOT)) for folder in FOLDERS
              for path in (ROOT / folder).glob("*/__main__.py")}
    assert set(CASES) == found


def test_scripts_holds_only_a_maintainers_tools() -> None:
    """#61: at most 8 files; experiments are deleted once finished, benchmarks live in
    benchmarks/, examples in examples/."""
    assert len(list((ROOT / "scripts").iterdir())) <= 8


RUNS = [(name, case) for name, cases in CASES.items() for case in cases]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, Case], subprocess.CompletedProcess]:
    """Every case that can run here run once, side by side (a process each)."""
    runnable = [(name, case) for name, case in RUNS if not case.here().missing()]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = pool.map(lambda run: run_script(run[0], run[1].here().args,
                                               run[1].here().timeout), runnable)
        return dict(zip(runnable, done))


@pytest.mark.parametrize(("name", "case"), RUNS, ids=[f"{name} {' '.join(case.args)}"
                                                      for name, case in RUNS])
def test_the_file_runs(name: str, case: Case, results) -> None:
    if case.here().missing():
        pytest.skip(f"needs {', '.join(case.here().missing())}")
    result, ran = results[name, case], case.here()
    assert result.returncode == ran.exit_code, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for shown in ran.shows:
        assert re.search(shown, result.stdout + result.stderr), (shown, result.stdout[-3000:])


def test_the_environment_files_say_what_their_options_do() -> None:
    """#63: ``env_bench.py --help`` had no option descriptions, ``openspiel_ismcts.py``'s
    ``--table`` was missing from its ``--help``, and the MaskablePPO example's default
    ``--png`` overwrote the documentation's picture."""
    import re

    bench = run_script("benchmarks/env_bench.py", HELP).stdout
    for option in ("--games", "--simulate-games", "--repeats", "--rows", "--out"):
        described = re.search(rf"^\s+{option}( [A-Z_]+)?\s+\S", bench, re.MULTILINE)
        assert described, (option, bench)
    assert "--table JSONL" in run_script("examples/openspiel_ismcts.py", HELP).stdout
    ppo = " ".join(run_script("examples/train_maskable_ppo.py", HELP).stdout.split())
    assert "default OUT/curve.png" in ppo


def test_the_ismcts_table_shows_the_opponents_warm_time(tmp_path) -> None:
    """#63: the opponent's time per decision counted its cold compile (13.1 ms where warm
    is 0.95), and the table kept the first session's figure."""
    import importlib.util
    import json

    pytest.importorskip("pyspiel")
    spec = importlib.util.spec_from_file_location("ismcts_example",
                                                  ROOT / "examples" / "openspiel_ismcts.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    row = {"deal": 0, "swap": 0, "won": True, "cap": False, "moves": 10, "seconds": 0.1,
           "opponent": "expert", "players": 2, "simulations": 32}
    games = tmp_path / "games.jsonl"
    games.write_text("".join(json.dumps({**row, "swap": swap, "builtin_seconds_per_move": s})
                             + "\n" for swap, s in ((0, 0.0131), (1, 0.00095))))
    assert script.table([games]).splitlines()[-1].endswith("| 10.0 | 0.95 |")


def test_the_ismcts_referee_uses_the_batchs_public_tools() -> None:
    """#63: the referee wrote ``GameBatch._state``; it now moves positions and deals them
    anew with ``GameBatch.load_position`` and ``redeal``: a resampled root keeps the deciding seat's
    information (what IS-MCTS asserts) and every seat's known lacks, and both evaluators
    return one value per seat (``round``: expert's chance to win from the round's end)."""
    import importlib.util

    pytest.importorskip("pyspiel")
    import numpy as np

    from sim.core import observation as view
    from sim.core.tiles import TILE_HIGH, TILE_LOW
    from sim.kernels.batch import GameBatch
    from sim.kernels.decisions import OUTSIDE, BatchSettings

    spec = importlib.util.spec_from_file_location("ismcts_script",
                                                  ROOT / "examples" / "openspiel_ismcts.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    game = script.pyspiel.load_game(script.GAME_NAME, {"players": 2})
    source = GameBatch(2, [OUTSIDE, "greedy"], 1, 50, BatchSettings(first_game=3))
    for _ in range(4):
        source.advance(source.pending().moves[:, 0])
    for evaluator in ("game", "round"):
        referee = script.Referee(game, 2, 7, evaluator)
        root = referee.root(source, 0)
        player = root.current_player()
        for _ in range(5):
            sample = referee.resample(root, player)
            assert sample.information_state_string(player) == root.information_state_string(player)
            other = sample.table.batch.observe(0, 1 - player)
            for tile in range(28):
                if other[view.HAND] >> int(tile) & 1:
                    pips = (1 << int(TILE_LOW[tile])) | (1 << int(TILE_HIGH[tile]))
                    assert not pips & int(other[view.LACKS + 1 - player])
            values = referee.playout(sample)
            assert values.shape == (2,) and np.all(np.abs(values) <= 1.0)
            assert abs(values.sum()) < 1e-9  # two sides: what one wins the other loses


def test_the_campaign_tells_each_outcome_apart(tmp_path) -> None:
    """scripts/campaign's classifier (#63): a planted file written is code execution, a
    protected file changed data loss, no exit a hang, a traceback a traceback, exit 0 where
    a refusal was due a silently wrong answer, one ``sniff: error:`` line clean."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("campaign_outcomes",
                                                  ROOT / "scripts" / "campaign" / "outcomes.py")
    campaign = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = campaign  # its dataclasses look their module up there
    spec.loader.exec_module(campaign)

    def kind(outcome, setup=None, **case):
        folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        ctx = campaign.Context(None, campaign.Case("cli", "x", [], **case), folder)
        if setup:
            setup(ctx)
        return campaign.classify(ctx, outcome)[0]

    def done(rc, err="", out=""):
        return campaign.Outcome(rc, out, err, 1.0, 2**20)

    assert kind(done(2, "sniff: error: no such folder\n")) == "clean"
    assert kind(done(2, "sniff: error: a\nsniff: error: b\n")) == "unclear"
    assert kind(done(1, "Traceback (most recent call last):\n  x\nValueError: y\n")) == \
        "traceback"
    assert kind(done(None)) == "hang"
    assert kind(done(0, out="wrote it")) == "silently wrong"
    assert kind(done(0), check=lambda ctx, outcome: None, expect="ok") == "clean"
    assert kind(done(2, "sniff: error: x\n"),
                setup=lambda ctx: ctx.sentinel.write_text("ran")) == "code execution"

    def victim(ctx):
        path = ctx.victim()
        path.write_text("overwritten")
    assert kind(done(2, "sniff: error: x\n"), setup=victim) == "data loss"
    assert kind(campaign.Outcome(2, "", "sniff: error: x\n", 1.0, 3 * 2**30)) == \
        "unbounded memory"
