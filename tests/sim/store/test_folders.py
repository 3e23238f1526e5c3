"""A file or folder from someone else is data: bounded when read, never a place to write into.

What one reader or writer answers of a file from elsewhere (docs/data-format.md, "What is
verified"): a trace that never ends or nests without end, a position too long, an
output folder inside another folder's table.
"""

from __future__ import annotations

import pytest

import sim.store.folders
from tests.helpers.cli import error_lines, run_main


def one_line(code: int, err: str, text: str) -> None:
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def test_an_endless_trace_is_refused_after_a_bounded_read(tmp_path, capsys,
                                                          monkeypatch) -> None:
    monkeypatch.setattr(sim.store.folders, "MAX_USER_FILE", 2**20)
    code, out, err = run_main(["replay", "/dev/zero"], capsys)  # never read: not a file
    one_line(code, err, "is a device")
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(2**30)
    code, out, err = run_main(["replay", str(huge)], capsys)
    one_line(code, err, "is larger than 1 MiB")


@pytest.mark.parametrize("command", [
    ["replay"], ["hint", "--round", "1", "--turn", "1", "--trace"]])
def test_a_trace_nested_without_end_is_one_line(command, tmp_path, capsys) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n")
    code, out, err = run_main([*command, str(path)], capsys)
    one_line(code, err, "nested too deeply")


def test_a_trace_line_without_end_is_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "long.jsonl"
    path.write_text('{"event": "' + "x" * 1_100_000 + '"}\n')
    code, out, err = run_main(["replay", str(path)], capsys)
    one_line(code, err, "longer than 1,000,000 characters")


def test_a_position_on_standard_input_is_bounded(capsys) -> None:
    code, out, err = run_main(["hint", "-"], capsys, stdin="x" * (2**20 + 10))
    one_line(code, err, "longer than 1,048,576 characters")


def test_no_output_inside_another_folders_table(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    code, out, err = run_main(["simulate", "--games", "20", "-q", "-o", str(run)], capsys)
    assert code == 0, err
    for inside in (run / "games" / "newrun", run / "rounds"):
        code, out, err = run_main(["simulate", "--games", "20", "-q", "-o", str(inside)],
                                  capsys)
        one_line(code, err, "inside the")
    assert sorted(p.name for p in (run / "games").iterdir()) == ["part-000000.parquet"]
    code, out, err = run_main(["report", str(run), "-o", str(run / "games" / "r")], capsys)
    one_line(code, err, "inside the games/ table")


def test_a_tuning_folder_has_one_writer(tmp_path, capsys) -> None:
    """A second ``sniff tune --resume`` while another process writes the folder is refused
    in one line, and changes nothing."""
    pytest.importorskip("cma", reason="sniff tune needs the tune extra (installed by [test])")
    from sim.store.lock import RunLock
    from sim.tune import folder as tune_folder
    from sim.tune.setup import TuneConfig

    folder = tmp_path / "tuning"
    config = TuneConfig.build(strategy="weighted", against="greedy", players=2,
                              games=4000, games_per_trial=100)
    tune_folder.create(folder, config, "test")
    before = (folder / "manifest.json").read_bytes()
    with RunLock(folder) as other:
        other.acquire("another sniff tune")
        code, out, err = run_main(["tune", "--resume", "-o", str(folder)], capsys)
    one_line(code, err, "is being written by")
    assert (folder / "manifest.json").read_bytes() == before


def test_a_cache_nobody_can_write_falls_back_to_the_users_own(tmp_path, monkeypatch) -> None:
    """A home that cannot be written (a service account; another user's install): the
    generated kernels and numba's cache go to a folder of this user's instead of failing."""
    import numba

    from sim import cache as files

    monkeypatch.delenv("SNIFF_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setattr(files.tempfile, "tempdir", str(tmp_path))
    assert files.cache_base() == tmp_path / f"sniff-cache-{__import__('os').getuid()}"
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setattr(files, "_writable", lambda folder: folder.is_relative_to(tmp_path)
                        and "a-file" not in str(folder))
    files.use_writable_numba_cache(tmp_path / "a-file" / "package")
    assert numba.config.CACHE_DIR == str(files.cache_base() / "numba")


def test_openings_overwrite_replaces_only_an_openings_folder(tmp_path, capsys) -> None:
    """``sniff openings --overwrite -o RUN`` would have deleted a run's games parts and left
    a folder that verify calls an openings folder: refused, the run untouched."""
    run = tmp_path / "run"
    code, out, err = run_main(["simulate", "--games", "20", "-q", "-o", str(run)], capsys)
    assert code == 0, err
    before = sorted(str(p.relative_to(run)) for p in run.rglob("*"))
    code, out, err = run_main(["openings", "--deals", "3", "--overwrite", "-q", "-o", str(run)],
                              capsys)
    one_line(code, err, "holds manifest.json, which no openings run writes")
    assert sorted(str(p.relative_to(run)) for p in run.rglob("*")) == before
    code, out, err = run_main(["verify", str(run)], capsys)
    assert code == 0 and "chunks sound" in out


def test_a_training_folder_has_one_writer(tmp_path, capsys) -> None:
    """``sniff learn --resume`` while another process trains into the folder is refused in
    one line; a new training into a folder that holds anything is refused before a lock
    file is added to it."""
    from sim.store.lock import RunLock

    folder = tmp_path / "training"
    folder.mkdir()
    (folder / "settings.json").write_text("{}")
    with RunLock(folder) as other:
        other.acquire("another sniff learn")
        code, out, err = run_main(["learn", "--out", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, "is being written by")
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("x")
    code, out, err = run_main(["learn", "--out", str(elsewhere), "-q"], capsys)
    one_line(code, err, "is not empty")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["mine.txt"]


def test_an_openings_folder_has_one_writer(tmp_path, capsys) -> None:
    """Two ``sniff openings`` into one folder at once: the second is refused in one line and
    writes nothing, so the tables and the record cannot come from two seeds."""
    from sim.store.lock import RunLock

    folder = tmp_path / "openings"
    folder.mkdir()
    with RunLock(folder) as other:
        other.acquire("another sniff openings")
        code, out, err = run_main(["openings", "--deals", "3", "-q", "-o", str(folder),
                                   "--overwrite"], capsys)
    one_line(code, err, "is being written by")
    assert sorted(p.name for p in folder.iterdir()) == [".lock"]
    code, out, err = run_main(["openings", "--deals", "3", "-q", "-o", str(folder),
                               "--overwrite"], capsys)
    assert code == 0, err
    code, out, err = run_main(["verify", str(folder)], capsys)
    assert code == 0, err


def test_two_writers_of_one_file_never_share_a_temporary(tmp_path) -> None:
    """A shared ``.games.parquet.tmp`` let one ``sniff openings`` fail and the other leave an
    unreadable file: each write now has its own temporary, and the file is one of them whole."""
    from sim.files import write_atomic

    target = tmp_path / "games.parquet"
    seen = []

    def outer(temporary):
        seen.append(temporary)
        temporary.write_bytes(b"first")
        write_atomic(target, inner)  # a second writer starts while the first is writing

    def inner(temporary):
        seen.append(temporary)
        temporary.write_bytes(b"second")

    write_atomic(target, outer)
    assert seen[0] != seen[1] and all(p.name.startswith(".games.parquet.") for p in seen)
    assert target.read_bytes() == b"first"  # the last rename wins, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.parquet"]
