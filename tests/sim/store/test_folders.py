"""A file or folder from someone else is data: bounded when read, never a place to write into.

What one reader or writer answers of a file from elsewhere (docs/data-format.md, "What is
verified"): a trace that never ends or nests without end, a position too long, an
output folder inside another folder's table.

``--overwrite`` and ``--resume`` never remove or write through a link in their folder
(#51, campaign 2: K015, K017, K029, K032-K035).

A link where a sniff folder has a file or folder of its own (``games/``, ``pairs/``,
``snapshots/``, ``log.jsonl``, a chart) was put there by hand: removing or writing through
it would change what it points to, outside the folder (another run's parts, a file of
yours). Each command refuses it in one line before it removes or writes anything.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import sim.store.folders
from tests.helpers.cli import error_lines, invoke, one_line, run_main
from tests.helpers.links import linked_out, sound_folders


def one_error_line(code: int, err: str, text: str) -> None:
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def test_an_endless_trace_is_refused_after_a_bounded_read(tmp_path, capsys,
                                                          monkeypatch) -> None:
    monkeypatch.setattr(sim.store.folders, "MAX_USER_FILE", 2**20)
    code, out, err = run_main(["replay", "/dev/zero"], capsys)  # never read: not a file
    one_error_line(code, err, "is a device")
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(2**30)
    code, out, err = run_main(["replay", str(huge)], capsys)
    one_error_line(code, err, "is larger than 1 MiB")


@pytest.mark.parametrize("command", [
    ["replay"], ["hint", "--round", "1", "--turn", "1", "--trace"]])
def test_a_trace_nested_without_end_is_one_line(command, tmp_path, capsys) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n")
    code, out, err = run_main([*command, str(path)], capsys)
    one_error_line(code, err, "nested too deeply")


def test_a_trace_line_without_end_is_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "long.jsonl"
    path.write_text('{"event": "' + "x" * 1_100_000 + '"}\n')
    code, out, err = run_main(["replay", str(path)], capsys)
    one_error_line(code, err, "longer than 1,000,000 characters")


def test_a_position_on_standard_input_is_bounded(capsys) -> None:
    code, out, err = run_main(["hint", "-"], capsys, stdin="x" * (2**20 + 10))
    one_error_line(code, err, "longer than 1,048,576 characters")


def test_no_output_inside_another_folders_table(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    code, out, err = run_main(["simulate", "--games", "20", "-q", "-o", str(run)], capsys)
    assert code == 0, err
    for inside in (run / "games" / "newrun", run / "rounds"):
        code, out, err = run_main(["simulate", "--games", "20", "-q", "-o", str(inside)],
                                  capsys)
        one_error_line(code, err, "inside the")
    assert sorted(p.name for p in (run / "games").iterdir()) == ["part-000000.parquet"]
    code, out, err = run_main(["report", str(run), "-o", str(run / "games" / "r")], capsys)
    one_error_line(code, err, "inside the games/ table")


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
    one_error_line(code, err, "holds manifest.json, which no openings run writes")
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
    one_error_line(code, err, "is being written by")
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("x")
    code, out, err = run_main(["learn", "--out", str(elsewhere), "-q"], capsys)
    one_error_line(code, err, "is not empty")
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
    one_error_line(code, err, "is being written by")
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


LEARN = ["learn", "--players", "2", "--games", "40", "--hidden", "8", "--eval-games", "0",
         "--epochs", "1"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("writer-links")
    made = sound_folders(base, openings_deals=20)
    code, out, err = invoke([*LEARN, "--iterations", "1", "-o", str(base / "learn"), "-q"])
    assert code == 0, err
    return {**made, "learn": base / "learn"}


def with_link(folders: dict, tmp_path: Path, kind: str, name: str) -> tuple[Path, Path]:
    """A copy of ``folders[kind]`` whose ``name`` was moved outside and linked back: the
    copy and the outside folder or file."""
    folder = tmp_path / kind
    shutil.copytree(folders[kind], folder)
    return folder, linked_out(folder, name, tmp_path / "outside" / name)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (or ``path`` itself) by its relative name, with its bytes."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("kind, name, args", [
    ("run", "games", ["simulate", "--players", "2", "--games", "20", "-q", "--overwrite"]),
    ("run", "rounds", ["simulate", "--players", "2", "--games", "20", "-q", "--overwrite"]),
    ("openings", "games", ["openings", "--players", "2", "--strategies", "random", "--deals",
                           "4", "-q", "--overwrite"]),
    ("tournament", "pairs", ["tournament", "--players", "2", "--strategies",
                             "greedy,random,heavy", "--games-per-pair", "20", "-q",
                             "--overwrite"]),
    ("tournament", "pairs", ["tournament", "--resume", "-q"]),
    ("learn", "snapshots", [*LEARN, "--iterations", "2", "--resume", "-q"]),
    ("learn", "log.jsonl", [*LEARN, "--iterations", "2", "--resume", "-q"]),
])
def test_a_link_in_the_folder_is_refused_before_anything_is_removed_or_written(
        folders, tmp_path, capsys, kind, name, args) -> None:
    folder, outside = with_link(folders, tmp_path, kind, name)
    before = snapshot(outside)
    code, out, err = run_main([*args, "-o", str(folder)], capsys)
    one_line(code, err, f"{folder / name}: is a link")
    assert snapshot(outside) == before  # nothing removed, replaced or added out there


def test_another_runs_games_linked_in_is_never_emptied_by_overwrite(folders, tmp_path,
                                                                    capsys) -> None:
    """K035: an openings folder whose games/ is a link to another run's games/."""
    victim = tmp_path / "victim"
    shutil.copytree(folders["run"], victim)
    folder = tmp_path / "openings"
    shutil.copytree(folders["openings"], folder)
    shutil.rmtree(folder / "games")
    (folder / "games").symlink_to(victim / "games", target_is_directory=True)
    before = snapshot(victim)
    code, out, err = run_main(["openings", "--players", "2", "--strategies", "random",
                               "--deals", "4", "-q", "--overwrite", "-o", str(folder)], capsys)
    one_line(code, err, f"{folder / 'games'}: is a link to {victim / 'games'}")
    assert snapshot(victim) == before
    code, out, err = run_main(["verify", str(victim)], capsys)
    assert code == 0, (out, err)


@pytest.mark.parametrize("name", ["matrix.png", "ranking.csv"])
def test_a_tournament_writes_its_results_never_through_a_link(folders, tmp_path, capsys,
                                                              name) -> None:
    """The charts and CSVs are written whole beside their name and renamed (a link there is
    one line), not opened through it."""
    folder = tmp_path / "tournament"
    shutil.copytree(folders["tournament"], folder)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    (folder / name).unlink()
    (folder / name).symlink_to(outside)
    code, out, err = run_main(["tournament", "--resume", "-q", "-o", str(folder)], capsys)
    one_line(code, err, f"{folder / name}: is a link")
    assert outside.read_text() == "keep me"


def test_a_training_log_that_is_a_fifo_is_refused_before_an_iteration(folders, tmp_path,
                                                                      capsys) -> None:
    """Campaign 2 K199: learn --resume opened log.jsonl only after an iteration's play and
    fit, and a FIFO there blocked it; now one line at once, the state left as it was."""
    import os

    folder = tmp_path / "learn"
    shutil.copytree(folders["learn"], folder)
    (folder / "log.jsonl").unlink()
    os.mkfifo(folder / "log.jsonl")
    state = (folder / "state.json").read_bytes()
    code, out, err = run_main([*LEARN, "--iterations", "2", "--resume", "-q", "-o",
                               str(folder)], capsys)
    one_line(code, err, f"{folder / 'log.jsonl'}: is a FIFO")
    assert (folder / "state.json").read_bytes() == state


def test_a_resume_never_appends_into_a_hard_linked_snapshot(folders, tmp_path,
                                                            capsys) -> None:
    """Campaign 2 K235: ``cp -al RUN SNAP`` then ``simulate --resume -o RUN``: the ledger's
    append went into the inode SNAP shares, and SNAP then failed verify. The appender now
    gives RUN's ledger a copy of its own first."""
    import os

    from tests.helpers.cli import as_stopped_before

    run = tmp_path / "run"
    shutil.copytree(folders["run"], run)
    as_stopped_before(run, 1)
    (run / "games" / "part-000001.parquet").unlink()
    (run / "rounds" / "part-000001.parquet").unlink()
    snapshot_folder = tmp_path / "snap"
    shutil.copytree(run, snapshot_folder, copy_function=os.link)
    assert os.stat(run / "parts.jsonl").st_nlink == 2
    before = snapshot(snapshot_folder)
    code, out, err = run_main(["simulate", "--resume", "-q", "-o", str(run)], capsys)
    assert code == 0, err
    assert snapshot(snapshot_folder) == before
    for folder in (run, snapshot_folder):
        code, out, err = run_main(["verify", str(folder)], capsys)
        assert code == 0 and "bad:" not in out, (out, err)


@pytest.mark.parametrize("command", [
    ["simulate", "--players", "2", "--games", "20", "-q", "-o", "{learn}/sub"],  # K215
    ["trace", "--players", "2", "--strategies", "greedy,random", "--games", "1", "-o",
     "{learn}/x.jsonl"],  # K220
    ["query", "{run}", "select 1 as x", "--parquet", "{learn}/q.parquet"],  # K222
])
def test_no_output_goes_inside_a_training_folder(folders, capsys, command) -> None:
    """Campaign 2 K215-K222: a training folder is a sniff folder like the others."""
    args = [part.format(learn=folders["learn"], run=folders["run"]) for part in command]
    code, out, err = run_main(args, capsys)
    one_line(code, err, f"is inside the sniff folder {folders['learn']}")
    assert not [name for name in ("sub", "x.jsonl", "q.parquet")
                if (folders["learn"] / name).exists()]


def test_a_lock_shared_with_a_hard_linked_copy_is_named(folders, tmp_path) -> None:
    """Campaign 2 phase 2, P286: a copy made with ``cp -al`` shares its ``.lock``; while the
    original is written, the copy's writer is told so, not that the copy is being written
    by the original's command."""
    import os

    from sim.errors import SniffError
    from sim.store.lock import RunLock

    run = tmp_path / "run"
    shutil.copytree(folders["run"], run)
    (run / ".lock").touch()
    shutil.copytree(run, tmp_path / "copy", copy_function=os.link)
    with RunLock(run) as held:
        held.acquire("sniff simulate -o run")
        with pytest.raises(SniffError, match=r"copy/\.lock is also the lock of another folder"):
            RunLock(tmp_path / "copy").acquire("sniff simulate -o copy")
