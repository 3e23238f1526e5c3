"""Inputs that raised a traceback, exited with the wrong status, or were accepted and
answered wrongly: each is one line and exit 2 now.

Each refusal names its real cause (#51, campaign 2's unclear lines: K003, K009, K051,
K078, K115, K129v): a folder where a lock or a ledger belongs, a summary of the wrong shape,
the option a path came from, a stopped study; and a closed pipe ends ``sniff query`` as it
ends every command, quietly.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sim
from sim.openings.study import run_openings
from tests.helpers.cli import POSITION_TEXT, ROOT, error_lines, one_line, run_main
from tests.helpers.openings import stopped_study

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")


def one_error_line(code: int, err: str, text: str) -> None:
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), err
    assert text in lines[0], err


# --- 8. sniff plan


@pytest.mark.parametrize(("args", "text"), [
    (["--difference", "1e-300"], "--difference 1e-300 is too small to plan for"),
    (["--difference", "1e-150"], "--difference 1e-150 is too small to plan for"),
    (["--difference", "-0.02"], "its size, not its sign), got -0.02"),
    (["--difference", "0.02", "--sd", "0.6"], "--sd is the per-deal SD of duplicate deals: "
                                              "it needs --paired"),
    (["--difference", "0.02", "--paired", "--sd", "-1"], "--sd must be"),
    (["--difference", "nan"], "got nan"),
])
def test_plan_refuses_what_it_cannot_answer(args, text, capsys) -> None:
    code, out, err = run_main(["plan", *args], capsys)
    one_error_line(code, err, text)
    assert out == ""


def test_plan_still_answers_a_small_positive_difference(capsys) -> None:
    code, out, _ = run_main(["plan", "--difference", "0.00001"], capsys)
    assert code == 0 and "to detect a win-rate difference of 1e-05" in out
    code, out, _ = run_main(["plan", "--difference", "0.02", "--paired", "--sd", "0.6"], capsys)
    assert code == 0 and "7,064 deals" in out


# --- 9, 10, 14. sniff hint


POSITION = POSITION_TEXT.replace("lacks: 1=3,4\n", "")


@pytest.mark.parametrize(("change", "text"), [
    ("target: 99999999999999999999\n", "position: target must be at most 1,000,000"),
    ("target: 0\n", "position: target must be positive, got 0"),
    ("target: -5\n", "position: target must be positive, got -5"),
])
def test_a_position_target_that_cannot_be_is_refused(change, text, tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION + change)
    code, out, err = run_main(["hint", str(path), "--print-position"], capsys)
    one_error_line(code, err, text)


def test_a_big_score_is_refused_not_overflowed(tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION.replace("scores: 10 20", "scores: 10 99999999999999999999"))
    code, _, err = run_main(["hint", str(path), "--print-position"], capsys)
    one_error_line(code, err, "position: scores must be at most 1,000,000")


@pytest.mark.parametrize("seed", ["-1", "100000000000000000000000", str(2**63)])
def test_hint_refuses_seeds_every_other_command_refuses(seed, tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION)
    code, out, err = run_main(["hint", str(path), "--seed", seed, "--budget", "10"], capsys)
    one_error_line(code, err, f"--seed must be an integer from 0 to 2**63-1, got {seed}")
    code, out, err = run_main(["simulate", "--seed", seed, "-o", str(tmp_path / "r")], capsys)
    one_error_line(code, err, "--seed must be an integer from 0 to 2**63-1")


def test_print_position_announces_no_compile(tmp_path) -> None:
    from tests.helpers.cli import sniff

    path = tmp_path / "position.txt"
    path.write_text(POSITION)
    done = sniff("hint", str(path), "--print-position",
                 env={**__import__("os").environ, "SNIFF_CACHE_DIR": str(tmp_path / "cache"),
                      "SNIFF_PRECOMPILE": "0"})
    assert done.returncode == 0, done.stderr
    assert "compiling" not in done.stderr and "\nplayers: 2\n" in done.stdout


# --- 11. an empty output name


@pytest.mark.parametrize("command", [["simulate", "--games", "10"], ["tournament"],
                                     ["openings", "--deals", "1"], ["report", "RUN"],
                                     ["tune", "greedy"]])
def test_an_empty_output_name_is_refused(command, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main([*command, "-o", ""], capsys)
    one_error_line(code, err, "an empty name")
    assert list(tmp_path.iterdir()) == []


def test_the_api_refuses_an_empty_output_name(tmp_path, monkeypatch) -> None:
    import sim
    from sim.errors import SniffError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SniffError, match="out is an empty name"):
        sim.simulate(games=10, out="")
    assert list(tmp_path.iterdir()) == []


# --- 14. small things


def test_tally_calls_a_non_number_what_it_is(capsys) -> None:
    code, _, err = run_main(["tally", "abc"], capsys)
    one_error_line(code, err, "'abc' is not a valid integer.")
    assert "range" not in err


def test_tune_docs_give_sigterm_its_own_status() -> None:
    from tests.helpers.cli import ROOT

    text = (ROOT / "docs" / "tune.md").read_text()
    assert "exit status is 130 after\nCtrl-C, 143 after SIGTERM" in text


def test_the_first_search_compile_is_not_reported_as_search_time(monkeypatch) -> None:
    """The first call of the compiled search compiles it (a minute on a cold cache): that
    call must not be the timed one."""
    import time as clock

    from sim.hint import estimate as hint
    from sim.hint import kernel as hint_kernel
    from sim.hint.position import parse_position

    real = hint_kernel.load()
    calls: list[int] = []

    class FirstCallCompiles:
        def __getattr__(self, name):
            return getattr(real, name)

        def search(self, *args):
            calls.append(args[3])
            if len(calls) == 1:
                clock.sleep(1.5)  # what a compile costs the first call
            return real.search(*args)

    monkeypatch.setattr(hint_kernel, "load", lambda search=False: FirstCallCompiles())
    result = hint.analyse(parse_position(POSITION), budget=20)
    assert calls == [1, 20]  # one untimed play-out per move first, then the search
    assert result.seconds < 1.0


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("causes")
    sim.simulate(2, "greedy,random", 400, 3, chunk_size=200, out=base / "run")
    run_openings(2, "random", 20, seed=5, out=base / "openings")
    return {path.name: path for path in base.iterdir()}


def copy(folders: dict, tmp_path: Path, kind: str) -> Path:
    target = tmp_path / kind
    shutil.copytree(folders[kind], target)
    return target


def test_a_lock_that_is_a_folder_is_named(folders, tmp_path, capsys) -> None:
    run = copy(folders, tmp_path, "run")
    (run / ".lock").unlink(missing_ok=True)
    (run / ".lock").mkdir()
    code, out, err = run_main(["simulate", "-o", str(run), "--resume", "-q"], capsys)
    one_line(code, err, f"{run / '.lock'}: is a folder, not the folder's lock file")


@pytest.mark.parametrize("command", [["verify", "{run}"],
                                     ["query", "{run}", "select count(*) from games"]])
def test_a_ledger_that_is_a_folder_is_named(folders, tmp_path, capsys, command) -> None:
    run = copy(folders, tmp_path, "run")
    (run / "parts.jsonl").unlink()
    (run / "parts.jsonl").mkdir()
    code, out, err = run_main([part.format(run=run) for part in command], capsys)
    one_line(code, err, f"{run / 'parts.jsonl'}: is a folder, not a regular ledger")


@pytest.mark.parametrize("command", [["verify", "{o}"],
                                     ["query", "{o}", "select count(*) from openings"],
                                     ["report", "{o}", "-o", "{tmp}/r"]])
def test_an_openings_summary_of_another_shape_is_named(folders, tmp_path, capsys,
                                                       command) -> None:
    folder = copy(folders, tmp_path, "openings")
    (folder / "summary.json").write_text(json.dumps([]))
    code, out, err = run_main([part.format(o=folder, tmp=tmp_path) for part in command],
                              capsys)
    assert code == 2 and "Traceback" not in err, err
    assert f"{folder / 'summary.json'} is not the summary of a sniff openings folder" in (
        out + err), (out, err)


def test_a_trace_inside_a_table_is_named_by_its_option(folders, tmp_path, capsys) -> None:
    run = copy(folders, tmp_path, "run")
    code, out, err = run_main(["play", "--trace", str(run / "games" / "x.jsonl")], capsys,
                              stdin="q\n")
    one_line(code, err, f"--trace {run / 'games' / 'x.jsonl'} is inside the games/ table")


def test_verify_of_a_stopped_openings_study_says_so(tmp_path, capsys) -> None:
    folder = stopped_study(tmp_path / "study", stop_at=1)
    code, out, err = run_main(["verify", str(folder)], capsys)
    one_line(code, err, "holds an openings study stopped before its end")
    assert f"sniff openings --out {folder} --resume" in err


def test_a_query_whose_reader_goes_away_ends_quietly(folders) -> None:
    """K115: ``sniff query --csv ... | head`` ends as every command does (nothing on
    stderr), not with "the query failed: BrokenPipeError"; #63: with exit 0, not 1 (a
    closed pipe is normal use: ``head`` closes it once it has its lines)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "query", "--csv", str(folders["run"]),
         "select * from rounds"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdout.read(50)
    process.stdout.close()  # as `head -c 50` does
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0 and err == "", err


@pytest.mark.parametrize("name, value, text", [
    ("NUMBA_NUM_THREADS", "0", "is not a number of threads numba can use"),  # K275
    ("NUMBA_NUM_THREADS", "abc", "is not a number of threads numba can use"),  # K274
    ("NUMBA_NUM_THREADS", "100000", "is not a number of threads numba can use"),  # P244
    ("NUMBA_THREADING_LAYER", "nonsense", "is not one of numba's threading layers"),  # P247
])
def test_a_numba_setting_numba_cannot_use_is_one_line(tmp_path, name, value, text) -> None:
    """numba raised (0, an unknown layer), printed a traceback in a warning (text) or
    crashed (100,000 threads)."""
    import os

    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "simulate", "--players", "2", "--games", "10",
         "-q", "-o", str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, name: value}, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"sniff: error: {name}={value!r} in the environment {text}")
    assert done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "run").exists()


def test_a_private_folder_that_is_a_file_is_called_a_file(folders, tmp_path, capsys) -> None:
    """K297: ``.partial`` a regular file was 'is not a regular file, not the .partial
    folder'."""
    from tests.helpers.cli import as_stopped_before

    run = copy(folders, tmp_path, "run")
    as_stopped_before(run, 1)
    (run / ".partial").write_text("x")
    code, out, err = run_main(["simulate", "-o", str(run), "--resume", "-q"], capsys)
    one_line(code, err, f"{run / '.partial'}: is a file, not the .partial folder")


def test_a_file_option_ending_with_a_slash_is_refused(tmp_path, capsys) -> None:
    """K226: ``trace -o tdir/`` wrote a file named tdir (the slash dropped)."""
    target = f"{tmp_path / 'tdir'}/"
    code, out, err = run_main(["trace", "--players", "2", "--strategies", "greedy,random",
                               "--games", "1", "-o", target], capsys)
    one_line(code, err, f"{target} names a folder (it ends with a slash)")
    assert not (tmp_path / "tdir").exists()


@pytest.mark.parametrize("command, closed, status, said", [
    (["query", "--csv", "{run}", "select 1"], 1, 0, ""),  # P330
    (["trace", "--players", "2", "--strategies", "greedy,random", "--games", "1"], 1, 0,
     ""),  # P331
    (["openings", "--players", "2", "--strategies", "random", "--deals", "2", "-o",
      "{tmp}/op"], 1, 0, ""),  # P335
    (["play", "--seed", "3", "--players", "2"], 0, 2,
     "sniff: error: play aborted: input ended before the game did\n"),  # P337
])
def test_a_closed_standard_stream_is_no_traceback(folders, tmp_path, command, closed, status,
                                                  said) -> None:
    """Campaign 2 phase 2, P330-P338: ``>&-`` or ``<&-`` left Python without sys.stdout or
    sys.stdin, and the first use raised AttributeError; now output is dropped, as by every
    command, and a closed input is an empty one."""
    import os

    done = subprocess.run([sys.executable, "-m", "sim.cli",
                           *[part.format(run=folders["run"], tmp=tmp_path) for part in command]],
                          stdout=None if closed == 1 else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300,
                          preexec_fn=lambda: os.close(closed))
    assert done.returncode == status and done.stderr == said, done.stderr
