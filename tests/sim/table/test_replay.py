"""``sniff replay`` and ``sniff tally`` as commands: output, --step, and one-line errors.

``play`` and ``replay --step`` read standard input in bounded lines (#51, campaign 2:
K263, K266): ``< /dev/zero`` (an endless line) grew to 12-15 GB; now one line, exit 2.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sim.table.tally import tally
from tests.helpers.cli import error_lines, one_line, run_main, sniff_here


def one_line_error(result: subprocess.CompletedProcess, text: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), result.stderr
    assert text in lines[0]


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "trace.jsonl"
    result = sniff_here("trace", "--players", "4", "--seed", "3", "--strategies", "greedy,random",
                   "--games", "2", "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def test_replay_shows_a_traced_game(traced) -> None:
    result = sniff_here("replay", str(traced), "--game", "1")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("══ game 1 · 4 players · target 200")
    for text in ("── round 1 · seat", "opens with", "ends L=", "count", "hands    seat 0:",
                 "scores   seats 0+2:", "game 1 over"):
        assert text in out, text
    assert "pips → " in out  # settlement: each hand's pips and their rounding


def test_replay_ascii(traced) -> None:
    result = sniff_here("replay", str(traced), "--ascii")
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii()
    assert "game 0 over" in result.stdout


def test_replay_step_waits_for_enter(traced) -> None:
    result = sniff_here("replay", str(traced), "--step", stdin="\n\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("[Enter: next event · q: stop]") == 3
    assert out.rstrip().endswith("(end of input: replay stopped)")
    assert "game 0 over" not in out


def test_replay_step_quits_on_q(traced) -> None:
    result = sniff_here("replay", str(traced), "--step", stdin="\nq\n\n\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("[Enter: next event") == 2
    assert result.stdout.rstrip().endswith("(replay stopped)")


@pytest.mark.parametrize("game", ["2", "-1"])
def test_replay_game_out_of_range(traced, game) -> None:
    one_line_error(sniff_here("replay", str(traced), "--game", game), "out of range")


def test_replay_bad_files(tmp_path) -> None:
    one_line_error(sniff_here("replay", str(tmp_path / "missing.jsonl")), "no such trace file")
    not_json = tmp_path / "notes.txt"
    not_json.write_text("hello\n")
    one_line_error(sniff_here("replay", str(not_json)), "line 1 is not JSON")
    not_events = tmp_path / "list.jsonl"
    not_events.write_text("[1, 2]\n")
    one_line_error(sniff_here("replay", str(not_events)), "not a trace event")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"event":"game_start","players":2}\n{"event":"play","seat":0}\n')
    one_line_error(sniff_here("replay", str(broken)), "not a valid trace event")


# ---------------------------------------------------------------- sniff tally


@pytest.mark.parametrize("points", [0, 5, 10, 45, 50, 135, 250])
def test_tally_values(points) -> None:
    result = sniff_here("tally", str(points))
    assert result.returncode == 0, result.stderr
    assert result.stdout == tally(points) + "\n"


def test_tally_pictures() -> None:
    assert sniff_here("tally", "0").stdout == "0\n"
    fifty = sniff_here("tally", "50").stdout.splitlines()
    assert fifty == ["╲ × ╱", "× ╳ ×", "╱ × ╲"]
    assert sniff_here("tally", "250").stdout.splitlines()[1] == "  ".join(["× ╳ ×"] * 5)
    assert sniff_here("tally", "135").stdout.splitlines()[2].endswith("╱ ∖ ╲")


def test_tally_negative_and_not_multiple_of_five() -> None:
    negative = sniff_here("tally", "-15")
    assert negative.returncode == 0, negative.stderr
    assert negative.stdout == tally(-15) + "\n"
    assert negative.stdout.splitlines()[1].startswith("−")
    odd = sniff_here("tally", "13")
    assert odd.stdout == tally(13) + "\n"
    assert "+3" in odd.stdout


def test_tally_ascii_and_inline() -> None:
    art = sniff_here("tally", "135", "--ascii").stdout
    assert art.isascii() and art == tally(135, ascii=True) + "\n"
    assert sniff_here("tally", "135", "--inline").stdout == "⊠⊠ ╳××∖ (135)\n"


def test_tally_help_says_what_negatives_and_remainders_show() -> None:
    help_text = sniff_here("tally", "--help").stdout
    assert "Negative" in help_text and "multiple of 5" in help_text


def test_tally_bad_points() -> None:
    one_line_error(sniff_here("tally", "lots"), "not a valid integer")


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
