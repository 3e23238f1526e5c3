"""A run folder that verifies itself and has one writer.

Every part is recorded in the run's ledger when its chunk finishes; readers check the parts
against it (a bad part is one line naming it), ``--resume`` sets bad parts aside and plays
their chunks again, ``sniff verify`` checks everything; a folder being written is locked;
the disk estimate is measured.

A run folder written by other code (tests/fixtures/run-on-6dc88fb: the code before the
game loop was compiled once) still verifies and reports, and a resume is refused in one line
that names the code that wrote it: its remaining games would not be the ones it started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim
from sim.checks import integrity
from sim.errors import SniffError
from sim.run import space as run_space
from sim.run.plan import resolve_plan
from sim.run.settings import RunControl
from sim.run.simulation import execute
from sim.store import folders
from sim.store import io as run_io
from sim.store.lock import RunLock
from tests.helpers.cli import ROOT, SNIFF, UNVERIFIED, error_lines, load_unverified, run_main

PLAN = {"games": 400, "players": 2, "chunk_size": 100, "seed": 11}


def one_line(code: int, err: str, text: str) -> None:
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), err
    assert text in lines[0], err


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("reference") / "run"
    execute(resolve_plan(dict(PLAN)), folder)
    return folder


@pytest.fixture
def run(reference, tmp_path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(reference, folder)
    (folder / ".lock").unlink(missing_ok=True)
    return folder


def part(folder: Path, table: str, chunk: int) -> Path:
    return folder / table / run_io.part_name(chunk)


def assert_same_tables(folder: Path, reference: Path) -> None:
    got, want = sim.load(folder), sim.load(reference)
    assert got.games.equals(want.games)
    assert got.rounds.equals(want.rounds)
    assert got.games["game_id"].tolist() == list(range(PLAN["games"]))


def test_every_finished_chunk_is_recorded(reference) -> None:
    records = integrity.read_ledger(reference)
    assert sorted(records) == [0, 1, 2, 3]
    for chunk, record in records.items():
        assert (record["first_game"], record["end_game"]) == (chunk * 100, chunk * 100 + 100)
        for table in ("games", "rounds"):
            path = part(reference, table, chunk)
            entry = record["parts"][table]
            assert entry["bytes"] == path.stat().st_size
            assert entry["sha256"] == integrity.file_digest(path)
    assert json.loads((reference / "manifest.json").read_text())["ledger"] == "parts.jsonl"


# --- 1. a part that holds another chunk's games


def test_a_part_of_another_chunk_is_refused_and_resume_replays_it(run, reference,
                                                                     capsys) -> None:
    for table in ("games", "rounds"):
        shutil.copy(part(run, table, 0), part(run, table, 2))
    bad = part(run, "games", 2)
    with pytest.raises(SniffError, match="part-000002.parquet"):
        sim.load(run)
    code, _, err = run_main(["report", str(run), "-o", str(run.parent / "report")], capsys)
    one_line(code, err, str(bad))
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 0, err
    assert f"{bad}: " in err and "played again; set aside: " in err
    aside = sorted(p.name for p in (run / "set-aside").iterdir())
    assert aside == ["games-part-000002.parquet", "rounds-part-000002.parquet"]
    assert (run / "set-aside" / "games-part-000002.parquet").read_bytes() == part(
        reference, "games", 0).read_bytes()  # kept, not deleted
    assert_same_tables(run, reference)
    assert "400 games" in run_main(["verify", str(run)], capsys)[1].replace(",", "")


def test_the_footer_names_the_chunk_even_when_size_and_hash_agree(run) -> None:
    """A record rewritten to vouch for the copy still cannot pass it off as chunk 2."""
    shutil.copy(part(run, "games", 0), part(run, "games", 2))
    lines = (run / "parts.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    records[2]["parts"]["games"] = {**records[0]["parts"]["games"],
                                    "file": run_io.part_name(2)}
    (run / "parts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(SniffError, match=r"part-000002.parquet: holds chunk 0 \(games 0..99\), "
                                         r"not chunk 2 \(games 200..299\)"):
        sim.load(run)


def test_a_part_of_another_run_is_named_as_such(run, tmp_path) -> None:
    """Even with a record rewritten to vouch for it, a part of another run is refused."""
    other = tmp_path / "other"
    execute(resolve_plan({**PLAN, "seed": 12}), other)
    shutil.copy(part(other, "games", 1), part(run, "games", 1))
    records = [json.loads(line) for line in (run / "parts.jsonl").read_text().splitlines()]
    records[1]["parts"]["games"] = integrity.read_ledger(other)[1]["parts"]["games"]
    (run / "parts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    other_id = json.loads((other / "manifest.json").read_text())["run_id"]
    with pytest.raises(SniffError, match=f"part-000001.parquet: belongs to another run "
                                         f"\\({other_id}, not "):
        sim.load(run)


# --- 2. bytes overwritten inside a part


def test_overwritten_bytes_are_named_never_a_raw_error(run, reference, capsys,
                                                      monkeypatch) -> None:
    from sim.checks import integrity

    monkeypatch.setattr(integrity, "SMALL_RUN", 0)  # as in a big run: parts not hashed
    bad = part(run, "rounds", 1)
    data = bytearray(bad.read_bytes())
    start, length = len(data) // 4, min(4096, len(data) // 4)  # in the pages, not the footer
    data[start:start + length] = bytes(length)
    bad.write_bytes(bytes(data))
    loaded = load_unverified(run)  # the cheap check: sizes and footers agree
    with pytest.raises(SniffError, match=f"{bad}: its content cannot be decoded"):
        loaded.table("rounds")
    code, _, err = run_main(["report", str(run), "-o", str(run.parent / "report")], capsys)
    one_line(code, err, str(bad))
    code, out, err = run_main(["verify", str(run)], capsys)
    one_line(code, err, "1 problem(s) found")
    assert f"bad: {bad}: its bytes changed since it was written" in out
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 0, err
    assert "its bytes changed since it was written" in err
    assert_same_tables(run, reference)


# --- 3. a part deleted from a complete run


def test_a_deleted_part_of_a_complete_run_is_refused(run, reference, capsys) -> None:
    gone = part(run, "games", 3)
    gone.unlink()
    with pytest.raises(SniffError, match=f"{gone}: missing"):
        sim.load(run)
    code, _, err = run_main(["report", str(run), "-o", str(run.parent / "report")], capsys)
    one_line(code, err, f"{gone}: missing")
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 0, err
    assert_same_tables(run, reference)


def test_a_part_outside_the_plan_is_refused_then_set_aside(run, reference, capsys) -> None:
    extra = part(run, "games", 7)
    shutil.copy(part(run, "games", 1), extra)
    with pytest.raises(SniffError, match="is not a part of this run's plan"):
        sim.load(run)
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 0, err
    assert not extra.exists() and (run / "set-aside" / "games-part-000007.parquet").exists()
    assert_same_tables(run, reference)


def test_a_part_written_but_not_recorded_is_checked_and_kept(run, reference, capsys) -> None:
    """The process stopped between the rename and the ledger line."""
    lines = (run / "parts.jsonl").read_text().splitlines()
    (run / "parts.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # torn
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert len(load_unverified(run).games) == 300  # readers use recorded chunks only
    kept = part(run, "games", 3).stat().st_mtime_ns
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 0, err
    assert "chunk 3: written but not recorded" in err
    assert part(run, "games", 3).stat().st_mtime_ns == kept
    assert sorted(integrity.read_ledger(run)) == [0, 1, 2, 3]
    assert_same_tables(run, reference)


def test_a_run_without_a_ledger_is_refused_in_one_line(run, capsys) -> None:
    """A run folder whose manifest names no ledger (a folder of an older sniff, or its
    ledger removed) is refused by readers, verify and a resume: nothing vouches for its
    parts' bytes."""
    (run / "parts.jsonl").unlink()
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["ledger"]
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SniffError, match="names no ledger"):
        sim.load(run)
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 2 and "names no ledger" in out + err, (out, err)
    code, _, err = run_main(["simulate", "--out", str(run), "--resume"], capsys)
    assert code == 2 and "names no ledger" in err and err.count("\n") == 1, err


# --- 4, 5. one writer at a time


def _child(*args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), SNIFF_PRECOMPILE="0")
    return subprocess.Popen([*SNIFF, *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def test_a_live_run_has_one_writer_and_readers_say_it_is_running(tmp_path, capsys) -> None:
    folder = tmp_path / "live"
    writer = _child("simulate", "--players", "2", "--games", "400000", "--chunk-size", "1000",
                    "--threads", "1", "-q", "-o", str(folder))
    try:
        deadline = time.monotonic() + 120
        while not (folder / "parts.jsonl").exists():
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr.read()
            time.sleep(0.02)
        writer.send_signal(signal.SIGSTOP)  # alive, holding the folder, writing nothing
        before = sorted(p.name for p in folder.rglob("*.parquet"))
        for extra in (["--overwrite", "--games", "100"], ["--resume"], ["--games", "400000"]):
            code, _, err = run_main(["simulate", "-o", str(folder), "-q", *extra], capsys)
            if extra[0] == "--games":
                one_line(code, err, "already holds a run")
            else:
                one_line(code, err, f"{folder} is being written by process {writer.pid} "
                                    "(sniff simulate")
        assert sorted(p.name for p in folder.rglob("*.parquet")) == before
        with pytest.warns(UserWarning, match="still being written"), \
                pytest.warns(UserWarning, match=UNVERIFIED):
            loaded = sim.load(folder)
        assert loaded.manifest["status"] == "running" and len(loaded.games) >= 1000
        code, _, err = run_main(["report", str(folder), "-o", str(tmp_path / "r")], capsys)
        assert code == 0, err
        assert "the run is still being written" in err
    finally:
        writer.kill()
        writer.wait()
    # The lock died with its process: the run reads as interrupted and can be resumed.
    assert load_unverified(folder).manifest["status"] == "interrupted"
    lock = RunLock(folder)
    lock.acquire("test")
    lock.release()


def test_a_second_writer_is_refused_by_the_lock_not_the_manifest(run, capsys) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from sim.store.lock import RunLock; "
         "lock = RunLock(sys.argv[1]); lock.acquire('holder'); print('held', flush=True); "
         "time.sleep(60)",
         str(run)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SniffError, match=f"being written by process {holder.pid}"):
            execute(resolve_plan({}, run_io.read_manifest(run), run), run,
                    RunControl(mode="resume"))
        with pytest.raises(SniffError, match=f"being written by process {holder.pid}"):
            execute(resolve_plan(dict(PLAN)), run, RunControl(mode="overwrite"))
        assert len(load_unverified(run).games) == 400
    finally:
        holder.kill()
        holder.wait()


# --- 6. the disk estimate is measured


@pytest.mark.parametrize("options", [
    {"players": 2, "strategies": "random,random"},
    {"players": 4, "strategies": "greedy,random"},
    {"players": 3, "strategies": "greedy,random,heavy", "duplicate": True},
    {"players": 4, "strategies": "greedy,defensive", "rounds": False},
])
def test_the_disk_estimate_is_never_more_than_a_tenth_under(tmp_path, options) -> None:
    plan = resolve_plan({**options, "games": 12_000, "chunk_size": 3_000, "seed": 5})
    per_game, per_part = run_space.pilot_bytes(plan)
    estimate = plan.games * per_game + 4 * per_part
    execute(plan, tmp_path / "run")
    actual = sum(p.stat().st_size for p in (tmp_path / "run").rglob("*.parquet"))
    assert 0.9 * actual <= estimate <= 1.5 * actual, (estimate, actual)


def test_a_low_estimate_is_corrected_by_the_first_chunk(tmp_path, monkeypatch,
                                                        capsys) -> None:
    folder = tmp_path / "run"
    monkeypatch.setattr(folders, "free_bytes", lambda folder: 300_000)
    monkeypatch.setattr(run_space, "pilot_bytes", lambda plan, strategies=(): (1.0, 0.0))
    code, _, err = run_main(["simulate", "--players", "2", "--games", "20000",
                             "--chunk-size", "2000", "-q", "-o", str(folder)], capsys)
    one_line(code, err, "the rest of the run needs about ")
    assert "as chunk 0 took" in err and "--resume" in err
    assert len(load_unverified(folder).games) == 2000  # the finished chunk is kept
    monkeypatch.undo()
    code, _, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert len(sim.load(folder).games) == 20000


def test_a_tournament_checks_its_pairings_and_its_resume_replays_a_bad_one(tmp_path,
                                                                            capsys) -> None:
    from sim.tournament import load as load_tournament
    from sim.tournament import run_tournament

    folder = tmp_path / "t"
    run_tournament(2, "greedy,random,heavy", 200, seed=3, out=folder, chunk_size=100)
    matrix = load_tournament(folder).matrix
    pairing = sorted((folder / "pairs").iterdir())[1]
    bad = part(pairing, "games", 1)
    shutil.copy(part(pairing, "games", 0), bad)
    with pytest.raises(SniffError, match=str(bad)):
        load_tournament(folder)
    code, _, err = run_main(["report", str(folder), "-o", str(tmp_path / "r")], capsys)
    one_line(code, err, str(bad))
    lines: list[str] = []
    run_tournament(out=folder, control=RunControl(mode="resume", notice=lines.append))
    assert any(str(bad) in line for line in lines), lines
    assert (pairing / "set-aside" / "games-part-000001.parquet").exists()
    assert load_tournament(folder).matrix.equals(matrix)


def test_an_openings_folder_checks_its_files(tmp_path, capsys) -> None:
    from sim.openings.study import run_openings

    folder = tmp_path / "openings"
    run_openings(players=2, strategies="greedy", deals=10, seed=3, out=folder)
    assert set(json.loads((folder / "summary.json").read_text())["files"]) == {
        "openings.parquet", "games/part-000000.parquet", "tile-pairs.csv", "heatmap.png"}
    code, out, _ = run_main(["verify", str(folder)], capsys)
    assert code == 0 and "4 of 4 recorded files sound" in out
    execute(resolve_plan(dict(PLAN)), tmp_path / "run")
    report = ["report", str(tmp_path / "run"), "--openings", str(folder), "--placement-sample",
              "0", "-o", str(tmp_path / "report")]
    assert run_main(report, capsys)[0] == 0
    pairs = folder / "tile-pairs.csv"
    pairs.write_text(pairs.read_text().replace("0-0", "6-6", 1))
    code, _, err = run_main([*report[:-1], str(tmp_path / "report2")], capsys)
    one_line(code, err, f"{pairs}: its bytes changed since it was written")
    code, out, err = run_main(["verify", str(folder)], capsys)
    assert code == 2 and f"bad: {pairs}" in out
    (folder / "openings.parquet").unlink()
    code, _, err = run_main([*report[:-1], str(tmp_path / "report3")], capsys)
    one_line(code, err, "openings.parquet")


FIXTURE = ROOT / "tests" / "fixtures" / "run-on-6dc88fb"


@pytest.fixture
def earlier(tmp_path) -> Path:
    folder = tmp_path / "earlier"
    shutil.copytree(FIXTURE, folder)
    return folder


def test_the_fixture_is_an_interrupted_run_of_other_code(earlier) -> None:
    manifest = json.loads((earlier / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["config"]["games"] == 60
    assert len(load_unverified(earlier).games) == 40  # a copy: not verified here


def test_it_verifies(earlier, capsys) -> None:
    code, out, err = run_main(["verify", str(earlier)], capsys)
    assert code == 0 and "2 of 3 chunks sound, 40 games" in out, (out, err)


def test_it_reports(earlier, tmp_path, capsys) -> None:
    code, out, err = run_main(["report", str(earlier), "-o", str(tmp_path / "report")],
                              capsys)
    assert code == 0, err
    page = (tmp_path / "report" / "report.md").read_text()
    assert "greedy" in page and "random" in page and "40" in page


def test_a_resume_is_refused_in_one_line_naming_the_code_that_wrote_it(earlier, capsys) -> None:
    recorded = json.loads((earlier / "manifest.json").read_text())["kernel"]
    code, _, err = run_main(["simulate", "--out", str(earlier), "--resume", "-q"], capsys)
    assert code == 2
    line = err.strip()
    assert "\n" not in line and line.startswith("sniff: error: cannot resume")
    assert f"code {recorded}" in line and "sniff 0.1.0" in line and "--overwrite" in line
    code, out, err = run_main(["verify", str(earlier)], capsys)  # the folder is untouched
    assert code == 0 and "2 of 3 chunks sound, 40 games" in out, (out, err)
