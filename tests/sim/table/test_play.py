"""``sniff play``: a person's seat driven through the compiled engine, input piped on stdin.

Every game runs the real command in its own process (the human kernel is cached after its
first compile, so each later run only loads it, about 2 s). Games are not played in the
test process itself: numba names the engine's closures (``make_game_player``) with a
per-process counter, so two cached kernels compiled in different processes can share
symbol names, and a process that loaded another kernel first may run that kernel's game
loop instead (the person is then never asked).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sim.table.play import person_lineup
from strategies import parse_spec
from tests.helpers.cli import error_lines, sniff, sniff_here

try:
    from sim.reference.oracle import check_trace
except ImportError:  # the rules oracle is optional here
    check_trace = None

ALWAYS_FIRST = "1\n" * 3000  # more answers than any game needs




def read_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check_rules(events: list[dict]) -> None:
    if check_trace is not None:
        check_trace(events)


@pytest.fixture(scope="module")
def scripted_game(tmp_path_factory):
    """A whole 2-player game on stdin: three bad answers first, then always placement 1."""
    trace = tmp_path_factory.mktemp("play") / "game.jsonl"
    result = sniff_here(
        "play", "--players", "2", "--seat", "1", "--opponents", "greedy", "--seed", "7",
        "--trace", str(trace), stdin="99\nabc\n\n" + ALWAYS_FIRST,
    )
    return result, trace


def test_scripted_game_plays_to_the_end(scripted_game) -> None:
    result, trace = scripted_game
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("result: you ")
    assert f"trace saved to {trace}" in result.stdout
    assert "game 0 over" in result.stdout
    assert "your hand:" in result.stdout and "legal placements:" in result.stdout


def test_saved_trace_is_a_valid_game(scripted_game) -> None:
    _, trace = scripted_game
    events = read_events(trace)
    assert events[0]["event"] == "game_start"
    assert events[0]["strategies"] == ["greedy", "human"]
    assert events[0]["seed"] == 7
    assert events[-1]["event"] == "game_end"
    check_rules(events)


def test_every_move_of_the_person_is_asked_or_explained(scripted_game) -> None:
    """A placement the engine made without asking (a single legal move) is reported."""
    result, trace = scripted_game
    events = read_events(trace)
    plays = sum(1 for e in events if e["event"] == "play" and e["seat"] == 1)
    asked = len(re.findall(r"^your move \(1-\d+, q to quit\): 1$", result.stdout, re.M))
    automatic = result.stdout.count("played it for you") + result.stdout.count(
        "placed there at once"
    )
    assert plays == asked + automatic
    draws = [e for e in events if e["event"] == "draw" and e["seat"] == 1]
    for draw in draws:
        assert f"you draw {draw['tile']}" in result.stdout


def test_others_hands_and_draws_stay_hidden(scripted_game) -> None:
    result, trace = scripted_game
    events = read_events(trace)
    assert not re.search(r"seat 0 draws \d-\d", result.stdout)
    assert "seat 0 draws a tile" in result.stdout or not any(
        e["event"] == "draw" and e["seat"] == 0 for e in events
    )
    for event in events:
        if event["event"] == "round_start":
            assert " ".join(event["hands"][0]) not in result.stdout


def test_bad_input_is_refused_and_asked_again(scripted_game) -> None:
    result, _ = scripted_game
    out = result.stdout
    assert "there is no placement 99: type a number from 1 to" in out
    assert "'abc' is not a placement number" in out
    assert "please type a placement number" in out
    first = out.index("your move (")
    prompts = re.findall(r"^your move \(1-\d+, q to quit\): (.*)$", out[first:], re.M)
    assert prompts[:4] == ["99", "abc", "", "1"]


def test_saved_trace_replays(scripted_game) -> None:
    _, trace = scripted_game
    result = sniff_here("replay", str(trace))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("══ game 0 · 2 players")
    assert "seat 1: human" in result.stdout
    assert "game 0 over" in result.stdout


def test_end_of_input_mid_game_is_one_line(tmp_path) -> None:
    trace = tmp_path / "cut.jsonl"
    result = sniff_here("play", "--seed", "7", "--trace", str(trace), stdin="1\n1\n")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert error_lines(result.stderr) == [
        "sniff: error: play aborted: input ended before the game did"
    ]
    assert not trace.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "2", "--seat", "2"], "--seat must be 0..1"),
        (["--players", "3", "--opponents", "greedy,random,random"], "--opponents needs 1"),
        (["--opponents", "human"], "unknown strategy 'human'"),
        (["--players", "5"], "must be 2, 3 or 4"),
    ],
)
def test_bad_options_are_one_line(args, message) -> None:
    result = sniff_here("play", *args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(error_lines(result.stderr)) == 1
    assert message in result.stderr


def test_human_is_not_a_strategy_for_simulate_or_trace() -> None:
    from strategies import StrategyError, available

    assert "human" not in available()
    with pytest.raises(StrategyError):
        parse_spec("human")


# ---------------------------------------------------------------- more games and seats


@pytest.mark.parametrize(
    ("players", "seat", "opponents", "seed"),
    [(3, 2, "greedy,random", 3), (4, 1, "greedy,random,random", 11)],
)
def test_whole_games_with_more_players(tmp_path, players, seat, opponents, seed) -> None:
    path = tmp_path / "game.jsonl"
    result = sniff_here("play", "--players", str(players), "--seat", str(seat), "--opponents",
                   opponents, "--seed", str(seed), "--trace", str(path), "--ascii",
                   stdin=ALWAYS_FIRST)
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii()
    events = read_events(path)
    check_rules(events)
    labels = events[0]["strategies"]
    assert labels[seat] == "human" and labels.count("human") == 1
    assert result.stdout.rstrip().splitlines()[-1].startswith("result: ")
    assert "your move (" in result.stdout
    if players == 4:
        assert f"partnered with seat {(seat + 2) % 4}" in result.stdout


def test_quit_stops_the_game(tmp_path) -> None:
    """q is what the person asked for: a quiet exit 0, not an error. Two processes of their
    own: the second, a new process, must find the kernel cached (no compile notice)."""
    result = sniff("play", "--seed", "1", "--trace", str(tmp_path / "q.jsonl"), stdin="q\n")
    assert result.returncode == 0, result.stderr
    assert error_lines(result.stderr) == []
    assert result.stdout.rstrip().endswith("you quit the game; nothing was saved")
    assert not (tmp_path / "q.jsonl").exists()
    # The kernel is cached now (this very game compiled or loaded it): no compile notice.
    again = sniff("play", "--seed", "1", "--trace", str(tmp_path / "q.jsonl"), stdin="q\n")
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr


def test_a_trace_folder_that_refuses_writes_is_refused_before_the_game(tmp_path) -> None:
    """Item 13: the game is not played (and lost) when its trace cannot be saved."""
    result = sniff_here("play", "--seed", "1", "--trace", "/sys/sniff-test.jsonl", stdin="1\n" * 50)
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        line for line in error_lines(result.stderr) if line.startswith("sniff: error: cannot "
                                                                       "write to /sys")]
    assert len(error_lines(result.stderr)) == 1 and "your move" not in result.stdout


def test_one_opponent_name_fills_every_other_seat() -> None:
    lineup = person_lineup(4, 2, [parse_spec("greedy")])
    assert [spec.strategy.name for spec in lineup.seats] == ["greedy", "greedy", "human", "greedy"]
    lineup = person_lineup(3, 0, [parse_spec("greedy"), parse_spec("random")])
    assert [spec.strategy.name for spec in lineup.seats] == ["human", "greedy", "random"]
