"""``sniff simulate`` and ``sim.simulate``: the Parquet run, its tables, resume, errors.

Small runs only (a few thousand games, small chunks so each run has several parts), all
with ``greedy`` and ``random`` so the suite shares one compiled kernel.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import sim
from sim.errors import SniffError
from sim.files import TEMP_SUFFIX
from sim.run.chunks import RunInterrupted
from sim.run.plan import resolve_plan
from sim.run.settings import RunControl
from sim.run.simulation import execute
from sim.stats.intervals import mean_interval
from sim.store import io as run_io
from tests.helpers.cli import default_sigint, load_unverified, run_main
from tests.helpers.frames import assert_frame_equal
from tests.helpers.simulate import (
    CHUNK,
    GAMES,
    SEED,
    documented_columns,
    frames,
    plan_of,
    play_base_run,
)


def assert_same_tables(a: Path, b: Path) -> None:
    for left, right in zip(frames(a), frames(b)):
        assert_frame_equal(left, right)


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    return play_base_run(tmp_path_factory)


# --- determinism, interrupts and resume


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 cores")
def test_same_tables_for_any_threads_and_chunk_size(tmp_path, base_run):
    execute(plan_of(chunk_size=700), tmp_path / "one", RunControl(threads=1))
    execute(plan_of(chunk_size=GAMES), tmp_path / "two", RunControl(threads=2))
    assert len(list((tmp_path / "two" / "games").iterdir())) == 1
    assert_same_tables(base_run, tmp_path / "one")
    assert_same_tables(base_run, tmp_path / "two")
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS  # restored


def test_interrupted_run_resumes_to_the_same_tables(tmp_path, base_run, capsys):
    folder = tmp_path / "stopped"

    def stop_after_third(chunk):
        if chunk == 2:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as stopped:
        execute(plan_of(), folder, RunControl(on_chunk=stop_after_third))
    assert "--resume" in stopped.value.hint()
    assert not temporaries(folder)
    assert json.loads((folder / "manifest.json").read_text())["status"] == "interrupted"
    partial = load_unverified(folder)
    assert len(partial.games) == 3 * CHUNK and not partial.complete
    assert partial.rounds["game_id"].max() == 3 * CHUNK - 1
    # A half-written chunk (one part renamed, the other not) is played again.
    (folder / "rounds" / "part-000002.parquet").unlink()
    code, out, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert "3,000 games" in out
    assert_same_tables(base_run, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert [s["status"] for s in manifest["sessions"]] == ["interrupted", "complete"]
    assert manifest["summary"] == json.loads((base_run / "manifest.json").read_text())["summary"]


def test_no_rounds_run_keeps_the_games_and_the_summary(tmp_path, base_run, capsys):
    """``--no-rounds``: the same games and summary, each game's point sums instead of the
    round rows; it resumes like any run and refuses what needs the rounds."""
    folder = tmp_path / "games-only"

    def stop_after_second(chunk):
        if chunk == 1:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        execute(plan_of(rounds=False), folder, RunControl(on_chunk=stop_after_second))
    code, out, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert f"data: {folder}/ (games/, manifest.json)" in out
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "games", "manifest.json",
                                                        "parts.jsonl"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["config"]["rounds"] is False and list(manifest["tables"]) == ["games"]
    assert manifest["summary"] == json.loads((base_run / "manifest.json").read_text())["summary"]
    games, reference = sim.load(folder).games, sim.load(base_run)
    extra = documented_columns("--no-rounds", 4)
    assert list(games.columns) == list(reference.games.columns) + extra
    assert_frame_equal(games[reference.games.columns], reference.games)
    rounds = reference.rounds
    for team in range(2):
        points = rounds[f"team{team}_points"].astype(np.int64)
        by_game = pd.DataFrame({"game_id": rounds["game_id"], "p": points, "q": points * points}
                               ).groupby("game_id")[["p", "q"]].sum()
        assert (games[f"team{team}_points"].to_numpy() == by_game["p"].to_numpy()).all()
        assert (games[f"team{team}_points_sq"].to_numpy() == by_game["q"].to_numpy()).all()
    with pytest.raises(SniffError, match="played with rounds=False: it has no rounds table"):
        sim.load(folder).table("rounds")
    code, _, err = run_main(["report", str(folder), "-o", str(tmp_path / "report")], capsys)
    _one_line_error(code, err)
    assert "--no-rounds" in err and not (tmp_path / "report").exists()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_cleanly_and_resume_completes(tmp_path, signum, status):
    """A real SIGINT (Ctrl-C) or SIGTERM (``timeout``, a scheduler) to ``sniff simulate``:
    exit 128 + the signal, finished chunks kept, status interrupted, resume completes."""
    folder = tmp_path / "stopped"
    games, chunk = 100_000, 1_000  # seconds of play left after two parts: time to stop it
    command = [sys.executable, "-c", "from sim.cli.main import main; main()", "simulate",
               "--games", str(games), "--chunk-size", str(chunk), "--seed", "5", "--out",
               str(folder)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path, preexec_fn=default_sigint)
    deadline = time.monotonic() + 120
    while len(list((folder / "games").glob("*.parquet"))) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == status, err
    assert "--resume" in err and "Traceback" not in err
    assert json.loads((folder / "manifest.json").read_text())["status"] == "interrupted"
    assert not temporaries(folder)
    parts = len(list((folder / "games").glob("*.parquet")))
    assert 2 <= parts < games // chunk
    assert len(load_unverified(folder).games) == parts * chunk
    resumed = subprocess.run(command + ["--resume", "-q"], capture_output=True, text=True,
                             cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    reference = tmp_path / "reference"
    execute(resolve_plan({"games": games, "seed": 5, "chunk_size": 1500}), reference)
    assert_same_tables(reference, folder)


def test_a_killed_run_reads_as_interrupted(tmp_path, capsys):
    """After SIGKILL nothing could record the stop; the manifest still says running, but no
    live process holds the folder, so readers (report, load, resume) say interrupted."""
    folder = tmp_path / "killed"
    command = [sys.executable, "-c", "from sim.cli.main import main; main()", "simulate",
               "--games", "100000", "--chunk-size", "1000", "--seed", "5", "--out",
               str(folder)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while len(list((folder / "games").glob("*.parquet"))) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    process.kill()
    process.communicate(timeout=60)
    assert json.loads((folder / "manifest.json").read_text())["status"] == "running"
    assert load_unverified(folder).manifest["status"] == "interrupted"
    code, _, err = run_main(["report", str(folder), "--placement-sample", "0",
                             "-o", str(tmp_path / "report")], capsys)
    assert code == 0, err
    assert "the run is interrupted" in err


def test_full_disk_leaves_no_partial_part(tmp_path, base_run, monkeypatch, capsys):
    folder = tmp_path / "full"
    real_write = pq.write_table
    calls = {"n": 0}

    def write_until_full(table, where, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:  # the games part of the third chunk
            where.write(b"PAR1 half a file")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(table, where, **kwargs)

    monkeypatch.setattr(run_io.pq, "write_table", write_until_full)
    code, _, err = run_main(["simulate", "--games", str(GAMES), "--chunk-size", str(CHUNK),
                             "--seed", str(SEED), "--out", str(folder), "-q"], capsys)
    assert code != 0 and "No space left on device" in err and "--resume" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not temporaries(folder)
    assert sorted(p.name for p in (folder / "games").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]
    assert sorted(p.name for p in (folder / "rounds").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]
    monkeypatch.setattr(run_io.pq, "write_table", real_write)
    code, _, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert_same_tables(base_run, folder)


def test_code_edited_during_a_run_stops_it(tmp_path, monkeypatch):
    from sim.kernels import runner

    real = runner.lineup_code
    edited = {"yes": False}

    def lineup_code(*args, **kwargs):
        # what an edit to a strategy file does to the code digest of the lineup
        return real(*args, **kwargs) + ("x" if edited["yes"] else "")

    monkeypatch.setattr(runner, "lineup_code", lineup_code)
    folder = tmp_path / "edited"
    with pytest.raises(SniffError, match="changed while the run was playing"):
        execute(plan_of(games=4 * CHUNK), folder,
                RunControl(on_chunk=lambda chunk: edited.update(yes=True)))
    # Chunk 1 started (one chunk ahead) before the edit after chunk 0: it is kept; chunk 2
    # starts with the edited code and stops the run before anything of it is written.
    assert len(load_unverified(folder).games) == 2 * CHUNK
    # The edit played the same games (the signatures did not move): the run resumes.
    execute(plan_of(games=4 * CHUNK), folder, RunControl(mode="resume"))
    resumed = sim.load(folder)
    assert resumed.complete and len(resumed.games) == 4 * CHUNK


# --- refusals


def test_existing_run_is_not_overwritten_without_overwrite(tmp_path, capsys):
    folder = tmp_path / "kept"
    args = ["simulate", "--games", "200", "--chunk-size", "100", "--out", str(folder), "-q"]
    assert run_main(args, capsys)[0] == 0
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    code, _, err = run_main(args + ["--seed", "9"], capsys)
    assert code == 2 and "--overwrite" in err and "--resume" in err
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before
    code, _, err = run_main(args + ["--seed", "9", "--overwrite"], capsys)
    assert code == 0, err
    assert set(sim.load(folder).games["seed"]) == {9}
    # A folder that is not a run is never deleted, not even with --overwrite.
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = run_main(["simulate", "--games", "10", "--out", str(other), "--overwrite"],
                            capsys)
    assert code == 2 and "not empty" in err and (other / "notes.txt").exists()


@pytest.mark.parametrize("change, flag", [
    (["--games", "400"], "--games"),
    (["--chunk-size", "50"], "--chunk-size"),
    (["--strategies", "random,greedy"], "--strategies"),
    (["--duplicate"], "--duplicate"),
    (["--players", "2"], "--players"),
    (["--no-rounds"], "--no-rounds"),
])
def test_resume_with_different_settings_is_refused(tmp_path, capsys, change, flag):
    folder = tmp_path / "run"
    args = ["simulate", "--games", "200", "--chunk-size", "100", "--out", str(folder), "-q"]
    assert run_main(args, capsys)[0] == 0
    (folder / "games" / "part-000001.parquet").unlink()
    before = sorted(p.name for p in folder.rglob("*"))
    code, _, err = run_main(["simulate", "--out", str(folder), "--resume", *change], capsys)
    assert code == 2 and "cannot resume" in err and flag in err and "--overwrite" in err
    assert sorted(p.name for p in folder.rglob("*")) == before


def test_api_refuses_too(tmp_path):
    with pytest.raises(SniffError, match="nothing to resume"):
        sim.simulate(out=tmp_path / "missing", resume=True)
    with pytest.raises(SniffError, match="is a file"):
        (tmp_path / "file").write_text("x")
        sim.simulate(games=10, out=tmp_path / "file")


def _one_line_error(code: int, err: str) -> None:
    assert code != 0
    assert err.startswith("sniff: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("args", [
    ["--games", "0"],
    ["--games", "many"],
    ["--players", "5"],
    ["--strategies", "nope"],
    ["--strategies", "greedy,random,random"],
    ["--chunk-size", "0"],
    ["--threads", "0"],
    ["--threads", "100000"],
    ["--seed", "-1"],
    ["--bogus"],
    ["--resume"],
    ["--resume", "--overwrite", "--out", "x"],
    ["--duplicate", "--games", "101"],
    ["--duplicate", "--players", "3", "--strategies", "greedy,random,random"],
])
def test_bad_flags_give_one_line_and_no_run(tmp_path, monkeypatch, capsys, args):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["simulate", *args], capsys)
    _one_line_error(code, err)
    assert not any(tmp_path.iterdir())


def test_bad_paths_give_one_line(tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for out, message in [(a_file, "is a file"), (a_file / "sub", "is a file"),
                         (tmp_path / "nowhere", "nothing to resume")]:
        extra = ["--resume"] if "resume" in message else []
        code, _, err = run_main(["simulate", "--games", "10", "--out", str(out), *extra], capsys)
        _one_line_error(code, err)
        assert message in err
    assert a_file.read_text() == "x"


def test_unwritable_folder_gives_one_line(capsys):
    target = Path("/sys/sniff-test-run")  # even root cannot create folders in sysfs
    try:
        target.mkdir()
    except OSError:
        pass
    else:
        target.rmdir()
        pytest.skip("/sys is writable here")
    code, _, err = run_main(["simulate", "--games", "10", "--out", str(target)], capsys)
    _one_line_error(code, err)
    assert "cannot write" in err


# --- duplicate deals


def test_duplicate_pairs_share_the_deal_with_sides_swapped(tmp_path):
    folder = tmp_path / "dup"
    execute(plan_of(games=600, chunk_size=150, duplicate=True, strategies="greedy,greedy"),
            folder)
    games, rounds = frames(folder)
    assert (games["deal_id"] == games["game_id"] // 2).all()
    even, odd = games.iloc[0::2].reset_index(drop=True), games.iloc[1::2].reset_index(drop=True)
    assert ((odd["rotation"] - even["rotation"]) % 4 == 1).all()
    # greedy is deterministic: with greedy in every seat, both games of a deal are the same
    # game, so the same deal (tiles, boneyard order, leader draws) is the only explanation.
    same = ["first_leader", "winner_team", "team0_score", "team1_score", "rounds", "draws"]
    assert_frame_equal(even[same], odd[same])
    finished = even["winner_side"] >= 0
    assert (even.loc[finished, "winner_side"] != odd.loc[finished, "winner_side"]).all()
    by_deal = rounds.assign(deal=rounds["game_id"] // 2, pair=rounds["game_id"] % 2)
    columns = ["round_number", "leader", "opening_tile", "end_reason", "team0_points",
               "seat0_pips", "seat3_penalty"]
    first = by_deal[by_deal["pair"] == 0][columns].reset_index(drop=True)
    second = by_deal[by_deal["pair"] == 1][columns].reset_index(drop=True)
    assert_frame_equal(first, second)


def test_duplicate_summary_compares_paired_and_independent_intervals(tmp_path):
    folder = tmp_path / "dup2"
    run = execute(plan_of(games=2000, chunk_size=333, duplicate=True, players=2), folder)
    games = run.games
    assert (games["deal_id"] == games["game_id"] // 2).all()
    even, odd = games.iloc[0::2], games.iloc[1::2]
    assert (even["first_leader"].to_numpy() == odd["first_leader"].to_numpy()).all()
    assert (even["seat0_strategy"].to_numpy() != odd["seat0_strategy"].to_numpy()).all()
    x = (games["winner_side"] == 0).astype(float) - (games["winner_side"] == 1)
    paired = x.groupby(games["deal_id"]).mean()
    pair = run.summary.to_dict()["duplicate"][0]
    assert pair["sides"] == ["greedy", "random"]
    assert pair["deals"] == 1000
    assert pair["difference"] == pytest.approx(x.mean())
    _, low, high = mean_interval(paired)
    assert pair["paired_half_width"] == pytest.approx((high - low) / 2)
    _, low, high = mean_interval(x)
    assert pair["independent_half_width"] == pytest.approx((high - low) / 2)
    assert pair["narrower_by"] == pytest.approx(
        1 - pair["paired_half_width"] / pair["independent_half_width"])
    assert "paired by deal vs independent deals" in str(run.summary)
    # Summary recomputed from disk (chunk cuts inside deals) agrees with the live one.
    assert sim.load(folder).summary.to_dict()["duplicate"] == run.summary.to_dict()["duplicate"]


def test_three_players_play_each_deal_in_all_three_seatings(tmp_path):
    run = sim.simulate(players=3, strategies="greedy,random,random", games=300, seed=2,
                       duplicate=True, chunk_size=100)
    games = run.games
    assert (games["deal_id"] == games["game_id"] // 3).all()
    assert (games.groupby("deal_id")["rotation"].apply(sorted).map(tuple) == (0, 1, 2)).all()
    assert (games.groupby("deal_id")["first_leader"].nunique() == 1).all()
    assert len(run.summary.to_dict()["duplicate"]) == 3


# --- Python API and default folder


def test_api_in_memory_and_load(tmp_path, base_run):
    run = sim.simulate(games=GAMES, seed=SEED, chunk_size=1000)
    assert run.path is None and len(run.games) == GAMES
    on_disk = sim.load(base_run)
    assert_frame_equal(run.games, on_disk.games)
    assert_frame_equal(run.rounds, on_disk.rounds)
    assert run.summary.to_dict()["sides"] == on_disk.summary.to_dict()["sides"]
    assert on_disk.dataset("games").count_rows(filter=ds.field("winner_side") == 0) == int(
        (run.games["winner_side"] == 0).sum())
    with pytest.raises(SniffError, match="not a sniff run"):
        sim.load(tmp_path)


def test_import_sim_stays_cheap():
    code = "import sys, sim; assert not {'numba', 'numpy', 'pyarrow'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_default_run_goes_to_a_new_folder_under_results(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    outs = []
    for _ in range(2):
        code, out, err = run_main(["simulate", "--games", "40"], capsys)
        assert code == 0, err
        outs.append(out)
        assert "\r" not in err  # no progress bar when stderr is not a terminal
    folders = sorted((tmp_path / "results").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("run-") for f in folders)
    for folder, out in zip(folders, outs):
        assert str(folder.relative_to(tmp_path)) in out
        assert len(sim.load(folder).games) == 40


def test_resuming_a_complete_run_says_it_played_no_game(tmp_path, capsys):
    """Campaign 2 phase 2, P318: 'played 0 of the games ... in 0.0 s: nan games/s'."""
    folder = tmp_path / "run"
    sim.simulate(2, "greedy,random", 100, 1, out=folder)
    code, out, err = run_main(["simulate", "-o", str(folder), "--resume"], capsys)
    assert code == 0, err
    assert "played no game: every game was already there" in out and "nan" not in out, out
