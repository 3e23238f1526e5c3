"""What a user waits for before games start, and whether compiling the loop once costs speed.

``python benchmarks/compile_once.py waits``: with the engine cached, the wall time of a
command a user runs after writing or editing a strategy (a fresh process each, medians of
``--repeats``): the docs' ``doubles_first`` plugin with one constant changed (a new value
each repetition, so each compiles it afresh) playing 20,000 two-player games to a run folder;
a new plugin (a new name each time); a new ``register_python`` player's first game; lineups
of built-in strategies never played before.

``--waits python-player --repeats 1 --warm engine``: a check that it runs (the test suite's:
``--warm engine`` compiles only the game loop and two strategies first, not every built-in).

``python benchmarks/compile_once.py cold``: the same machine with an empty cache (a fresh
``SNIFF_CACHE_DIR``): the README's ``sniff simulate``; ``sniff serve``'s first game after the
server prints its address, and the first hint after that.

``python benchmarks/compile_once.py speed --baseline DIR``: ``sniff bench``'s engine rows and
``simulate``'s games/s of this code and of the code checked out in ``DIR`` (another commit),
in alternating processes (a load that comes and goes falls on both), medians of the ratios.

Figures go to docs/speed.md with the command and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = (ROOT / "tests" / "plugins" / "my_strategy.py").read_text()
PYTHON_PLAYER = '''
import numpy as np
from strategies import register_python


@register_python("{name}", "first legal action")
def first_legal(observations, masks):
    return np.argmax(masks, axis=1)
'''
BUILTIN_LINEUPS = (["blocker", "partner"], ["heavy", "weighted"], ["defensive", "learned"],
                   ["greedy", "rollout:samples=4"], ["expert:budget=8", "random"])


def run(command: list[str], env: dict | None = None, cwd: Path | None = None,
        path: list[str] = ()) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds of a fresh ``python -P`` process and what it printed."""
    environment = dict(os.environ if env is None else env)
    if path:
        environment["PYTHONPATH"] = os.pathsep.join([*path, environment.get("PYTHONPATH", "")])
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-P", *command], env=environment, cwd=cwd,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"compile_once: {' '.join(command)} failed: {done.stderr[-2000:]}")
    return seconds, done


def sniff(*arguments: str) -> list[str]:
    return ["-m", "sim.cli", *arguments]


def warm_engine(env: dict | None = None, what: str = "all") -> None:
    """Everything the background compile compiles (``what`` "all"), so that only the change
    is timed; "engine": only the game loop, with greedy and random (a check that the file
    runs, not a measurement: a lineup's strategies are then compiled in its timed run)."""
    if what == "all":
        run(["-m", "sim.precompile"], env=env)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(sniff("simulate", "--players", "2", "--strategies", "greedy,random", "--games", "1",
                  "--out", str(Path(folder) / "warm"), "-q"), env=env)


def _edited_plugin(base: Path, k: int) -> float:
    """The docs' plugin with one constant changed: a fresh compile each time."""
    plugin = base / f"edit{k}"
    plugin.mkdir()
    (plugin / "my_strategy.py").write_text(PLUGIN.replace("100.0 *", f"{101 + k}.0 *"))
    seconds, _ = run(sniff("--plugin", "my_strategy", "simulate", "--players", "2",
                           "--strategies", "doubles_first,greedy", "--games", "20000",
                           "--seed", str(k), "--out", str(plugin / "run"), "-q"),
                     cwd=plugin, path=[str(plugin)])
    return seconds


def _new_plugin(base: Path, k: int) -> float:
    new = base / f"new{k}"
    new.mkdir()
    name = f"doubles_{k}"
    (new / f"plugin_{k}.py").write_text(PLUGIN.replace('"doubles_first"', f'"{name}"'))
    seconds, _ = run(sniff("--plugin", f"plugin_{k}", "simulate", "--players", "2",
                           "--strategies", f"{name},greedy", "--games", "20000",
                           "--out", str(new / "run"), "-q"), cwd=new, path=[str(new)])
    return seconds


def _python_player(base: Path, k: int) -> float:
    player = base / f"python{k}"
    player.mkdir()
    (player / f"player_{k}.py").write_text(PYTHON_PLAYER.format(name=f"first_{k}"))
    seconds, _ = run(sniff("--plugin", f"player_{k}", "simulate", "--players", "2",
                           "--strategies", f"first_{k},greedy", "--games", "2",
                           "--out", str(player / "run"), "-q"),
                     cwd=player, path=[str(player)])
    return seconds


def _builtin_lineup(base: Path, k: int) -> float:
    lineup = BUILTIN_LINEUPS[k % len(BUILTIN_LINEUPS)]
    seconds, _ = run(sniff("simulate", "--players", "2", "--strategies", ",".join(lineup),
                           "--games", "1", "--seed", str(k), "--out", str(base / f"builtin{k}"),
                           "-q"))
    return seconds


# --waits NAME: (the figure's name, what is timed), in the order each repetition runs them
WAITS = {"edited-plugin": ("edited plugin", _edited_plugin),
         "new-plugin": ("new plugin", _new_plugin),
         "python-player": ("new Python player", _python_player),
         "lineup": ("built-in lineup", _builtin_lineup)}


def waits(repeats: int, names: tuple[str, ...] = tuple(WAITS), warm: str = "all") -> dict:
    warm_engine(what=warm)
    figures: dict[str, list[float]] = {WAITS[name][0]: [] for name in names}
    with tempfile.TemporaryDirectory() as folder:
        for k in range(repeats):
            for name in names:
                figure, timed = WAITS[name]
                figures[figure].append(timed(Path(folder), k))
    return {name: {"median_s": statistics.median(values), "runs_s": values}
            for name, values in figures.items()}


def cold() -> dict:
    """Each part on a machine of its own: a fresh cache, and the background compile it
    started stopped before the next part."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, SNIFF_CACHE_DIR=cache)
        env.pop("SNIFF_PRECOMPILE", None)  # as a user has it: the background compile on
        readme, _ = run(sniff("simulate", "--out", f"{out}/readme", "-q"), env=env)
        stop_background(Path(cache))
    return {"readme simulate_s": readme, **cold_serve()}


def cold_serve() -> dict:
    """``sniff serve`` on a machine with an empty cache: its first game, then its first hint."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SNIFF_CACHE_DIR=cache)
        env.pop("SNIFF_PRECOMPILE", None)
        first_game, first_hint = serve_first_game(env)
        stop_background(Path(cache))
    return {"serve first game_s": first_game, "serve first hint_s": first_hint}


def stop_background(cache: Path) -> None:
    """End the background compile that a part started in ``cache`` (its lock names it)."""
    import signal

    try:
        pid = int((cache / "kernels" / "precompile.lock").read_text().strip())
        os.killpg(pid, signal.SIGTERM)  # it runs in a session of its own
    except (OSError, ValueError):
        pass


def serve_first_game(env: dict) -> tuple[float, float]:
    """Seconds from ``sniff serve``'s address line to the first game's view, then to the
    first hint's answer."""
    server = subprocess.Popen([sys.executable, "-P", *sniff("serve", "--port", "0")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        address = None
        while address is None:
            line = server.stdout.readline()
            if not line:
                raise SystemExit("compile_once: sniff serve ended before printing its address")
            found = re.search(r"open (http://\S+/)", line)
            address = found.group(1) if found else None
        printed = time.perf_counter()
        page = urllib.request.urlopen(address, timeout=600).read().decode()
        token = re.search(r'name="sniff-token" content="([^"]+)"', page).group(1)

        def post(path: str, body: dict) -> dict:
            request = urllib.request.Request(
                address + path.lstrip("/"), data=json.dumps(body).encode(), method="POST",
                headers={"content-type": "application/json", "x-sniff-token": token,
                         "origin": address.rstrip("/")})
            return json.loads(urllib.request.urlopen(request, timeout=600).read())

        view = post("/api/games", {"players": 4, "seat": 0, "seed": 1})
        first_game = time.perf_counter() - printed
        started = time.perf_counter()
        post(f"/api/games/{view['session']}/hint", {"budget": 200})
        return first_game, time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)


RATE = """
import json, sys
from sim.run.bench import engine_rate
print(json.dumps(engine_rate(*map(int, sys.argv[1:2]), sys.argv[2], *map(int, sys.argv[3:]))))
"""
ROWS = [(players, strategy, threads) for players in (2, 3, 4)
        for strategy, threads in (("random", 1), ("greedy", 1), ("greedy", 2))]


def speed(baseline: Path, repeats: int) -> dict:
    """Each engine row and simulate's games/s, this code against ``baseline``'s, in
    alternating processes; the median of the per-pair ratios."""
    with tempfile.TemporaryDirectory() as other_cache:
        sides = {"this": (dict(os.environ), []),
                 "baseline": (dict(os.environ, SNIFF_CACHE_DIR=other_cache), [str(baseline)])}
        rows = []
        for players, strategy, threads in ROWS:
            rates: dict[str, list[float]] = {"this": [], "baseline": []}
            games = {"random": 20_000, "greedy": 60_000}[strategy] * threads
            for k in range(repeats):
                for side in (("this", "baseline") if k % 2 else ("baseline", "this")):
                    env, path = sides[side]
                    _, done = run(["-c", RATE, str(players), strategy, str(threads),
                                   str(games), "3"], env=env, path=path)
                    rates[side].append(json.loads(done.stdout)["games_per_s"])
            rows.append(_ratio_row(f"engine {players}p {strategy} {threads} thread(s)", rates))
        rates = {"this": [], "baseline": []}
        with tempfile.TemporaryDirectory() as out:
            for k in range(repeats):
                for side in (("this", "baseline") if k % 2 else ("baseline", "this")):
                    env, path = sides[side]
                    _, done = run(sniff("simulate", "--games", "400000", "--seed", str(k),
                                        "--out", f"{out}/{side}{k}"), env=env, path=path)
                    found = re.search(r"([\d,]+) games/s", done.stdout)
                    rates[side].append(float(found.group(1).replace(",", "")))
        rows.append(_ratio_row("simulate (README's run, 400,000 games)", rates))
    return {"rows": rows}


def _ratio_row(name: str, rates: dict[str, list[float]]) -> dict:
    ratios = [a / b for a, b in zip(rates["this"], rates["baseline"], strict=True)]
    return {"row": name, "this_games_per_s": statistics.median(rates["this"]),
            "baseline_games_per_s": statistics.median(rates["baseline"]),
            "ratio": statistics.median(ratios), "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("waits", "cold", "serve", "speed"),
                        help="what to measure (see the module's docstring)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (medians of them)")
    parser.add_argument("--baseline", type=Path,
                        help="speed: a checkout of the code to compare with")
    parser.add_argument("--waits", nargs="+", choices=tuple(WAITS), default=tuple(WAITS),
                        help="waits: the waits to time (default: all)")
    parser.add_argument("--warm", choices=("all", "engine"), default="all",
                        help="waits: what to compile before timing: all (what the background "
                             "compile compiles; the default) or engine (the game loop, greedy "
                             "and random: a quick check that the file runs)")
    arguments = parser.parse_args()
    if arguments.repeats < 1:
        parser.error("--repeats must be at least 1")
    if arguments.part == "waits":
        report = waits(arguments.repeats, tuple(arguments.waits), arguments.warm)
    elif arguments.part == "cold":
        report = cold()
    elif arguments.part == "serve":
        report = cold_serve()
    else:
        if arguments.baseline is None or not (arguments.baseline / "sim").is_dir():
            parser.error("speed needs --baseline DIR, a checkout of the code to compare with")
        report = speed(arguments.baseline.resolve(), arguments.repeats)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
