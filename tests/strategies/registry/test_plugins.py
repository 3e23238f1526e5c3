"""What a strategy is handed, and plugin mistakes: each gets one clear line.

A probe strategy scans every array the engine gives it (``tests/plugins/probe.py``); no
array may name a tile outside its own hand and the public record, and each seat draws from
its own random stream. Plugins that fail at import, are not compiled, have the wrong
signature or return type, reuse a registered name, or choose out of range are refused with
one line naming the plugin.

Python players (``strategies.register_python``): listed, played by every command that
plays lineups, recorded like a plugin, and refused in one line when they misbehave.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import strategies
from sim.core import engine
from sim.core.rng import GOLDEN, SALT_STRATEGY, stream_key
from sim.errors import SniffError
from sim.kernels.runner import ROUND_CAP, lineup_of, play_batch
from sim.run.signature import strategy_signature
from strategies import StrategyError, parse_lineup_text, parse_spec
from tests.helpers import TESTS
from tests.helpers.cli import error_lines, run_main

PLUGINS = TESTS / "plugins"

MASK64 = 2**64 - 1


@pytest.fixture(autouse=True)
def no_plugin_environment_leak() -> Iterator:
    """``--plugin`` loads its module in this process and writes nothing to the environment
    (a worker imports the modules its task names), so later tests' ``sniff`` subprocesses
    never try to import this file's plugins."""
    before = os.environ.get("SNIFF_PLUGINS")
    yield
    assert os.environ.get("SNIFF_PLUGINS") == before


@pytest.fixture(scope="module")
def probe() -> Iterator:
    """The probe plugins, registered for this module's tests (imported once)."""
    with pytest.MonkeyPatch.context() as patch, strategies.kept_registry():
        patch.syspath_prepend(str(PLUGINS))
        strategies.load_plugin("probe")
        import probe as module

        yield module


@pytest.mark.parametrize("players", [2, 3, 4])
def test_probe_sees_no_tile_outside_its_hand_and_the_table(probe, players: int) -> None:
    lineup = lineup_of(players, parse_lineup_text(",".join(["probe"] * players)))
    seed = 11
    for game in range(6):
        probe.SEEN.clear()
        # Room for every round: no pilot batch, so the game is played exactly once.
        play_batch(lineup, seed, np.array([game]), round_slots=ROUND_CAP)
        assert len(probe.SEEN) > 5
        calls = [0] * players
        for seat, hand, played, named, legal, stream, width, marker in probe.SEEN:
            # The legal moves are there (the probe does read the buffer) ...
            assert legal and legal & ~hand == 0
            assert named & legal == legal
            # ... and nothing else: no slot names another seat's or the boneyard's tile.
            assert named & ~(hand | played) == 0, (seat, hex(named & ~(hand | played)))
            assert width == 1 and marker == 7
            # Each seat's stream is its own, keyed by game and seat, advanced only by its
            # own draws (one per decision): the other seats neither see nor shift it.
            key = int(stream_key(np.uint64(seed), game, seat, SALT_STRATEGY))
            assert stream == (key + calls[seat] * int(GOLDEN)) & MASK64
            calls[seat] += 1
        assert all(calls)


def test_a_choice_out_of_range_stops_the_run_naming_the_strategy(probe) -> None:
    lineup = lineup_of(2, parse_lineup_text("random,out_of_range"))
    with pytest.raises(SniffError) as error:
        play_batch(lineup, 3, np.arange(8))
    message = str(error.value)
    assert "strategy 'out_of_range' (module probe) returned a move index out of range" in message
    assert "seat 1" in message and "\n" not in message


def write_plugin(folder: Path, name: str, body: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(body))


BROKEN = {
    "raises_on_import": (
        "x = 1 / 0\n",
        "plugin 'raises_on_import' failed to import: ZeroDivisionError: division by zero",
    ),
    "exits_on_import": (  # #63: sniff ended with exit 3 and no word
        "import sys\nsys.exit(3)\n",
        "plugin 'exits_on_import' called sys.exit(3) while it was imported",
    ),
    "base_exception_on_import": (
        "raise GeneratorExit('closed')\n",
        "plugin 'base_exception_on_import' failed to import: GeneratorExit: closed",
    ),
    "needs_missing_package": (
        "import no_such_package_for_sniff\n",
        "plugin 'needs_missing_package' failed to import: ModuleNotFoundError: "
        "No module named 'no_such_package_for_sniff'",
    ),
    "not_compiled": (
        """
        from strategies import register

        @register("not_compiled", "a plain Python function")
        def choose(observation, moves, n_moves, params, rng):
            return 0
        """,
        "strategy 'not_compiled' in module not_compiled: choose must be compiled with numba's "
        "@njit",
    ),
    "taken_name": (
        """
        from numba import njit
        from strategies import register

        @register("greedy", "reuses a built-in name")
        @njit
        def choose(observation, moves, n_moves, params, rng):
            return 0
        """,
        "strategy 'greedy' in module taken_name is already registered by module "
        "strategies.heuristics.greedy",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_plugins_are_one_line(name: str, tmp_path: Path, capsys, monkeypatch) -> None:
    body, message = BROKEN[name]
    write_plugin(tmp_path, name, body)
    monkeypatch.syspath_prepend(str(tmp_path))
    with strategies.kept_registry():
        code, _, err = run_main(["--plugin", name, "strategies"], capsys)
    assert code == 2
    assert error_lines(err) == [error_lines(err)[0]] and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("def choose(observation, moves, n_moves):\n    return 0\n",
         "does not compile with the engine's argument types: TypeError: Signature mismatch"),
        ("def choose(observation, moves, n_moves, params, rng):\n    return 0.5\n",
         "choose must return an integer index, it returns float64"),
    ],
)
def test_plugins_with_a_wrong_signature_are_one_line(
    body: str, message: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    name = "wrong_signature" if "params" not in body else "wrong_return"
    header = f"from numba import njit\nfrom strategies import register\n\n" \
             f"@register({name!r}, 'broken')\n@njit\n"
    write_plugin(tmp_path, name, header + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    with strategies.kept_registry():
        code, _, err = run_main(
            ["--plugin", name, "simulate", "--players", "2", "--strategies", f"{name},random",
             "--games", "10", "-q", "-o", str(tmp_path / "run")], capsys,
        )
    assert code == 2
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"sniff: error: strategy {name!r}"), err
    assert message in lines[0]
    assert not any(tmp_path.rglob("*.parquet"))


def test_registering_a_name_twice_from_one_module_replaces_it() -> None:
    """A module imported again (a notebook's reload) may register its names again."""
    from strategies.heuristics.greedy import choose_greedy

    before = strategies.get("greedy")
    strategies.register("greedy", before.description)(choose_greedy)
    assert strategies.get("greedy") == before
    with pytest.raises(StrategyError):
        strategies.register("greedy", "again")(lambda *a: 0)


@pytest.mark.parametrize("command", [
    ["simulate", "--players", "2", "--strategies", "raiser,random", "--games", "50", "-q",
     "-o", "OUT"],
    ["tournament", "--players", "2", "--strategies", "raiser,random", "--games-per-pair", "50",
     "-q", "-o", "OUT"],
    ["trace", "--players", "2", "--strategies", "raiser,random", "-o", "OUT"],
])
def test_a_plugin_that_raises_inside_the_engine_is_one_line(command, tmp_path, capsys,
                                                            monkeypatch) -> None:
    """numba's "SystemError: CPUDispatcher(...) returned a result with an
    exception set" (39 lines, exit 1) becomes one line naming the strategy and the message."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.delitem(sys.modules, "raiser", raising=False)  # registers again on import
    with strategies.kept_registry():
        args = [str(tmp_path / "out") if part == "OUT" else part for part in command]
        code, _, err = run_main(["--plugin", "raiser", *args], capsys)
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("sniff: error: strategy 'raiser' (module raiser) raised "
                               "ValueError: no idea what to play inside the compiled engine")
    assert "Traceback" not in err and "SystemError" not in err


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
    assert manifest["identity"]["strategies"]["heavy_numpy"] == strategy_signature(
        parse_spec("heavy_numpy"), 2)  # a Python player's play is signed too
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
