"""Every line a command writes about a folder escapes its control characters (#51: terminal
output escapes them everywhere, not only in verify): a folder named ``$'\\e[31mRED\\a'``
recoloured the terminal and rang its bell in ``sniff: writing NAME: ...``, compare's
``data: NAME/`` and report's ``report of ...`` and placement-sample notice."""

from __future__ import annotations

import pytest

from tests.helpers.cli import run_main

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
