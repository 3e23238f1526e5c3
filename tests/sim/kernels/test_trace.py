"""`sniff trace` end to end, as a user runs it: files, stdout, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.reference.oracle import check_trace, split_games
from tests.helpers.cli import error_lines, sniff_here


def test_trace_writes_checked_games_to_a_file(tmp_path: Path):
    out = tmp_path / "games.jsonl"
    done = sniff_here("trace", "--players", "4", "--seed", "9", "--strategies", "greedy,random",
                 "--games", "3", "-o", str(out))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in out.read_text().splitlines()]
    games = split_games(events)
    assert len(games) == 3
    for game in games:
        check_trace(game)
        # Per partnership: seats 0 and 2 play greedy, 1 and 3 random.
        assert game[0]["strategies"] == ["greedy", "random", "greedy", "random"]
    assert not list(tmp_path.glob("*.partial"))


def test_trace_to_stdout_is_the_same_as_to_a_file(tmp_path: Path):
    out = tmp_path / "one.jsonl"
    args = ("trace", "--players", "3", "--seed", "4", "--strategies", "greedy,random,greedy")
    to_file = sniff_here(*args, "-o", str(out))
    to_stdout = sniff_here(*args)
    assert to_file.returncode == 0 and to_stdout.returncode == 0
    assert to_stdout.stdout == out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "5", "--strategies", "greedy"], "must be 2, 3 or 4"),
        (["--players", "1", "--strategies", "greedy"], "must be 2, 3 or 4"),
        (["--players", "4", "--strategies", "greedy,nonsense"], "unknown strategy 'nonsense'"),
        (["--players", "3", "--strategies", "greedy,random"], "3 players need 3"),
        (["--players", "2", "--strategies", "greedy,random,greedy"], "2 players need 2"),
        (["--players", "2", "--strategies", "greedy,random", "--games", "0"], "positive"),
        (["--players", "2", "--strategies", "greedy,random", "--games", "-3"], "positive"),
        (["--players", "2", "--strategies", "greedy,random", "-o", "/nonexistent/dir/x.jsonl"],
         "does not exist"),
        (["--players", "two", "--strategies", "greedy,random"], "players"),
        (["--players", "2", "--strategies", "greedy:depth=3,random"], "bad parameter"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_a_non_zero_exit(args, message):
    done = sniff_here("trace", *args)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = error_lines(done.stderr)
    assert len(lines) == 1, done.stderr
    assert message in lines[0]
    assert done.stdout == ""


def test_unwritable_output_path_is_refused_cleanly(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = sniff_here("trace", "--players", "2", "--strategies", "greedy,random",
                 "-o", str(blocker / "x.jsonl"))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and len(error_lines(done.stderr)) == 1
