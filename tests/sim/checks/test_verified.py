"""``sniff verify`` names a link in a sniff folder (#51: B06, N10, N13).

Writers refuse links, so a folder sniff wrote never holds one: a recorded file or a table
folder that is a link was put there by hand, and what it points to is outside what the
folder records, even when its bytes are the same. Verify says so in one line naming the
link and where it points, and exits 2; ``--resume`` sets a linked part aside (moving the
link, never what it points to) and plays its chunk again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import error_lines, run_main
from tests.helpers.links import linked_out, sound_folders


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A plain run of 2 chunks, an openings folder and a tournament, each sound."""
    return sound_folders(tmp_path_factory.mktemp("links"), openings_deals=30)


def verify(folder: Path, capsys) -> tuple[int, str, str]:
    return run_main(["verify", str(folder)], capsys)


@pytest.mark.parametrize("kind, name, what", [
    ("run", "games", "the games folder"),  # B06
    ("run", "rounds", "the rounds folder"),
    ("run", "games/part-000001.parquet", "a part written by this run"),
    ("run", "manifest.json", "the manifest"),
    ("run", "parts.jsonl", "the ledger"),
    ("run", "set-aside", "the set-aside folder"),
    ("openings", "heatmap.png", "the regular file"),  # N10
    ("openings", "games", "the folder"),
    ("openings", "openings.parquet", "the regular file"),
    ("openings", "summary.json", "the summary.json"),
    ("openings", "ranking.md", "the ranking.md"),
    ("tournament", "matrix.png", "the regular file"),  # N13
    ("tournament", "ranking.csv", "the regular file"),
    ("tournament", "pairs", "the pairs folder"),
    ("tournament", "tournament.json", "the manifest"),
])
def test_a_link_out_of_the_folder_is_named_by_verify(folders, tmp_path, capsys, kind, name,
                                                     what) -> None:
    folder = tmp_path / kind
    shutil.copytree(folders[kind], folder)
    if name == "set-aside":  # (a run keeps one once a resume set a part aside)
        (folder / name).mkdir()
    code, out, err = verify(folder, capsys)
    assert code == 0 and "bad:" not in out, (out, err)
    outside = linked_out(folder, name, tmp_path / "elsewhere" / Path(name).name)
    code, out, err = verify(folder, capsys)
    bad = [line for line in out.splitlines() if line.startswith("bad:")]
    assert code == 2 and len(bad) == 1, (out, err)
    assert bad[0].startswith(f"bad: {folder / name}: is a link to {outside}, not {what}"), bad
    assert len(error_lines(err)) == 1 and "Traceback" not in err, err
    if kind == "run" and "/" not in name:  # not a bad chunk: --resume would refuse it too
        assert "--resume" not in err, err


def test_resume_sets_a_linked_part_aside_and_plays_it_again(folders, tmp_path,
                                                            capsys) -> None:
    folder = tmp_path / "run"
    shutil.copytree(folders["run"], folder)
    outside = linked_out(folder, "games/part-000001.parquet", tmp_path / "elsewhere.parquet")
    before = outside.read_bytes()
    code, out, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, (out, err)
    assert "part-000001.parquet: is a link to" in err and "set aside" in err, err
    assert outside.read_bytes() == before  # what the link pointed to is left alone
    assert not (folder / "games" / "part-000001.parquet").is_symlink()
    code, out, err = verify(folder, capsys)
    assert code == 0 and "bad:" not in out, (out, err)
