"""``play`` and ``replay --step`` read standard input in bounded lines (#51, campaign 2:
K263, K266): ``< /dev/zero`` (an endless line) grew to 12-15 GB; now one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import one_line, run_main

ENDLESS = "\0" * 70_000  # no newline within the bound, as /dev/zero gives


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    from tests.helpers.cli import invoke

    path = tmp_path_factory.mktemp("stdin") / "t.jsonl"
    code, out, err = invoke(["trace", "--players", "2", "--games", "1", "--seed", "1",
                             "--strategies", "greedy,random", "-o", str(path)])
    assert code == 0, err
    return path


@pytest.mark.parametrize("command", [["play", "--seed", "3", "--players", "2"],
                                     ["replay", "--step", "{trace}"]])
def test_an_endless_input_line_is_one_line(trace, capsys, command) -> None:
    args = [part.format(trace=trace) for part in command]
    code, out, err = run_main(args, capsys, stdin=ENDLESS)
    one_line(code, err, "a line of standard input is longer than 65,536 characters")


def test_answers_of_ordinary_length_still_play(trace, capsys) -> None:
    code, out, err = run_main(["replay", "--step", str(trace)], capsys, stdin="\n" * 3 + "q\n")
    assert code == 0, err
