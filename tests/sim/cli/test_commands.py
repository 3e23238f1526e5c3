"""``sniff simulate`` as a first-time user meets it: sizes that cannot work, paths that are not
UTF-8, resumes that never delete a part (a bad one is set aside), the compile notice, and one
exit-code convention across commands."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import sim
import strategies
from sim.kernels import cachefiles
from sim.kernels import generate as kernels
from sim.run.chunks import ChunkSizes, MissingChunks
from sim.run.plan import resolve_plan
from sim.run.simulation import execute
from sim.store import folders
from sim.store import io as run_io
from tests.helpers.cli import as_stopped_before, error_lines, run_main, sniff_here

BAD_NAME = os.fsdecode(b"bad\xff\xfename")


def one_line(code: int, err: str, text: str) -> None:
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), err
    assert text in lines[0], err


# --- sizes


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["simulate", "--games", "99999999999999999999"],
         "--games must be at most 1,000,000,000,000, got 99,999,999,999,999,999,999"),
        (["simulate", "--precision", "0.01", "--max-games", "99999999999999999999"],
         "--max-games must be at most 1,000,000,000,000"),
        (["simulate", "--chunk-size", "10000000000"], "--chunk-size must be at most 2,000,000"),
        (["tournament", "--strategies", "greedy,random", "--games-per-pair",
          "99999999999999999999"], "must be at most 1,000,000,000,000"),
        (["tally", "99999999999999999999"], "is not in the range -100000<=x<=100000"),
        (["trace", "--strategies", "greedy,random", "--games", "10000000"],
         "must be at most 1,000,000"),
        (["openings", "--deals", "10000000000"], "must be at most 100,000,000"),
    ],
)
def test_sizes_that_cannot_work_are_refused_at_once(args, text, tmp_path, capsys) -> None:
    started = time.monotonic()
    code, out, err = run_main([*args, "-o", str(tmp_path / "out")] if args[0] in (
        "simulate", "tournament", "openings") else args, capsys)
    one_line(code, err, text)
    assert time.monotonic() - started < 10
    assert not (tmp_path / "out").exists()


def test_chunk_bookkeeping_does_not_grow_with_the_chunks() -> None:
    """A run of 10**12 one-game chunks is planned without a Python object per chunk."""
    sizes = ChunkSizes(10**12 + 5, 10**6)
    assert len(sizes) == 10**6 + 1 and sizes[0] == 10**6 and sizes[10**6] == 5
    with pytest.raises(IndexError):
        sizes[10**6 + 1]
    missing = MissingChunks(10**12, {0, 2})
    first = iter(missing)
    assert [next(first) for _ in range(3)] == [1, 3, 4]
    assert next(iter(missing)) == 1  # iterable again


def test_a_run_bigger_than_the_free_space_is_refused(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(folders, "free_bytes", lambda folder: 50_000)
    folder = tmp_path / "big"
    code, _, err = run_main(["simulate", "--players", "2", "--strategies", "greedy,random",
                             "--games", "20000", "-o", str(folder)], capsys)
    one_line(code, err, "the run needs about ")
    assert "50.0 KB free" in err and "--ignore-disk-space" in err
    assert not any(folder.rglob("*.parquet"))
    code, out, err = run_main(["simulate", "--players", "2", "--strategies", "greedy,random",
                               "--games", "20000", "-q", "--ignore-disk-space", "-o",
                               str(folder)], capsys)
    assert code == 0, err
    assert len(sim.load(folder).games) == 20000


# --- paths that are not UTF-8


@pytest.mark.parametrize("command", [
    ["simulate", "--games", "10", "-o"],
    ["report"],
    ["report", "RUN", "-o"],
    ["trace", "--strategies", "greedy,random", "-o"],
    ["openings", "--deals", "1", "-o"],
    ["tournament", "--strategies", "greedy,random", "-o"],
])
def test_paths_that_are_not_utf8_are_refused_in_one_line(command, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    args = [str(run) if part == "RUN" else part for part in command]
    if "RUN" in command:
        execute(resolve_plan({"games": 20, "players": 2}), run)
    bad = tmp_path / BAD_NAME
    code, _, err = run_main([*args, str(bad)], capsys)
    one_line(code, err, "is not valid UTF-8")
    assert "\\xff\\xfe" in err
    assert not bad.exists()


# --- resume never deletes a part


@pytest.fixture
def small_run(tmp_path) -> Path:
    folder = tmp_path / "run"
    execute(resolve_plan({"games": 300, "players": 2, "chunk_size": 100, "seed": 4}), folder)
    return folder


def test_resume_sets_an_unreadable_part_aside_and_deletes_nothing(small_run, capsys) -> None:
    reference = sim.load(small_run).games
    part = small_run / "games" / run_io.part_name(1)
    part.write_bytes(b"not parquet")
    code, _, err = run_main(["simulate", "--out", str(small_run), "--resume"], capsys)
    assert code == 0, err
    aside = small_run / "set-aside" / f"games-{part.name}"
    assert f"{part}: is 11 bytes" in err and f"set aside: {aside}" in err
    assert aside.read_bytes() == b"not parquet"  # kept where the notice says
    assert sim.load(small_run).games.equals(reference)


def test_resume_replays_a_chunk_with_one_part_and_keeps_the_rest(small_run, tmp_path,
                                                                   capsys) -> None:
    reference = sim.load(small_run).games
    (small_run / "rounds" / run_io.part_name(2)).unlink()
    as_stopped_before(small_run, 2)
    kept = (small_run / "games" / run_io.part_name(0)).stat().st_mtime_ns
    code, _, err = run_main(["simulate", "--out", str(small_run), "--resume"], capsys)
    assert code == 0, err
    assert "chunk 2: only its games part was written; played again" in err
    assert (small_run / "games" / run_io.part_name(0)).stat().st_mtime_ns == kept
    assert sim.load(small_run).games.equals(reference)


# --- the compile notice


def test_first_use_of_the_engine_and_of_a_strategy_says_what_it_compiles(
        tmp_path, monkeypatch) -> None:
    """Said once, before the compile; not for what is compiled already."""
    monkeypatch.setenv("SNIFF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels, "_engine", None)
    monkeypatch.setattr(kernels, "_announced", set())
    monkeypatch.setattr(kernels, "_choosers", {})
    said: list[str] = []
    monkeypatch.setattr(kernels, "notice", said.append)
    kernels.engine_kernel(("trace_game",))
    kernels.engine_kernel(("trace_game",))
    assert said == ["compiling the game engine (trace_game; first use on this machine or "
                    "after an update, about 25 s; every lineup then starts at once)"]
    # As numba leaves a compiled function: an index file beside the module.
    path = kernels.chooser_path(strategies.get("heavy"))
    cache = path.parent / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / f"{path.stem}.chooser-40.py311.nbi").write_bytes(b"")
    assert cachefiles.is_compiled(path, ("chooser",))
    monkeypatch.setattr(kernels, "_announced", set())
    (cache / f"{kernels.engine_path().stem}.trace_game-40.py311.nbi").write_bytes(b"")
    kernels.engine_kernel(("trace_game",))
    assert len(said) == 1


# --- small things


def test_report_checks_its_folder_before_tracing(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    execute(resolve_plan({"games": 20, "players": 2}), run)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_main(["report", str(run), "-o", str(blocker / "report")], capsys)
    one_line(code, err, f"cannot create {blocker / 'report'}: {blocker} is a file")
    assert "tracing" not in err


def test_write_errors_exit_2_in_every_command(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = sniff_here("trace", "--strategies", "greedy,random", "--out", str(blocker / "x.jsonl"))
    assert done.returncode == 2, done.stderr
    assert len(error_lines(done.stderr)) == 1


def test_trace_takes_out_like_every_command(tmp_path) -> None:
    out = tmp_path / "t.jsonl"
    done = sniff_here("trace", "--strategies", "greedy,random", "--out", str(out))
    assert done.returncode == 0 and out.stat().st_size > 0, done.stderr


def test_precision_notice_reads_as_a_sentence(tmp_path) -> None:
    done = sniff_here("simulate", "--players", "2", "--strategies", "greedy,random", "--precision",
                 "0.02", "--max-games", "3000", "--chunk-size", "1000", "-o",
                 str(tmp_path / "p"))
    assert done.returncode == 0, done.stderr
    assert (f"sniff: writing {tmp_path / 'p'}: until every win rate is within +-2.00% (at "
            "most 3,000 games), in chunks of 1,000") in done.stderr
