"""Every script in scripts/ starts: ``--help`` at least, a tiny run where one is cheap.

Each script has its case here (a new script without one fails), run as a child of this
interpreter from the repository root, never a command found on PATH. The cases need no
compiled kernel, so they take seconds on a cold cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
HELP = ["--help"]

# script -> the argument lists it is run with
CASES: dict[str, list[list[str]]] = {
    "bench.py": [HELP], "campaign.py": [HELP], "cluster_bench.py": [HELP],
    "compare_check.py": [HELP],
    "env_bench.py": [HELP], "expert_curve.py": [HELP], "gap_probes.py": [HELP],
    "headtohead.py": [HELP], "hint_agreement.py": [HELP], "learned_ablation.py": [HELP],
    "learned_bench.py": [HELP], "learned_curves.py": [HELP], "learned_fit_probe.py": [HELP],
    "openspiel_ismcts.py": [HELP], "parquet_encoding.py": [HELP], "profile.py": [HELP],
    "scale_bench.py": [HELP], "score_table.py": [HELP], "serve_screenshots.py": [HELP],
    "serve_memory.py": [HELP], "serve_timings.py": [HELP], "time_to_answer.py": [HELP],
    "train_maskable_ppo.py": [HELP], "tune_accept.py": [HELP],
}


def run_script(name: str, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", SNIFF_PRECOMPILE="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)


def test_every_script_has_a_case() -> None:
    assert set(CASES) == {path.name for path in SCRIPTS.glob("*.py")}


RUNS = [(name, args) for name, cases in CASES.items() for args in cases]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """Every case run once, side by side (each is a process of its own, mostly imports)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = pool.map(lambda case: run_script(*case), RUNS)
        return {(name, " ".join(args)): result for (name, args), result in zip(RUNS, done)}


@pytest.mark.parametrize(("name", "args"), RUNS)
def test_the_script_starts(name: str, args: list[str], results) -> None:
    result = results[name, " ".join(args)]
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    if args == HELP:
        assert "usage:" in result.stdout.lower(), result.stdout


def test_the_environment_scripts_say_what_their_options_do() -> None:
    """#63: ``env_bench.py --help`` had no option descriptions, ``openspiel_ismcts.py``'s
    ``--table`` was missing from its ``--help``, and the MaskablePPO example's default
    ``--png`` overwrote the documentation's picture."""
    import re

    bench = run_script("env_bench.py", HELP).stdout
    for option in ("--games", "--simulate-games", "--repeats", "--rows", "--out"):
        described = re.search(rf"^\s+{option}( [A-Z_]+)?\s+\S", bench, re.MULTILINE)
        assert described, (option, bench)
    assert "--table JSONL" in run_script("openspiel_ismcts.py", HELP).stdout
    ppo = " ".join(run_script("train_maskable_ppo.py", HELP).stdout.split())
    assert "default OUT/curve.png" in ppo


def test_the_maskable_ppo_example_says_in_one_line_what_is_missing() -> None:
    """#63: without torch it ended in a ModuleNotFoundError traceback."""
    import importlib.util

    if importlib.util.find_spec("torch") and importlib.util.find_spec("sb3_contrib"):
        pytest.skip("the rl extra is installed: the example would train")
    done = run_script("train_maskable_ppo.py", ["--timesteps", "1"])
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        line for line in done.stderr.strip().splitlines() if "not installed" in line]
    assert "pip install -e '.[env,rl]'" in done.stderr and len(done.stderr.splitlines()) == 1


def test_the_ismcts_table_shows_the_opponents_warm_time(tmp_path) -> None:
    """#63: the opponent's time per decision counted its cold compile (13.1 ms where warm
    is 0.95), and the table kept the first session's figure."""
    import importlib.util
    import json

    pytest.importorskip("pyspiel")
    spec = importlib.util.spec_from_file_location("ismcts_script", SCRIPTS / "openspiel_ismcts.py")
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
    anew with ``GameBatch.take`` and ``redeal``: a resampled root keeps the deciding seat's
    information (what IS-MCTS asserts) and every seat's known lacks, and both evaluators
    return one value per seat (``round``: expert's chance to win from the round's end)."""
    import importlib.util

    pytest.importorskip("pyspiel")
    import numpy as np

    from sim.core import observation as view
    from sim.core.tiles import TILE_HIGH, TILE_LOW
    from sim.kernels.batch import GameBatch
    from sim.kernels.decisions import OUTSIDE, BatchSettings

    spec = importlib.util.spec_from_file_location("ismcts_script", SCRIPTS / "openspiel_ismcts.py")
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
            other = sample.batch.observe(0, 1 - player)
            for tile in range(28):
                if other[view.HAND] >> int(tile) & 1:
                    pips = (1 << int(TILE_LOW[tile])) | (1 << int(TILE_HIGH[tile]))
                    assert not pips & int(other[view.LACKS + 1 - player])
            values = referee.playout(sample)
            assert values.shape == (2,) and np.all(np.abs(values) <= 1.0)
            assert abs(values.sum()) < 1e-9  # two sides: what one wins the other loses


def test_the_campaign_tells_each_outcome_apart(tmp_path) -> None:
    """scripts/campaign.py's classifier (#63): a planted file written is code execution, a
    protected file changed data loss, no exit a hang, a traceback a traceback, exit 0 where
    a refusal was due a silently wrong answer, one ``sniff: error:`` line clean."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("campaign_script", SCRIPTS / "campaign.py")
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
