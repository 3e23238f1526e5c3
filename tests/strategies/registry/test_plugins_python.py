"""Python players (``strategies.register_python``): listed, played by every command that
plays lineups, recorded like a plugin, and refused in one line when they misbehave."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import strategies
from sim.core import engine
from sim.kernels.runner import lineup_of, play_batch
from strategies import parse_spec
from tests.helpers import TESTS
from tests.helpers.cli import error_lines, run_main

PLUGINS = TESTS / "plugins"


@pytest.fixture
def plugins(monkeypatch):
    """The example Python players registered for one test, the registry restored after."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.setenv("SNIFF_PLUGINS", "")
    with strategies.kept_registry():
        for module in ("python_player", "python_bad"):
            monkeypatch.delitem(sys.modules, module, raising=False)
            strategies.load_plugin(module)
        yield


def test_python_player_games_do_not_depend_on_batching(plugins):
    lineup = lineup_of(3, [parse_spec("heavy_numpy"), parse_spec("greedy"),
                           parse_spec("heavy_numpy")])
    ids = np.arange(100, 160, dtype=np.int64)
    whole = play_batch(lineup, 5, ids, rotations=ids % 3)
    parts = [play_batch(lineup, 5, ids[a:b], rotations=ids[a:b] % 3)
             for a, b in ((0, 17), (17, 60))]
    np.testing.assert_array_equal(whole.games, np.concatenate([p.games for p in parts]))
    np.testing.assert_array_equal(
        whole.round_rows, np.concatenate([p.round_rows for p in parts]))
    assert whole.games[:, engine.GAME_DECISIONS].sum() > 0
    assert np.all(whole.games[:, engine.GAME_WINNER_TEAM] >= 0)
    # the rotation put each lineup position in every seat; seat_specs index lineup.specs
    assert set(whole.seat_specs[:, :3].ravel().tolist()) == {0, 1}


def test_listed_and_recorded_like_a_plugin(plugins, capsys, tmp_path):
    code, out, _ = run_main(["--plugin", "python_player", "strategies"], capsys)
    assert code == 0
    listed = out.splitlines()
    at = next(i for i, line in enumerate(listed) if line.startswith("heavy_numpy"))
    assert "Python player (module python_player" in listed[at + 1]
    run = tmp_path / "run"
    code, out, err = run_main(["--plugin", "python_player", "simulate", "--players", "2",
                               "--strategies", "heavy_numpy,random", "--games", "300", "-q",
                               "-o", str(run)], capsys)
    assert code == 0, err
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["modules"][0] == "python_player"
    assert manifest["kernel"]  # the code digest covers the Python module too
    code, out, err = run_main(["--plugin", "python_player", "tournament", "--players", "2",
                               "--strategies", "heavy_numpy,random", "--games-per-pair", "60",
                               "-q", "-o", str(tmp_path / "t")], capsys)
    assert code == 0, err


@pytest.mark.parametrize(("player", "says"), [
    ("py_raiser", "raised RuntimeError: the model file is missing"),
    ("py_illegal", "returned the illegal move 112 in game"),
    ("py_short", "must return"),
    # #63: these ended in a traceback (MemoryError, GeneratorExit), or in exit 0 with
    # nothing written (sys.exit)
    ("py_memory", "raised MemoryError"),
    ("py_generator_exit", "raised GeneratorExit: closed"),
    ("py_exit", "called sys.exit(0)"),
    # #63 (scripts/campaign.py): numpy's error making its answer an array was a traceback
    ("py_bad_array", "returned _NotAnArray, not integer action ids (ValueError: no array here)"),
])
@pytest.mark.parametrize("command", ["simulate", "tournament", "openings"])
def test_a_misbehaving_python_player_is_one_line_and_no_run(plugins, capsys, tmp_path,
                                                            player, says, command):
    out = tmp_path / "out"
    size = {"simulate": ["--games", "50", "--strategies", f"{player},greedy"],
            "tournament": ["--games-per-pair", "50", "--strategies", f"{player},greedy"],
            "openings": ["--deals", "4", "--strategies", player]}[command]
    code, _, err = run_main(["--plugin", "python_bad", command, "--players", "2", *size,
                             "-q", "-o", str(out)], capsys)
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert f"strategy '{player}' (module python_bad, Python)" in lines[0]
    assert says in lines[0]
    assert "Traceback" not in err
    # refused at the first game: nothing written (#63: a tournament left pairs/,
    # tournament.json and .lock, an openings study its study.json and .lock)
    assert not out.exists(), sorted(p.name for p in out.iterdir())
    out.mkdir()  # a folder of the user's own is left as it was: empty
    code, _, err = run_main(["--plugin", "python_bad", command, "--players", "2", *size,
                             "-q", "-o", str(out)], capsys)
    assert code == 2 and says in err, err
    assert out.is_dir() and not list(out.iterdir())


def test_play_against_a_python_player_is_one_line_in_user_terms(plugins, capsys, tmp_path):
    """#63: ``sniff play --opponents <Python player>`` answered in internal terms ("make its
    position OUTSIDE and call it on the Decisions")."""
    code, out, err = run_main(["--plugin", "python_player", "play", "--players", "2",
                               "--opponents", "heavy_numpy", "--seed", "1", "--trace",
                               str(tmp_path / "t.jsonl")], capsys, stdin="1\n" * 40)
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and "heavy_numpy is a Python player" in lines[0], err
    assert "sniff play takes compiled strategies only" in lines[0]
    assert "OUTSIDE" not in err and "Decisions" not in err
    assert not (tmp_path / "t.jsonl").exists()


def test_a_python_player_given_the_engines_move_order_plays_as_the_built_in(plugins):
    """#63: Python players got only masks, in action-id order, so none could reproduce a
    built-in's ties (a greedy clone differed on 1,098 of 92,654 decisions); a policy of
    four arguments gets the legal moves in the engine's order too."""
    ids = np.arange(300, dtype=np.int64)
    games = {}
    for name in ("greedy", "greedy_numpy"):
        lineup = lineup_of(2, [parse_spec(name), parse_spec("random")])
        games[name] = play_batch(lineup, 7, ids, rotations=ids % 2).games
    np.testing.assert_array_equal(games["greedy"], games["greedy_numpy"])
