"""What the command line prints is one line for odd input and data shown as data (#51):
huge integers in a trace, a terminal that cannot show Unicode, a chart backend that does not
exist, a label that looks like mathtext, HTML or terminal escapes in names."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import sim
from sim.display import charts
from sim.display.blocks import Paragraph, Table, to_markdown
from sim.display.formatting import printable
from tests.helpers.cli import ROOT, SNIFF, one_line, run_main, sniff


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("text") / "t.jsonl"
    code = sniff("trace", "--strategies", "greedy,random", "-o", str(path)).returncode
    assert code == 0
    return path


@pytest.mark.parametrize("command", [["replay"], ["replay", "--analyze"],
                                     ["hint", "--round", "1", "--turn", "1", "--trace"]])
def test_an_integer_of_thousands_of_digits_is_one_line(trace, tmp_path, capsys,
                                                       command) -> None:
    lines = trace.read_text().splitlines()
    event = json.loads(lines[3])
    key = next(k for k, v in event.items() if isinstance(v, int))
    lines[3] = lines[3].replace(f'"{key}":{event[key]}', f'"{key}":' + "9" * 5000, 1)
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_main([*command, str(path)], capsys)
    one_line(code, err, "line 4 is not JSON sniff writes")


def test_an_ascii_terminal_gets_escapes_not_a_traceback(trace) -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = subprocess.run([*SNIFF, "replay", str(trace)], capture_output=True, env=env,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    assert b"\\u2550" in result.stdout  # the box-drawing rule, escaped


def test_a_chart_backend_that_does_not_exist_is_not_used(tmp_path) -> None:
    run = tmp_path / "run"
    sim.simulate(2, "greedy,random", 60, 1, out=run)
    env = dict(os.environ, MPLBACKEND="nonsense")
    result = sniff("report", str(run), "-o", str(tmp_path / "r"), "--placement-sample", "0",
                   env=env)
    assert result.returncode == 0 and (tmp_path / "r" / "report.html").is_file(), result.stderr


def test_a_label_is_drawn_as_written_not_as_mathtext() -> None:
    frame = pd.DataFrame({"run": ["r", "r"], "side": [r"$\frac{", "b$x$"],
                          "win_rate": [0.5, 0.5], "low": [0.4, 0.4], "high": [0.6, 0.6],
                          "games": [10, 10]})
    assert charts.png_bytes(charts.win_rates(frame, 2)).startswith(b"\x89PNG")


def test_names_are_data_in_the_terminal_and_in_markdown(trace, tmp_path, capsys) -> None:
    assert printable("a\x1b]0;owned\x07b\u202e\n") == "a\\x1b]0;owned\\x07b\\u202e\n"
    lines = trace.read_text().splitlines()
    start = json.loads(lines[0])
    start["strategies"][0] = "greedy\x1b[2J\x1b]0;title\x07"
    lines[0] = json.dumps(start)
    path = tmp_path / "escape.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_main(["replay", str(path)], capsys)
    assert code == 0 and "\x1b" not in out and "greedy\\x1b[2J" in out, err
    markdown = to_markdown([Paragraph("side <script>alert(1)</script>, p < 0.05"),
                            Table(["side"], [["<img src=x onerror=alert(1)>"]], 1)])
    assert "<script>" not in markdown and "<img" not in markdown and "p < 0.05" in markdown


def test_a_run_without_a_finished_chunk_is_one_clear_line(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    sim.simulate(2, "greedy,random", 40, 1, out=run)
    for table in ("games", "rounds"):
        for part in (run / table).iterdir():
            part.unlink()
    (run / "parts.jsonl").write_text("")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = run_main(["query", str(run), "select count(*) from games"], capsys)
    one_line(code, err, "no finished chunk yet")


@pytest.mark.parametrize("command", [
    ["trace", "--strategies", "greedy,random"], ["simulate", "--games", "10", "-q"],
    ["learn", "--players", "2", "--iterations", "1", "--games", "20", "-o", "unused"],
    ["tournament", "--strategies", "greedy,random", "-q"], ["compare", "greedy", "random"],
    ["openings", "--deals", "1", "-q"]])
@pytest.mark.parametrize("seed", [str(2**64), "-3"])
def test_seeds_outside_the_range_are_refused_everywhere(command, seed, capsys) -> None:
    code, out, err = run_main([*command, "--seed", seed], capsys)
    one_line(code, err, f"--seed must be an integer from 0 to 2**63-1, got {seed}")
