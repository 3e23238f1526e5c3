"""One mistake, two wordings: a library call names its settings as Python names, the command
line names them as its flags (``sim.errors.SettingError``, worded by ``sim.cli.options``).

For each reader below (``sim.load``, ``Run.query``, the hint of a position or a trace, a
report, a replayed trace, an output folder), the library's refusal is asserted word for word
in Python terms and the same mistake made on the command line must print exactly the CLI's
wording of that refusal, with its flags.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sim
from sim.cli.options import error_text, flag_of
from sim.errors import SettingError
from sim.hint.estimate import analyse
from sim.hint.position import parse_position
from sim.hint.tracker import position_from_trace
from sim.kernels.trace import trace_games
from sim.report.build import build
from sim.table.replay import read_trace, replay
from tests.helpers.cli import POSITION_TEXT, run_main

POSITION = POSITION_TEXT
ENDLESS = "select count(*) from range(100000000000) a where a % 7 = 3"


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    """A trace of one 2-player game."""
    path = tmp_path_factory.mktemp("wording") / "game.jsonl"
    events = trace_games(2, 5, ["greedy", "blocker"], 1)
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


@pytest.fixture(scope="module")
def no_rounds(tmp_path_factory) -> Path:
    """A run played without its rounds table."""
    folder = tmp_path_factory.mktemp("wording") / "run"
    sim.simulate(2, "greedy,random", 100, 1, out=folder, rounds=False)
    return folder


def refused(call, *args, **kwargs) -> SettingError:
    with pytest.raises(SettingError) as caught:
        call(*args, **kwargs)
    return caught.value


def same_on_the_command_line(error: SettingError, args: list[str], capsys) -> str:
    """The command line refuses ``args`` with exactly its own wording of ``error``."""
    code, _, err = run_main(args, capsys)
    worded = error_text(error)
    assert code == 2 and err == f"sniff: error: {worded}\n", err
    return worded


def test_a_run_without_rounds(no_rounds, tmp_path, capsys) -> None:
    error = refused(sim.load(no_rounds).table, "rounds")
    assert str(error) == "this run was played with rounds=False: it has no rounds table"
    assert error_text(error) == "this run was played with --no-rounds: it has no rounds table"
    error = refused(build, [no_rounds])
    assert str(error) == (f"{no_rounds} was played with rounds=False and a report needs its "
                          "rounds table: play it again without rounds=False")
    worded = same_on_the_command_line(
        error, ["report", str(no_rounds), "-o", str(tmp_path / "report")], capsys)
    assert worded.endswith("play it again without --no-rounds")


def test_a_query_past_its_time_limit(no_rounds, capsys) -> None:
    error = refused(sim.load(no_rounds).query, ENDLESS, timeout=0.5)
    assert str(error).endswith("was stopped: aggregate more, or give a longer timeout")
    code, _, err = run_main(["query", str(no_rounds), ENDLESS, "--timeout", "0.5"], capsys)
    assert code == 2 and err == f"sniff: error: {error_text(error)}\n"
    assert err.endswith("give a longer --timeout\n")


def test_a_hint_budget(tmp_path, capsys) -> None:
    error = refused(analyse, parse_position(POSITION), budget=1)
    assert str(error) == "budget must be 2..100,000 play-outs per move, got 1"
    path = tmp_path / "position.txt"
    path.write_text(POSITION)
    worded = same_on_the_command_line(error, ["hint", str(path), "--budget", "1"], capsys)
    assert worded == "--budget must be 2..100,000 play-outs per move, got 1"


def test_a_hint_from_a_trace(traced, capsys) -> None:
    events = read_trace(traced)
    error = refused(position_from_trace, events, 7, 1, 1)
    assert str(error) == "game=7 is out of range: the trace holds 1 game (0..0)"
    same_on_the_command_line(error, ["hint", "--trace", str(traced), "--game", "7", "--round",
                                     "1", "--turn", "1"], capsys)
    error = refused(position_from_trace, events, 0, 99, 1)
    assert str(error).startswith("round_number=99 is not in game 0 of the trace")
    worded = same_on_the_command_line(
        error, ["hint", "--trace", str(traced), "--round", "99", "--turn", "1"], capsys)
    assert worded.startswith("--round 99 is not in game 0")


def test_a_replayed_trace(traced, capsys) -> None:
    error = refused(replay, traced, 3, print)
    assert str(error) == f"game=3 is out of range: {traced} holds 1 game (0..0)"
    worded = same_on_the_command_line(error, ["replay", str(traced), "--game", "3"], capsys)
    assert worded.startswith("--game 3 is out of range")


def test_an_output_folder_that_is_a_file(tmp_path, capsys) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x")
    error = refused(sim.simulate, 2, "greedy,random", 10, 1, out=taken)
    assert str(error) == f"out {taken} is a file; give a folder (it is created if missing)"
    worded = same_on_the_command_line(
        error, ["simulate", "--games", "10", "--out", str(taken)], capsys)
    assert worded.startswith(f"--out {taken} is a file")


def test_settings_whose_flags_have_other_names() -> None:
    assert flag_of("round_number=99") == "--round 99"
    assert flag_of("trace_path") == "--trace"
    assert flag_of("check_space=False") == "--ignore-disk-space"
    assert flag_of("parquet=OUT") == "--parquet OUT"
