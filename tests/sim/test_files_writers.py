"""Writers write only inside their own folder, and only regular files (#51, data loss).

A lock, a temporary file, ``.partial/`` and ``set-aside/`` are never followed through a link
or written into a FIFO or device; every output path of every command gets the one check of
``sim.store.folders`` (never inside another sniff folder, never over a link, device or
FIFO, ``--overwrite`` only over a file of the command's own kind).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import sim
from sim.checks import integrity
from sim.errors import SniffError
from sim.files import UnsafeFile, open_lock_file, write_atomic
from sim.store.lock import RunLock
from tests.helpers.cli import copy_of, one_line, run_main


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A complete 4-player run of two chunks (copied by each test that edits it)."""
    folder = tmp_path_factory.mktemp("writers") / "run"
    sim.simulate(4, "greedy,random", 200, 3, chunk_size=100, out=folder)
    return folder


@pytest.mark.parametrize("command", [
    ["simulate", "--resume", "-q"],
    ["simulate", "--overwrite", "--games", "20", "-q"],
])
def test_a_lock_that_is_a_link_is_never_written_through(command, played, tmp_path,
                                                         capsys) -> None:
    run = copy_of(played, tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    (run / ".lock").unlink(missing_ok=True)
    (run / ".lock").symlink_to(outside)
    code, out, err = run_main([*command, "-o", str(run)], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert outside.read_text() == "keep me"


def test_every_writers_lock_refuses_a_link(tmp_path) -> None:
    """``RunLock`` is the lock of simulate, tournament, openings, tune and learn alike."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / ".lock").symlink_to(outside)
    with pytest.raises(SniffError, match="is a link, not the folder's lock file"):
        RunLock(folder).acquire("test")
    assert outside.read_text() == "keep me"


def test_a_lock_that_is_a_fifo_or_device_is_refused(tmp_path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", Path("/dev/null")):
        with pytest.raises(UnsafeFile, match="not a regular lock file"):
            open_lock_file(path)


def test_write_atomic_replaces_no_link_device_or_fifo(tmp_path) -> None:
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    for path in (link, tmp_path / "fifo"):
        with pytest.raises(UnsafeFile):
            write_atomic(path, lambda temporary: temporary.write_text("new"))
    assert target.read_text() == "keep" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link", "target"]


def test_trace_output_is_checked(played, tmp_path, capsys) -> None:
    link = tmp_path / "stdout"
    link.symlink_to("/dev/null")
    base = ["trace", "--strategies", "greedy,random", "-o"]
    for path, text in [(link, "is a link"), (played / "t.jsonl", "inside the sniff folder"),
                       (played / "games" / "t.jsonl", "inside the games/ table")]:
        code, out, err = run_main([*base, str(path)], capsys)
        one_line(code, err, text)
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    code, out, err = run_main([*base, str(other)], capsys)
    one_line(code, err, "not a trace file")
    assert other.read_text() == "my notes\n"
    good = tmp_path / "t.jsonl"
    for _ in range(2):  # a trace is replaced by a trace
        code, out, err = run_main([*base, str(good)], capsys)
        assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "stdout", "t.jsonl"]
    assert sorted(p.name for p in played.iterdir()) == [
        ".lock", "games", "manifest.json", "parts.jsonl", "rounds"]


def test_query_parquet_never_writes_into_another_folder(played, tmp_path, capsys) -> None:
    before = {p: p.read_bytes() for p in played.rglob("*") if p.is_file()}
    other = tmp_path / "other"
    shutil.copytree(played, other)
    query = ["query", str(other), "select 1 as x", "--overwrite", "--parquet"]
    for path in (played / "games" / "part-000000.parquet", played / "manifest.json",
                 played / "games" / "new.parquet"):
        code, out, err = run_main([*query, str(path)], capsys)
        one_line(code, err, "inside the")
    text = tmp_path / "notes.txt"
    text.write_text("x")
    code, out, err = run_main([*query, str(text)], capsys)
    one_line(code, err, "not a parquet file")
    os.mkfifo(tmp_path / "fifo")
    code, out, err = run_main([*query, str(tmp_path / "fifo")], capsys)
    one_line(code, err, "is a FIFO")
    assert {p: p.read_bytes() for p in played.rglob("*") if p.is_file()} == before


def test_no_output_inside_a_runs_private_folders(played, tmp_path, capsys) -> None:
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o",
                               str(played / ".partial" / "mine")], capsys)
    one_line(code, err, "inside the sniff folder")
    link = tmp_path / "into-games"
    link.symlink_to(played / "games")
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o",
                               str(link / "mine")], capsys)
    one_line(code, err, "inside the games/ table")
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o", str(link)], capsys)
    one_line(code, err, "is a link")
    assert sorted(p.name for p in (played / "games").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]


def test_partial_and_set_aside_must_be_folders_of_the_run(played, tmp_path, capsys) -> None:
    run = copy_of(played, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.txt").write_text("keep")
    (run / ".partial").symlink_to(outside, target_is_directory=True)
    code, out, err = run_main(["simulate", "-o", str(run), "--resume", "-q"], capsys)
    one_line(code, err, "not the .partial folder of the run")
    assert (outside / "mine.txt").read_text() == "keep"
    (run / ".partial").unlink()
    (run / "set-aside").symlink_to(outside, target_is_directory=True)
    part = run / "games" / "part-000001.parquet"
    part.write_bytes(part.read_bytes()[:-10])  # damaged: --resume would set it aside
    with pytest.raises(UnsafeFile, match="not the set-aside folder of the run"):
        integrity.resume_chunks(run, sim.store.io.read_manifest(run), lambda _: None)
    assert sorted(p.name for p in outside.iterdir()) == ["mine.txt"]


def interrupted_copy(played: Path, tmp_path: Path) -> Path:
    """A copy of ``played`` stopped after its first chunk: ``--resume`` plays chunk 1."""
    import json

    run = copy_of(played, tmp_path)
    ledger = run / "parts.jsonl"
    ledger.write_text(ledger.read_text().splitlines(keepends=True)[0])
    for table in ("games", "rounds"):
        (run / table / "part-000001.parquet").unlink()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


@pytest.mark.parametrize("table", ["games", "rounds"])
def test_resume_never_writes_through_a_table_folder_that_is_a_link(table, played, tmp_path,
                                                                   capsys) -> None:
    """B04/B01/B02: a table folder linked out of the run carries no part out of it."""
    run = interrupted_copy(played, tmp_path)
    outside = tmp_path / "outside"
    (run / table).rename(outside)
    (run / table).symlink_to(outside, target_is_directory=True)
    (outside / "part-000001.parquet").write_text("precious data")
    code, out, err = run_main(["simulate", "--resume", "-q", "-o", str(run)], capsys)
    one_line(code, err, f"is a link, not the {table} folder of the run")
    assert (outside / "part-000001.parquet").read_text() == "precious data"
    assert sorted(p.name for p in outside.iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]
    (run / table).unlink()
    (run / table).write_text("not a folder")
    code, out, err = run_main(["simulate", "--resume", "-q", "-o", str(run)], capsys)
    one_line(code, err, f"not the {table} folder of the run")


def test_every_part_writer_refuses_a_table_folder_that_is_a_link(tmp_path) -> None:
    """The part writers themselves (simulate's chunks, the openings parts) check it too,
    so a folder swapped for a link while a run plays is refused as well; an openings
    resume refuses it before it reads (or sets aside) a part through it."""
    import pandas as pd
    import pyarrow as pa

    from sim.openings.folder import GamesParts
    from sim.openings.parts import PartsRun, play_parts
    from sim.openings.play import make_config
    from sim.openings.tally import OpeningsTally
    from sim.store.io import write_chunk

    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "games").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        write_chunk(run, 0, {"games": pa.table({"game": [0]})})
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        GamesParts(run, None, 1).add(0, 1, pd.DataFrame({"deal_id": [0]}))
    assert list(outside.iterdir()) == []
    (outside / "part-000000.parquet").write_text("precious data")  # a resume reads it first
    config = make_config(2, "random", 4, 1)
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        play_parts(PartsRun(run, config, "test", 2, 2, ""), OpeningsTally(), resume=True)
    assert [p.read_text() for p in outside.iterdir()] == ["precious data"]


def test_play_trace_and_bench_outputs_take_the_same_check(played, tmp_path) -> None:
    from sim.run.bench import run as bench
    from sim.table.play import play_game
    from strategies import parse_spec

    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    with pytest.raises(SniffError, match="is a link"):
        play_game(2, 0, [parse_spec("random")], 1, link, lambda: "", lambda text: None)
    with pytest.raises(SniffError, match="inside the sniff folder"):
        bench(quick=True, out=played / "bench.json")
    assert not (tmp_path / "target").exists()
