"""An openings folder binds what it shows (``sim.openings.folder``, read by ``sniff verify``,
``sniff report`` and ``sniff query``): an edited pairs table, record or summary is bad, and
a summary that is no regular file is one line naming it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import run_main
from tests.helpers.verify import copy_of, edit_json, one_line, play_runs, verify


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The plain run of ``sniff verify``'s tests (tests/helpers/verify.py)."""
    return play_runs(tmp_path_factory.mktemp("verify"), ("plain",))


@pytest.fixture(scope="module")
def openings(tmp_path_factory) -> Path:
    from sim.openings.study import run_openings

    folder = tmp_path_factory.mktemp("verify-o") / "o"
    run_openings(2, "random", 30, seed=5, out=folder)
    return folder


def _rewrite_pairs(folder: Path) -> None:
    """tile-pairs.csv edited, and its size and sha256 in summary.json updated to match."""
    import hashlib

    lines = (folder / "tile-pairs.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[7] = "9.99"
    lines[1] = ",".join(cells)
    (folder / "tile-pairs.csv").write_text("\n".join(lines) + "\n")
    data = (folder / "tile-pairs.csv").read_bytes()
    edit_json(folder / "summary.json", lambda s: s["files"]["tile-pairs.csv"].update(
        bytes=len(data), sha256=hashlib.sha256(data).hexdigest()))


def _rewrite_recorded(folder: Path, name: str, edit) -> None:
    """``name`` (a Parquet file of the folder) rewritten by ``edit(table) -> table`` with
    its footer, and its size and sha256 in summary.json updated to match."""
    import hashlib

    import pyarrow.parquet as pq

    path = folder / name
    data = pq.read_table(path)
    pq.write_table(edit(data).replace_schema_metadata(data.schema.metadata), path)
    raw = path.read_bytes()
    edit_json(folder / "summary.json", lambda s: s["files"][name].update(
        bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest()))


def _add(column: str, amount: float):
    import pyarrow.compute as pc

    def edit(table):
        index = table.schema.get_field_index(column)
        field = table.schema.field(index)
        return table.set_column(index, field, pc.cast(pc.add(table[column], amount),
                                                       field.type))
    return edit


@pytest.mark.parametrize("edit, text", [
    (_rewrite_pairs, "tile-pairs.csv: does not match"),
    (lambda f: _rewrite_recorded(f, "openings.parquet", _add("p_win_vs_avg", 0.25)),
     "openings.parquet: does not match the games table"),  # K212
    (lambda f: _rewrite_recorded(f, "games/part-000000.parquet", _add("differential", 1)),
     "openings.parquet: does not match the games table"),
    (lambda f: (f / "ranking.md").write_text("# ranked by me\n"), "ranking.md: does not match"),
    (lambda f: shutil.copy(f / "openings.parquet", f / "heatmap.png"),
     "heatmap.png: its bytes changed"),  # O05
    (lambda f: ((f / "heatmap.png").unlink(), os.mkfifo(f / "heatmap.png")),
     "heatmap.png: is a FIFO, not the regular file"),
    (lambda f: ((f / "heatmap.png").unlink(), (f / "heatmap.png").symlink_to("/dev/zero")),
     "heatmap.png: is a link to /dev/zero (a device), not the regular file"),
    (lambda f: (f / "heatmap.png").unlink(), "heatmap.png: missing"),
    (lambda f: edit_json(f / "summary.json", lambda s: s.pop("files")), "records no files"),
    (lambda f: edit_json(f / "summary.json", lambda s: s["files"].pop("tile-pairs.csv")),
     "records no tile-pairs.csv"),
])
def test_an_openings_folder_binds_what_it_shows(openings, tmp_path, capsys, edit,
                                                text) -> None:
    code, out, err = verify(openings, capsys)
    assert code == 0 and "recomputed from the tables, heatmap.png matches" in out, (out, err)
    folder = copy_of(openings, tmp_path)
    edit(folder)
    code, out, err = verify(folder, capsys)
    assert code == 2 and text in out, (out, err)


@pytest.mark.parametrize("edit, text", [
    (_rewrite_pairs, "tile-pairs.csv: does not match"),  # #63: the forged pairs were shown
    (lambda f: _rewrite_recorded(f, "openings.parquet", _add("p_win_vs_avg", 0.25)),
     "openings.parquet: does not match the games table"),
    (lambda f: _rewrite_recorded(f, "games/part-000000.parquet", _add("differential", 1)),
     "openings.parquet: does not match the games table"),
])
def test_report_refuses_an_openings_folder_that_verify_refuses(openings, tmp_path, capsys,
                                                               edit, text) -> None:
    """#63: ``sniff report --openings`` of a folder whose tile-pairs.csv was edited (its
    sha256 updated in summary.json) printed the forged figures with exit 0."""
    folder = copy_of(openings, tmp_path)
    edit(folder)
    code, out, err = run_main(["report", str(folder), "-o", str(tmp_path / "rep")], capsys)
    assert code == 2 and text in err and len(err.strip().splitlines()) == 1, (out, err)
    assert not (tmp_path / "rep").exists()


def test_replay_proves_an_openings_folder(openings, tmp_path, capsys) -> None:
    """K214: a games part's column that no figure reads, forged with its hash updated in
    summary.json, passes the recomputations and fails when the deals are played again."""
    code, out, err = run_main(["verify", str(openings), "--replay", "40"], capsys)
    assert code == 0 and "every game row identical" in out, (out, err)
    code, out, err = run_main(["verify", str(openings), "--replay", "10000"], capsys)
    deals = json.loads((openings / "summary.json").read_text())["deals"]  # P361: no overstating
    assert f"{deals} deal(s), {deals * 29} games, played again (the deals of {deals * 29} " \
        "games drawn at random, without repeats)" in out, (out, err)
    folder = copy_of(openings, tmp_path)
    _rewrite_recorded(folder, "games/part-000000.parquet", _add("rounds", 3))
    code, out, err = verify(folder, capsys)
    assert code == 0, (out, err)  # the documented limit of the recomputations
    code, out, err = run_main(["verify", str(folder), "--replay", "40"], capsys)
    assert code == 2 and "games.rounds is" in out and "played again" in out, (out, err)


def test_an_openings_summary_without_its_record_is_one_line_in_readers(openings, tmp_path,
                                                                       capsys) -> None:
    folder = copy_of(openings, tmp_path)
    edit_json(folder / "summary.json", lambda s: (s.pop("files"), s["lead_value"].update(
        mean=5.0)))
    for args in (["query", str(folder), "select count(*) from games"],
                 ["report", str(folder), "-o", str(tmp_path / "r")]):
        code, out, err = run_main(args, capsys)
        one_line(code, err, "records no files")


@pytest.mark.parametrize("special", ["fifo", "big", "device"])
def test_an_openings_summary_that_is_no_file_is_named(openings, runs, tmp_path, capsys,
                                                      special) -> None:
    """O06, O07, M09: summary.json a FIFO, over its bound, or a link to a device is one
    line naming summary.json, in query, verify and report (not "no manifest.json")."""
    import os

    folder = copy_of(openings, tmp_path)
    summary = folder / "summary.json"
    summary.unlink()
    if special == "fifo":
        os.mkfifo(summary)
    elif special == "big":
        with open(summary, "wb") as handle:
            handle.truncate(17 * 2**20)
    else:
        summary.symlink_to("/dev/zero")
    for args in (["query", str(folder), "select count(*) from openings"],
                 ["report", str(runs["plain"]), "--openings", str(folder), "-o",
                  str(tmp_path / "r"), "--placement-sample", "0"]):
        code, out, err = run_main(args, capsys)
        one_line(code, err, str(summary))
    code, out, err = verify(folder, capsys)
    assert code == 2 and f"bad: cannot read {summary}" in out and "Traceback" not in err, (
        out, err)
