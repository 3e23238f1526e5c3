"""``--overwrite`` and ``--resume`` never remove or write through a link in their folder
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

from tests.helpers.cli import invoke, one_line, run_main
from tests.helpers.links import linked_out, sound_folders

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
