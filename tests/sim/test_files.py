"""Readers never block and never read without bound (#51, hangs).

A FIFO, a device or a link to one in place of any file a reader opens is one line (opened
non-blocking, its type checked: ``sim.files.open_regular``), and every read has a size
bound: manifests, the ledger, ``tournament.json``, the lock, ``best.json``, ``@file`` specs,
``learned:model=PATH``, a training folder's state.

Writers write only inside their own folder, and only regular files (#51, data loss).

A lock, a temporary file, ``.partial/`` and ``set-aside/`` are never followed through a link
or written into a FIFO or device; every output path of every command gets the one check of
``sim.store.folders`` (never inside another sniff folder, never over a link, device or
FIFO, ``--overwrite`` only over a file of the command's own kind).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import sim
from sim.checks import resume
from sim.errors import SniffError
from sim.files import UnsafeFile, open_lock_file, read_regular, write_atomic
from sim.store.lock import RunLock
from tests.helpers.cli import copy_of, one_line, run_main


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("readers") / "run"
    sim.simulate(4, "greedy,random", 200, 3, chunk_size=100, out=folder)
    return folder


def test_read_regular_refuses_fifo_device_and_bounds_size(tmp_path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(UnsafeFile, match="is a FIFO"):
        read_regular(tmp_path / "fifo", 100)
    with pytest.raises(UnsafeFile, match="is a device"):
        read_regular(tmp_path / "zero", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(UnsafeFile, match="larger than"):
        read_regular(tmp_path / "big", 100)
    assert read_regular(tmp_path / "big", 101) == b"x" * 101


@pytest.mark.parametrize("name, special", [
    ("manifest.json", "fifo"), ("parts.jsonl", "fifo"), ("parts.jsonl", "/dev/zero"),
    ("manifest.json", "/dev/zero")])
@pytest.mark.parametrize("command", [
    ["query", "{run}", "select count(*) from games"], ["verify", "{run}"],
    ["report", "{run}", "-o", "{tmp}/report", "--placement-sample", "0"]])
def test_a_special_file_in_a_run_is_one_line(played, tmp_path, capsys, name, special,
                                             command) -> None:
    run = copy_of(played, tmp_path)
    (run / name).unlink()
    if special == "fifo":
        os.mkfifo(run / name)
    else:
        (run / name).symlink_to(special)
    args = [part.format(run=run, tmp=tmp_path) for part in command]
    code, out, err = run_main(args, capsys)
    one_line(code, err, f"{name}: is a")


def test_a_fifo_lock_of_a_running_run_never_blocks(played, tmp_path, capsys) -> None:
    run = copy_of(played, tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "running"
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / ".lock").unlink()
    os.mkfifo(run / ".lock")
    code, out, err = run_main(["query", str(run), "select count(*) as n from games"], capsys)
    assert code == 0 and "200" in out, err


def test_learned_model_from_a_device_is_one_line(capsys) -> None:
    code, out, err = run_main(["trace", "--strategies", "learned:model=/dev/zero,random"],
                              capsys)
    one_line(code, err, "is a device")


def test_a_fifo_tournament_json_is_one_line(tmp_path, capsys) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    os.mkfifo(folder / "tournament.json")
    code, out, err = run_main(["verify", str(folder)], capsys)
    one_line(code, err, "tournament.json: is a FIFO")


def test_readers_say_when_a_folder_was_not_verified_since_it_changed(played, tmp_path,
                                                                     capsys) -> None:
    """Readers check sizes and footers, not the sha256 (sim.checks.verified): a copy is
    unverified until ``sniff verify``; a part written again (same size) is unverified
    again. The run's writer counts as its verifier."""
    note = "was not verified since it last changed"
    query = ["query", "{run}", "select count(*) as n from games"]
    code, out, err = run_main([a.format(run=played) for a in query], capsys)
    assert code == 0 and note not in err, err  # written here: hashed as it was written
    run = copy_of(played, tmp_path)
    args = [a.format(run=run) for a in query]
    code, out, err = run_main(args, capsys)
    assert code == 0 and "200" in out and note in err and f"sniff verify {run}" in err, err
    with pytest.warns(UserWarning, match=note):
        sim.load(run)
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 0, err
    code, out, err = run_main(args, capsys)
    assert code == 0 and note not in err, err
    part = run / "games" / "part-000001.parquet"
    data = part.read_bytes()
    part.unlink()
    part.write_bytes(data)  # the same size: the cheap check cannot tell a forged part
    code, out, err = run_main(args, capsys)
    assert code == 0 and note in err, err
    code, out, err = run_main(["report", str(run), "-o", str(tmp_path / "r"),
                               "--placement-sample", "0"], capsys)
    assert code == 0 and note in err, err


@pytest.mark.parametrize("extra, text", [
    ("beyond", "records chunk 2, outside this run's plan of 2 chunks"),  # A18b
    ("many", "more than 1,056 lines for a plan of 2 chunks"),  # A18: the ledger is bounded
])
def test_a_ledger_bigger_than_its_plan_is_one_line(played, tmp_path, capsys, extra,
                                                   text) -> None:
    """A record outside the plan, or more lines than replays could write, is refused by
    verify and every reader (no run writes them), after reading a bounded number of lines."""
    run = copy_of(played, tmp_path)
    ledger = run / "parts.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    assert len(lines) == 2  # the plan's two chunks
    if extra == "beyond":
        record = json.loads(lines[0])
        record["chunk"] = 2
        added = [json.dumps(record) + "\n"]
    else:
        added = [lines[0]] * 2000  # chunk 0 recorded again and again
    ledger.write_text("".join(lines + added))
    for args in (["verify", str(run)], ["query", str(run), "select count(*) from games"]):
        code, out, err = run_main(args, capsys)
        one_line(code, err, text)


def forge_same_size(part: Path, *columns: str) -> None:
    """``part`` rewritten with ``columns`` set to zeros, its footer kept (with a padding key
    to bring it to the same size, as a forger would): its size and footer check out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sim.store.io import parquet_options

    size, table = part.stat().st_size, pq.read_table(part)
    for column in columns:
        index = table.schema.get_field_index(column)
        zeros = pa.array([0] * table.num_rows, table.schema.field(index).type)
        table = table.set_column(index, table.schema.field(index), zeros)
    pad = 0
    for _ in range(8):  # a key of the Parquet footer alone: a byte more for a byte of it
        with pq.ParquetWriter(part, table.schema, **parquet_options(table.schema)) as writer:
            writer.write_table(table)
            writer.add_key_value_metadata({"pad": "x" * pad})
        if part.stat().st_size == size:
            return
        pad += size - part.stat().st_size
        assert pad >= 0, "the edit made the part bigger"
    raise AssertionError("no padding gives the same size")


def test_readers_hash_the_parts_of_a_small_run(played, tmp_path, capsys) -> None:
    """#63: a part of the same size with a consistent footer and other values was read
    (only the note that the folder was not verified); a small run's parts are hashed."""
    run = copy_of(played, tmp_path)
    part = run / "games" / "part-000001.parquet"
    forge_same_size(part, "team0_score", "team1_score", "rounds")
    for command in (["query", str(run), "select sum(rounds) from games"],
                    ["report", str(run), "-o", str(tmp_path / "r"), "--placement-sample", "0"]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, f"{part}: its bytes changed since it was written")
    with pytest.raises(SniffError, match="its bytes changed"):
        sim.load(run)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A complete 4-player run of two chunks (copied by each test that edits it)."""
    folder = tmp_path_factory.mktemp("writers") / "run"
    sim.simulate(4, "greedy,random", 200, 3, chunk_size=100, out=folder)
    return folder


@pytest.mark.parametrize("command", [
    ["simulate", "--resume", "-q"],
    ["simulate", "--overwrite", "--games", "20", "-q"],
])
def test_a_lock_that_is_a_link_is_never_written_through(command, written, tmp_path,
                                                         capsys) -> None:
    run = copy_of(written, tmp_path)
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


def test_trace_output_is_checked(written, tmp_path, capsys) -> None:
    link = tmp_path / "stdout"
    link.symlink_to("/dev/null")
    base = ["trace", "--strategies", "greedy,random", "-o"]
    for path, text in [(link, "is a link"), (written / "t.jsonl", "inside the sniff folder"),
                       (written / "games" / "t.jsonl", "inside the games/ table")]:
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
    assert sorted(p.name for p in written.iterdir()) == [
        ".lock", "games", "manifest.json", "parts.jsonl", "rounds"]


def test_query_parquet_never_writes_into_another_folder(written, tmp_path, capsys) -> None:
    before = {p: p.read_bytes() for p in written.rglob("*") if p.is_file()}
    other = tmp_path / "other"
    shutil.copytree(written, other)
    query = ["query", str(other), "select 1 as x", "--overwrite", "--parquet"]
    for path in (written / "games" / "part-000000.parquet", written / "manifest.json",
                 written / "games" / "new.parquet"):
        code, out, err = run_main([*query, str(path)], capsys)
        one_line(code, err, "inside the")
    text = tmp_path / "notes.txt"
    text.write_text("x")
    code, out, err = run_main([*query, str(text)], capsys)
    one_line(code, err, "not a parquet file")
    os.mkfifo(tmp_path / "fifo")
    code, out, err = run_main([*query, str(tmp_path / "fifo")], capsys)
    one_line(code, err, "is a FIFO")
    assert {p: p.read_bytes() for p in written.rglob("*") if p.is_file()} == before


def test_no_output_inside_a_runs_private_folders(written, tmp_path, capsys) -> None:
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o",
                               str(written / ".partial" / "mine")], capsys)
    one_line(code, err, "inside the sniff folder")
    link = tmp_path / "into-games"
    link.symlink_to(written / "games")
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o",
                               str(link / "mine")], capsys)
    one_line(code, err, "inside the games/ table")
    code, out, err = run_main(["simulate", "--games", "10", "-q", "-o", str(link)], capsys)
    one_line(code, err, "is a link")
    assert sorted(p.name for p in (written / "games").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet"]


def test_partial_and_set_aside_must_be_folders_of_the_run(written, tmp_path, capsys) -> None:
    run = copy_of(written, tmp_path)
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
        resume.resume_chunks(run, sim.store.io.read_manifest(run), lambda _: None)
    assert sorted(p.name for p in outside.iterdir()) == ["mine.txt"]


def interrupted_copy(written: Path, tmp_path: Path) -> Path:
    """A copy of ``played`` stopped after its first chunk: ``--resume`` plays chunk 1."""
    import json

    run = copy_of(written, tmp_path)
    ledger = run / "parts.jsonl"
    ledger.write_text(ledger.read_text().splitlines(keepends=True)[0])
    for table in ("games", "rounds"):
        (run / table / "part-000001.parquet").unlink()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


@pytest.mark.parametrize("table", ["games", "rounds"])
def test_resume_never_writes_through_a_table_folder_that_is_a_link(table, written, tmp_path,
                                                                   capsys) -> None:
    """B04/B01/B02: a table folder linked out of the run carries no part out of it."""
    run = interrupted_copy(written, tmp_path)
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


def test_play_trace_and_bench_outputs_take_the_same_check(written, tmp_path) -> None:
    from sim.run.bench import run as bench
    from sim.table.play import play_game
    from strategies import parse_spec

    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    with pytest.raises(SniffError, match="is a link"):
        play_game(2, 0, [parse_spec("random")], 1, link, lambda: "", lambda text: None)
    with pytest.raises(SniffError, match="inside the sniff folder"):
        bench(quick=True, out=written / "bench.json")
    assert not (tmp_path / "target").exists()
