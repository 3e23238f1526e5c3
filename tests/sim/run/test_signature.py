"""What a run records as the code that played it: the engine's version and each strategy's
behaviour signature (``sim.run.signature``), never a hash of its source.

A refactor that plays the same games keeps a strategy's signature (another module, another
name, other docstrings and locals; a Python player that plays greedy's moves is greedy); a
changed constant or parameter that changes its play moves it; the engine's fixed games are
pinned to ``ENGINE_VERSION``; ``--resume`` refuses a folder of another engine or signature
in one line naming both.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numba
import pytest

from sim.core.identity import ENGINE_GAMES, ENGINE_VERSION
from sim.kernels.runner import lineup_of
from sim.run.plan import resolve_plan
from sim.run.signature import (
    engine_games,
    lineup_identity,
    play_signature,
    strategy_signature,
)
from sim.run.simulation import execute
from strategies import kept_registry, load_plugin, parse_spec
from tests.helpers import ROOT
from tests.helpers.cli import run_main

PLUGINS = ROOT / "tests" / "plugins"

PLUGIN = '''"""{doc}"""
from numba import njit

from strategies import register

SHIFT = {shift}


@register("{name}", "the first legal move, or the last", params={{"last": 0.0}})
@njit
def choose(observation, moves, n_moves, params, rng):
    """{doc}"""
    {local} = min(SHIFT, n_moves - 1)
    if params[0] > 0.5:
        return n_moves - 1 - {local}
    return {local}
'''


def _plugin(folder: Path, module: str, **fields) -> None:
    text = PLUGIN.format(**{"doc": "Plays the first move.", "shift": 0, "local": "pick",
                            **fields})
    (folder / f"{module}.py").write_text(text)


def test_the_engine_plays_the_games_its_version_records() -> None:
    found = engine_games()
    assert found == ENGINE_GAMES, (
        f"the engine's fixed games changed (hash {found}, recorded {ENGINE_GAMES} for engine "
        f"{ENGINE_VERSION}): if the rules' games were meant to change, bump ENGINE_VERSION in "
        f"sim/core/identity.py and record ENGINE_GAMES = {found!r} in the same commit")


def test_a_refactor_keeps_the_signature_and_a_change_of_play_moves_it(tmp_path,
                                                                        monkeypatch) -> None:
    _plugin(tmp_path, "first_move", name="first_move")
    _plugin(tmp_path, "moved_first", name="moved_first", local="index",
            doc="The same play, other words: the leftmost legal move.")
    _plugin(tmp_path, "second_move", name="second_move", shift=1)
    monkeypatch.syspath_prepend(str(tmp_path))
    with kept_registry():
        for module in ("first_move", "moved_first", "second_move"):
            load_plugin(module)
        first = strategy_signature(parse_spec("first_move"), 2)
        assert strategy_signature(parse_spec("moved_first"), 2) == first  # a refactor
        assert strategy_signature(parse_spec("second_move"), 2) != first  # a new constant
        assert strategy_signature(parse_spec("first_move:last=1"), 2) != first  # a parameter
        assert strategy_signature(parse_spec("first_move"), 3) != first  # another table


def test_a_python_player_that_plays_greedys_moves_is_greedy(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.delitem(sys.modules, "python_player", raising=False)  # registers on import
    with kept_registry():
        load_plugin("python_player")
        greedy = strategy_signature(parse_spec("greedy"), 2)
        assert strategy_signature(parse_spec("greedy_numpy"), 2) == greedy
        assert strategy_signature(parse_spec("heavy_numpy"), 2) != greedy


def test_a_built_in_parameter_moves_the_signature() -> None:
    assert strategy_signature(parse_spec("expert:budget=64"), 2) != strategy_signature(
        parse_spec("expert"), 2)


@pytest.mark.parametrize("name", ["greedy", "expert:budget=64"])
def test_the_signature_is_the_same_on_one_thread_or_two(name) -> None:
    spec = parse_spec(name)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        alone = play_signature(spec, 3)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        assert play_signature(spec, 3) == alone == strategy_signature(spec, 3)
    finally:
        numba.set_num_threads(before)


def test_a_lineup_records_its_engine_and_each_distinct_spec() -> None:
    lineup = lineup_of(4, [parse_spec("greedy"), parse_spec("random")])
    assert lineup_identity(lineup) == {"engine": ENGINE_VERSION, "strategies": {
        "greedy": strategy_signature(parse_spec("greedy"), 4),
        "random": strategy_signature(parse_spec("random"), 4)}}


@pytest.fixture
def small_run(tmp_path) -> Path:
    folder = tmp_path / "run"
    execute(resolve_plan({"games": 40, "players": 2, "chunk_size": 20, "seed": 4}), folder)
    return folder


def _edited(folder: Path, edit) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    edit(manifest["identity"])
    path.write_text(json.dumps(manifest))


def _refusal(folder: Path, capsys) -> str:
    code, _, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    line = err.strip()
    assert code == 2 and "\n" not in line and line.startswith(
        f"sniff: error: cannot resume {folder}: it was written by engine "), err
    assert line.endswith("start again with --overwrite"), line
    return line


def test_a_resume_of_another_engine_is_refused_in_one_line(small_run, capsys) -> None:
    _edited(small_run, lambda identity: identity.update(engine=ENGINE_VERSION + 7))
    line = _refusal(small_run, capsys)
    assert f"engine {ENGINE_VERSION + 7}; this code plays engine {ENGINE_VERSION}," in line


def test_a_resume_of_another_signature_is_refused_in_one_line(small_run, capsys) -> None:
    ours = strategy_signature(parse_spec("greedy"), 2)
    _edited(small_run, lambda identity: identity["strategies"].update(greedy="0123abcd"))
    line = _refusal(small_run, capsys)
    assert f"with greedy=0123abcd; this code plays greedy as {ours}," in line


def test_a_resume_of_the_same_identity_plays_on(small_run, capsys) -> None:
    (small_run / "games" / "part-000001.parquet").unlink()
    code, _, err = run_main(["simulate", "--out", str(small_run), "--resume", "-q"], capsys)
    assert code == 0, err
    manifest = json.loads((small_run / "manifest.json").read_text())
    assert manifest["identity"] == lineup_identity(lineup_of(2, [parse_spec("greedy"),
                                                                 parse_spec("random")]))
