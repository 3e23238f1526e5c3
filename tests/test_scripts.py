"""Every file of scripts/, benchmarks/ and examples/ runs: a tiny real run each.

Each file has its cases here (a new file without one fails), each run as a user runs it: a
child ``python -P FILE`` of this interpreter (``-P``: never a module of the working folder,
which is a temporary folder), with ``sim`` found through ``PYTHONPATH`` and no ``PATH`` of
the test's (the system's default one), so a file that starts ``python`` or ``sniff`` found on
``PATH`` fails here. The runs share the kernel cache of the tests: seconds each once it holds
the strategies they play.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("scripts", "benchmarks", "examples")
HELP = ["--help"]

# file -> the argument lists it is run with
CASES: dict[str, list[list[str]]] = {
    "scripts/profile_engine.py": [HELP], "scripts/score_table.py": [HELP],
    "scripts/serve_screenshots.py": [HELP],
    "benchmarks/cluster_bench.py": [HELP], "benchmarks/compile_once.py": [HELP],
    "benchmarks/env_bench.py": [HELP], "benchmarks/expert_curve.py": [HELP],
    "benchmarks/headtohead.py": [HELP], "benchmarks/learned_bench.py": [HELP],
    "benchmarks/parquet_encoding.py": [HELP], "benchmarks/scale_bench.py": [HELP],
    "benchmarks/serve_memory.py": [HELP], "benchmarks/serve_timings.py": [HELP],
    "benchmarks/time_to_answer.py": [HELP],
    "examples/openspiel_ismcts.py": [HELP], "examples/train_maskable_ppo.py": [HELP],
}


def child_env() -> dict[str, str]:
    """The test's environment for a child, but ``PATH`` the system's default and ``sim``
    found through ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", SNIFF_PRECOMPILE="0", PATH=os.defpath)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_script(name: str, args: list[str], cwd: Path | None = None
               ) -> subprocess.CompletedProcess:
    """``python -P ROOT/name args`` in ``cwd`` (default: a fresh temporary folder)."""
    with tempfile.TemporaryDirectory() as temporary:
        return subprocess.run([sys.executable, "-P", str(ROOT / name), *args],
                              cwd=cwd or temporary, env=child_env(), capture_output=True,
                              text=True, encoding="utf-8", timeout=300)


def test_every_file_has_a_case() -> None:
    found = {str(path.relative_to(ROOT)) for folder in FOLDERS
             for path in (ROOT / folder).glob("*.py")}
    assert set(CASES) == found


def test_scripts_holds_only_a_maintainers_tools() -> None:
    """#61: at most 8 files; experiments are deleted once finished, benchmarks live in
    benchmarks/, examples in examples/."""
    assert len(list((ROOT / "scripts").iterdir())) <= 8


RUNS = [(name, args) for name, cases in CASES.items() for args in cases]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """Every case run once, side by side (each is a process of its own, mostly imports)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = pool.map(lambda case: run_script(*case), RUNS)
        return {(name, " ".join(args)): result for (name, args), result in zip(RUNS, done)}


@pytest.mark.parametrize(("name", "args"), RUNS)
def test_the_file_runs(name: str, args: list[str], results) -> None:
    result = results[name, " ".join(args)]
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    if args == HELP:
        assert "usage:" in result.stdout.lower(), result.stdout


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


def test_the_maskable_ppo_example_says_in_one_line_what_is_missing() -> None:
    """#63: without torch it ended in a ModuleNotFoundError traceback."""
    import importlib.util

    if importlib.util.find_spec("torch") and importlib.util.find_spec("sb3_contrib"):
        pytest.skip("the rl extra is installed: the example would train")
    done = run_script("examples/train_maskable_ppo.py", ["--timesteps", "1"])
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
