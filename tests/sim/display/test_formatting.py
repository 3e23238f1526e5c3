"""What the command line prints is one line for odd input and data shown as data (#51):
huge integers in a trace, a terminal that cannot show Unicode, a chart backend that does not
exist, a label that looks like mathtext, HTML or terminal escapes in names.

Every line a command writes about a folder escapes its control characters (#51: terminal
output escapes them everywhere, not only in verify): a folder named ``$'\\e[31mRED\a'``
recoloured the terminal and rang its bell in ``sniff: writing NAME: ...``, compare's
``data: NAME/`` and report's ``report of ...`` and placement-sample notice.
"""

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


NAME = "\x1b[31mRED\x07"
ESCAPED = "\\x1b[31mRED\\x07"


def clean(code: int, out: str, err: str) -> None:
    assert code == 0, err
    assert ESCAPED in out + err and not any(c in out + err for c in "\x1b\x07"), (out, err)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return tmp_path_factory.mktemp("notices")


def test_simulate_and_report_escape_the_folder(runs, capsys) -> None:
    folder = runs / NAME
    code, out, err = run_main(["simulate", "--players", "2", "--strategies", "greedy,random",
                               "--games", "40", "--chunk-size", "20", "-o", str(folder)],
                              capsys)
    clean(code, out, err)
    assert f"sniff: writing {folder.parent}/{ESCAPED}: 40 games" in err
    code, out, err = run_main(["report", str(folder), "-o", str(runs / f"r{NAME}"),
                               "--placement-sample", "4"], capsys)
    clean(code, out, err)
    assert f"r{ESCAPED}/report.html" in out and f"sniff: {ESCAPED}: tracing 4 games" in err


def test_compare_escapes_the_folder(runs, capsys) -> None:
    folder = runs / f"c{NAME}"
    code, out, err = run_main(["compare", "greedy", "random", "--players", "2",
                               "--out", str(folder)], capsys)
    clean(code, out, err)
    assert f"data: {folder.parent}/c{ESCAPED}/" in out and f"comparing in {folder.parent}" in err


def test_openings_escapes_the_folder(runs, capsys) -> None:
    folder = runs / f"o{NAME}"
    code, out, err = run_main(["openings", "--players", "2", "--strategies", "greedy",
                               "--deals", "20", "-o", str(folder)], capsys)
    clean(code, out, err)
    assert f"summary.json to {folder.parent}/o{ESCAPED}" in out


def test_trace_and_learn_escape_what_they_wrote(runs, capsys) -> None:
    trace = runs / f"t{NAME}.jsonl"
    code, out, err = run_main(["trace", "--players", "2", "--strategies", "greedy,random",
                               "-o", str(trace)], capsys)
    clean(code, out, err)
    assert f"to {runs}/t{ESCAPED}.jsonl" in err
    folder = runs / f"l{NAME}"
    code, out, err = run_main(["learn", "--players", "2", "--iterations", "1", "--games", "40",
                               "--hidden", "8", "--eval-games", "0", "-o", str(folder)],
                              capsys)
    clean(code, out, err)
    assert f"model: {runs}/l{ESCAPED}/model.npz" in out


FORGED = "n\nsniff: error: forged\x1b[2J"  # a name whose newline would forge a line of its own


def no_forged_line(out: str, err: str) -> None:
    lines = (out + err).splitlines()
    assert not any(line.startswith("sniff: error: forged") for line in lines), (out, err)
    assert "\x1b" not in out + err and "\\nsniff: error: forged\\x1b[2J" in out + err


def test_a_newline_in_a_name_is_escaped_on_every_line(runs, capsys) -> None:
    """#63: ESC was escaped but a newline was printed raw, so a folder's name could forge
    a ``sniff: error:`` line (in a notice, a summary's ``data:`` line, an error)."""
    folder = runs / FORGED
    code, out, err = run_main(["simulate", "--players", "2", "--strategies", "greedy,random",
                               "--games", "40", "-o", str(folder)], capsys)
    assert code == 0, err
    no_forged_line(out, err)
    code, out, err = run_main(["compare", "greedy", "random", "--players", "2", "--out",
                               str(runs / f"c{FORGED}")], capsys)
    assert code == 0, err
    no_forged_line(out, err)
    code, out, err = run_main(["verify", str(folder)], capsys)
    assert code == 0, err
    no_forged_line(out, err)
    code, out, err = run_main(["report", str(runs / f"none{FORGED}")], capsys)  # an error
    assert code == 2 and len(err.splitlines()) == 1, err
    no_forged_line(out, err)


def test_report_md_carries_no_raw_control_characters(runs, capsys) -> None:
    """#63: report.md kept raw escape sequences from folder names and ``--title``."""
    folder = runs / f"md{NAME}"
    code, out, err = run_main(["simulate", "--players", "2", "--strategies", "greedy,random",
                               "--games", "40", "-o", str(folder)], capsys)
    assert code == 0, err
    report = runs / "md-report"
    code, out, err = run_main(["report", str(folder), "-o", str(report), "--placement-sample",
                               "0", "--title", f"T{NAME}\n# forged heading"], capsys)
    assert code == 0, err
    markdown = (report / "report.md").read_text()
    assert not any(c in markdown for c in "\x1b\x07"), markdown[:400]
    assert "\n# forged heading" not in markdown and f"T{ESCAPED}\\n# forged heading" in markdown
    assert f"md{ESCAPED}" in markdown
