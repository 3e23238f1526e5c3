"""Each refusal names its real cause (#51, campaign 2's unclear lines: K003, K009, K051,
K078, K115, K129v): a folder where a lock or a ledger belongs, a summary of the wrong shape,
the option a path came from, a stopped study; and a closed pipe ends ``sniff query`` as it
ends every command, quietly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sim
from sim.openings.study import run_openings
from tests.helpers.cli import ROOT, one_line, run_main
from tests.helpers.openings import stopped_study


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
