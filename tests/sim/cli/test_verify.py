"""``sniff verify`` binds everything a reader shows (#51): a manifest's ``stopped``, a
compare run's ``compare.json``, a tournament's pairings; and odd ledger or manifest fields
are one line in every reader, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import sim
from sim.compare.play import compare
from sim.errors import SniffError
from sim.tournament import run_tournament
from tests.helpers.cli import error_lines, run_main


def one_line(code: int, err: str, text: str) -> None:
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def copy_of(run: Path, tmp_path: Path, name: str = "copy") -> Path:
    target = tmp_path / name
    shutil.copytree(run, target)
    return target


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A compare run (decided H1), a --precision run (stopped at 1,200 of at most 6,000 games) and
    a plain run."""
    base = tmp_path_factory.mktemp("verify")
    compare("greedy", "random", players=2, out=base / "compare", seed=1)
    sim.simulate(2, "greedy,greedy", seed=2, chunk_size=600, out=base / "precision",
                 precision=0.03, max_games=6000)
    sim.simulate(2, "greedy,random", 200, 3, chunk_size=100, out=base / "plain")
    return {path.name: path for path in base.iterdir()}


def verify(folder: Path, capsys) -> tuple[int, str, str]:
    return run_main(["verify", str(folder)], capsys)


def test_sound_runs_verify(runs, capsys) -> None:
    stopped = json.loads((runs["precision"] / "manifest.json").read_text())["stopped"]
    assert stopped["reason"] == "precision" and stopped["games"] < 6000  # a real stop
    for folder in runs.values():
        code, out, err = verify(folder, capsys)
        assert code == 0 and "bad:" not in out, (out, err)


@pytest.mark.parametrize("run, field, value, text", [
    ("compare", "decision", "H0", "they stop at"),
    ("compare", "llr", -3.5, "they stop at"),
    ("precision", "reason", "max_games", "they stop at"),
    ("precision", "half_width", 0.001, "they stop at"),
])
def test_an_edited_stop_is_found(runs, tmp_path, capsys, run, field, value, text) -> None:
    folder = copy_of(runs[run], tmp_path)
    edit_json(folder / "manifest.json", lambda m: m["stopped"].update({field: value}))
    code, out, err = verify(folder, capsys)
    assert code == 2 and "bad:" in out and text in out, (out, err)


@pytest.mark.parametrize("field, value", [("decision", "H0"), ("llr", -3.5)])
def test_readers_refuse_an_edited_decision(runs, tmp_path, capsys, field, value) -> None:
    """#63: ``report`` and ``query`` showed an edited ``stopped.decision`` with only the
    note that the folder was not verified; they replay the test over the parts as verify
    does (a compare run's games: two columns) and refuse it in verify's words."""
    folder = copy_of(runs["compare"], tmp_path)
    edit_json(folder / "manifest.json", lambda m: m["stopped"].update({field: value}))
    for command in (["query", str(folder), "select count(*) from games"],
                    ["report", str(folder), "-o", str(tmp_path / "r"),
                     "--placement-sample", "0"]):
        code, out, err = run_main(command, capsys)
        one_line(code, err, "manifest.json: stopped does not match the parts: they stop at")
    assert not (tmp_path / "r").exists()


def test_a_precision_stop_moved_to_fewer_games_is_found(runs, tmp_path, capsys) -> None:
    """The parts and ledger lines past the new stop deleted, the manifest edited to match."""
    folder = copy_of(runs["precision"], tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    stop = manifest["stopped"]["games"]
    assert stop >= 1200
    lines = (folder / "parts.jsonl").read_text().splitlines()
    (folder / "parts.jsonl").write_text(lines[0] + "\n")
    for table in ("games", "rounds"):
        for part in sorted((folder / table).iterdir())[1:]:
            part.unlink()
    manifest["stopped"].update(games=600, chunks=1)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = verify(folder, capsys)
    assert code == 2 and "reach none" in out, (out, err)


def test_a_stop_given_to_a_plain_run_is_one_line(runs, tmp_path, capsys) -> None:
    folder = copy_of(runs["plain"], tmp_path)
    forged = {"reason": "precision", "games": 100, "chunks": 1, "half_width": 0.01,
              "precision": 0.02, "max_games": 200, "step": 600}
    edit_json(folder / "manifest.json", lambda m: m.update(stopped=forged))
    for command in (["verify"], ["query", "{f}", "select 1"], ["report", "{f}", "-o",
                                                             "{t}/r"]):
        args = [a.format(f=folder, t=tmp_path) for a in command]
        code, out, err = run_main(args if len(args) > 1 else [*args, str(folder)], capsys)
        one_line(code, err, "no --precision or sequential test")


@pytest.mark.parametrize("stopped", [{"games": 100}, "text"])
def test_a_malformed_stop_is_one_line_in_report(runs, tmp_path, capsys, stopped) -> None:
    folder = copy_of(runs["compare"], tmp_path)
    edit_json(folder / "manifest.json", lambda m: m.update(stopped=stopped))
    code, out, err = run_main(["report", str(folder), "-o", str(tmp_path / "r"),
                               "--placement-sample", "0"], capsys)
    one_line(code, err, "stopped is")
    folder = copy_of(runs["compare"], tmp_path, "llr")
    edit_json(folder / "manifest.json", lambda m: m["stopped"].update(llr="big"))
    code, out, err = run_main(["report", str(folder), "-o", str(tmp_path / "r2")], capsys)
    one_line(code, err, "not the stop of a sequential test")


@pytest.mark.parametrize("edit", [
    lambda c: c.update(decision="H0"), lambda c: c["hypotheses"].update(h1=0.3),
    lambda c: c["estimate"].update(difference=0.5), lambda c: c.pop("chunks")])
def test_an_edited_compare_json_is_found(runs, tmp_path, capsys, edit) -> None:
    folder = copy_of(runs["compare"], tmp_path)
    edit_json(folder / "compare.json", edit)
    code, out, err = verify(folder, capsys)
    assert code == 2 and "compare.json" in out and "does not match" in out, (out, err)


def test_compare_resume_with_other_hypotheses_is_one_line(runs, tmp_path, capsys) -> None:
    folder = copy_of(runs["compare"], tmp_path)
    before = (folder / "compare.json").read_bytes()
    code, out, err = run_main(["compare", "--resume", "-o", str(folder), "--h1", "0.3",
                               "--alpha", "0.2"], capsys)
    one_line(code, err, "a resumed comparison keeps its test")
    assert (folder / "compare.json").read_bytes() == before


@pytest.mark.parametrize("field, value", [
    ("bytes", "12"), ("bytes", None), ("rows", "5"), ("parts", [1])])
def test_ledger_fields_of_the_wrong_type_are_one_line(runs, tmp_path, capsys, field,
                                                      value) -> None:
    folder = copy_of(runs["plain"], tmp_path)
    lines = [json.loads(line) for line in (folder / "parts.jsonl").read_text().splitlines()]
    if field == "parts":
        lines[0]["parts"] = value
    else:
        lines[0]["parts"]["games"][field] = value
    (folder / "parts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, err = verify(folder, capsys)
    assert code == 2 and "is not one sniff writes" in out and "Traceback" not in err
    for args in (["query", str(folder), "select count(*) from games"],
                 ["report", str(folder), "-o", str(tmp_path / "r")]):
        code, out, err = run_main(args, capsys)
        one_line(code, err, "is not one sniff writes")


@pytest.mark.parametrize("table, column", [("games", "winner_side"),
                                           ("rounds", "end_reason")])
def test_a_part_rewritten_without_a_column_fails_verify(runs, tmp_path, capsys, table,
                                                        column) -> None:
    """#63: a games part rewritten without its winner_side column (its footer kept, its
    ledger line recomputed) passed verify ("2 of 2 chunks sound") while report refused it:
    the parts' schema was not verified."""
    import hashlib

    import pyarrow.parquet as pq

    folder = copy_of(runs["plain"], tmp_path)
    part = folder / table / "part-000001.parquet"
    data = pq.read_table(part)
    pq.write_table(data.drop_columns([column]).replace_schema_metadata(data.schema.metadata),
                   part)
    raw = part.read_bytes()
    lines = [json.loads(line) for line in (folder / "parts.jsonl").read_text().splitlines()]
    lines[1]["parts"][table].update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    (folder / "parts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, err = verify(folder, capsys)
    assert code == 2 and f"bad: {part}: lacks column(s) {column}" in out, (out, err)
    assert "1 of 2 chunks sound" in out, out


@pytest.mark.parametrize("damage, text", [
    ("line", "is not recorded as written by this run"),  # C13: its ledger line deleted
    ("parts", "missing: the run is complete but chunk 1"),  # C16: its line and parts
    ("string", "the run is complete but chunk 1 is not there"),  # C04: "chunk": "1"
])
def test_a_complete_run_lacking_a_chunk_fails_verify(runs, tmp_path, capsys, damage,
                                                     text) -> None:
    """Verify fails wherever a reader refuses: a complete run without chunk 1."""
    folder = copy_of(runs["plain"], tmp_path)
    lines = [json.loads(line) for line in (folder / "parts.jsonl").read_text().splitlines()]
    if damage == "string":
        lines[1]["chunk"] = "1"
    else:
        del lines[1]
    (folder / "parts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    if damage == "parts":
        for table in ("games", "rounds"):
            (folder / table / "part-000001.parquet").unlink()
    code, out, err = verify(folder, capsys)
    assert code == 2 and "Traceback" not in err, (out, err)
    assert "chunk 1" in out and "1 of 2 chunks sound" in out, out
    if damage != "string":
        assert text in out, out
    code, out, err = run_main(["query", str(folder), "select count(*) from games"], capsys)
    assert code == 2 and "chunk 1" in err, err


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("verify-t") / "t"
    run_tournament(2, "greedy,random,heavy", 60, seed=3, out=folder, chunk_size=60)
    return folder


@pytest.mark.parametrize("pairings", ["empty", "many", "order"])
def test_a_tournament_lists_exactly_its_pairings(tournament, tmp_path, capsys,
                                                 pairings) -> None:
    folder = copy_of(tournament, tmp_path)

    def edit(manifest: dict) -> None:
        entries = manifest["pairings"]
        manifest["pairings"] = {"empty": [], "many": entries * 70_000,
                                "order": entries[::-1]}[pairings]

    edit_json(folder / "tournament.json", edit)
    code, out, err = verify(folder, capsys)
    one_line(code, err, "tournament.json")
    with pytest.raises(SniffError):
        sim.tournament.load(folder)


@pytest.mark.parametrize("field, value", [
    ("games_per_pair", 5000), ("precision", 0.01), ("duplicate", True),  # K053, K056
    ("chunk_size", 7),  # campaign 2 phase 2, P214: a resume wrote overlapping chunks
])
def test_a_tournaments_settings_are_bound_to_its_pairings(tournament, tmp_path, capsys,
                                                         field, value) -> None:
    """Campaign 2 K053, K056: settings edited in tournament.json (what a report shows and a
    resume plays) are one line in verify, report and --resume: the pairings' runs were
    played with others."""
    folder = copy_of(tournament, tmp_path)
    edit_json(folder / "tournament.json", lambda m: m["config"].update({field: value}))
    for args in (["verify", str(folder)], ["report", str(folder), "-o", str(tmp_path / "r")],
                 ["tournament", "--resume", "-q", "-o", str(folder)]):
        code, out, err = run_main(args, capsys)
        one_line(code, err, f"holds a run of {'games' if field == 'games_per_pair' else field}")
    assert not (tmp_path / "r").exists()


def test_a_complete_tournaments_missing_pairing_is_bad(tournament, tmp_path, capsys) -> None:
    folder = copy_of(tournament, tmp_path)
    code, out, err = verify(folder, capsys)
    assert code == 0, (out, err)
    shutil.rmtree(sorted((folder / "pairs").iterdir())[0])
    code, out, err = verify(folder, capsys)
    assert code == 2 and "missing (pairing" in out, (out, err)


def test_nothing_but_its_pairings_is_written_into_a_tournaments_pairs(tournament, tmp_path,
                                                                     capsys) -> None:
    """W09, W18, W19: simulate, compare and openings refuse -o TOURNAMENT/pairs/NEW (even
    the name of a pairing: only the tournament plays it); W09v: verify names a stray."""
    folder = copy_of(tournament, tmp_path)
    pairing = sorted((folder / "pairs").iterdir())[0]
    for args in (["simulate", "--players", "2", "--games", "20", "-q"],
                 ["compare", "greedy", "random", "--players", "2", "--max-games", "100", "-q"],
                 ["openings", "--players", "2", "--strategies", "greedy", "--deals", "2",
                  "-q"]):
        for target in (folder / "pairs" / "new", pairing):
            code, out, err = run_main([*args, "-o", str(target)], capsys)
            one_line(code, err, f"inside the sniff folder {folder}")
    assert not (folder / "pairs" / "new").exists()
    code, out, err = verify(folder, capsys)
    assert code == 0 and "bad:" not in out, (out, err)
    shutil.copytree(pairing, folder / "pairs" / "new")
    code, out, err = verify(folder, capsys)
    assert code == 2 and f"bad: {folder / 'pairs' / 'new'}: not a pairing" in out, (out, err)


def _swap_ratings(folder: Path) -> None:
    def swap(manifest: dict) -> None:
        rows = manifest["ratings"]["ratings"]
        rows[0]["strategy"], rows[-1]["strategy"] = rows[-1]["strategy"], rows[0]["strategy"]

    edit_json(folder / "tournament.json", swap)


def _swap_ranking(folder: Path) -> None:
    path = folder / "ranking.csv"
    lines = path.read_text().splitlines(keepends=True)
    first, last = lines[1].split(","), lines[-1].split(",")
    first[1], last[1] = last[1], first[1]
    lines[1], lines[-1] = ",".join(first), ",".join(last)
    path.write_text("".join(lines))


@pytest.mark.parametrize("edit, text", [
    (_swap_ratings, "tournament.json: its ratings do not match"),  # T04
    (_swap_ranking, "ranking.csv: does not match"),  # T06
    (lambda f: (f / "matrix.csv").write_text("a,b\n1,2\n"), "matrix.csv: does not match"),
    (lambda f: shutil.copy(f / "ratings.png", f / "matrix.png"),
     "matrix.png: its bytes changed since it was written"),
])
def test_a_tournaments_result_files_are_recomputed_or_bound(tournament, tmp_path, capsys,
                                                           edit, text) -> None:
    folder = copy_of(tournament, tmp_path)
    code, out, err = verify(folder, capsys)
    assert code == 0 and "recomputed from the pairings; the charts match" in out, (out, err)
    edit(folder)
    code, out, err = verify(folder, capsys)
    assert code == 2 and f"bad: {folder}" in out and text in out, (out, err)


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


def flip_winners(run: Path) -> None:
    """Every games part's winners swapped (side 0 <-> 1), written back with its footer, and
    the ledger recomputed: a forgery consistent with every hash."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from sim.checks import integrity

    records = integrity.read_ledger(run)
    for record in records.values():
        part = record["parts"]["games"]
        path = run / "games" / part["file"]
        data = pq.read_table(path)
        column = data["winner_side"]
        flipped = pc.if_else(pc.equal(column, 0), pa.scalar(1, column.type),
                             pc.if_else(pc.equal(column, 1), pa.scalar(0, column.type), column))
        data = data.set_column(data.schema.get_field_index("winner_side"),
                               data.schema.field("winner_side"), flipped)
        pq.write_table(data, path)
        record["parts"]["games"] = integrity.part_record(path, part["rows"])
    (run / integrity.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in records.values()))


def test_replay_proves_a_run_and_catches_a_consistent_forgery(runs, tmp_path, capsys) -> None:
    code, out, err = run_main(["verify", str(runs["plain"]), "--replay", "30"], capsys)
    assert code == 0 and "30 games chosen at random played again" in out, (out, err)
    folder = copy_of(runs["plain"], tmp_path)
    flip_winners(folder)
    code, out, err = verify(folder, capsys)  # every hash agrees: the documented limit
    assert code == 0, (out, err)
    code, out, err = run_main(["verify", str(folder), "--replay", "30"], capsys)
    assert code == 2 and "games.winner_side is" in out and "played again" in out, (out, err)


def reverse_labels(run: Path) -> None:
    """K062: ``config.labels`` reversed in the manifest and in every part's footer, the
    ledger recomputed: the games and every hash agree, the names of the seats do not."""
    import pyarrow.parquet as pq

    from sim.checks import integrity

    edit_json(run / "manifest.json", lambda m: m["config"].update(
        labels=m["config"]["labels"][::-1]))
    records = integrity.read_ledger(run)
    for record in records.values():
        for table, part in record["parts"].items():
            path = run / table / part["file"]
            data = pq.read_table(path)
            meta = dict(data.schema.metadata)
            footer = json.loads(meta[b"sniff"])
            footer["config"]["labels"] = footer["config"]["labels"][::-1]
            meta[b"sniff"] = json.dumps(footer).encode()
            pq.write_table(data.replace_schema_metadata(meta), path)
            record["parts"][table] = integrity.part_record(path, part["rows"])
    (run / integrity.LEDGER).write_text("".join(json.dumps(r) + "\n" for r in records.values()))


def test_labels_that_do_not_follow_from_the_strategies_are_bad(runs, tmp_path,
                                                               capsys) -> None:
    """Campaign 2 K062, K072b: a report names the seats by the labels; they must be the
    ones the recorded strategies give, or a winner's games are credited to another."""
    for run in ("plain", "compare"):
        folder = copy_of(runs[run], tmp_path, run)
        reverse_labels(folder)
        code, out, err = verify(folder, capsys)
        assert code == 2 and "config.labels is ['random', 'greedy'], but its strategies " \
            "greedy,random give ['greedy', 'random']" in out, (out, err)


def test_the_placement_sample_compares_winners(runs, tmp_path, capsys) -> None:
    folder = copy_of(runs["plain"], tmp_path)
    flip_winners(folder)
    code, out, err = run_main(["report", str(folder), "-o", str(tmp_path / "r"),
                               "--placement-sample", "20"], capsys)
    assert code == 0, err
    report = (tmp_path / "r" / "report.md").read_text()
    assert "placement scores not shown: 20 of 20 traced games differ" in report


def test_replay_refuses_another_codes_run(runs, tmp_path, capsys) -> None:
    folder = copy_of(runs["plain"], tmp_path)
    edit_json(folder / "manifest.json", lambda m: m.update(kernel="0123456789abcdef"))
    code, out, err = run_main(["verify", str(folder), "--replay", "5"], capsys)
    one_line(code, err, "it was played by other code")


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


def test_a_folder_named_with_control_characters_reaches_no_terminal_raw(runs, tmp_path,
                                                                        capsys,
                                                                        recwarn) -> None:
    """Campaign 2 K181, K184: verify's lines and report's chart warnings escape them."""
    folder = copy_of(runs["plain"], tmp_path, "x\x1b[31mRED\x07")
    code, out, err = verify(folder, capsys)
    assert code == 0 and "x\\x1b[31mRED\\x07: 2 of 2 chunks sound" in out, (out, err)
    code, out, err = run_main(["report", str(folder), "-o", str(tmp_path / "r"),
                               "--placement-sample", "0"], capsys)
    assert code == 0, err
    warned = [str(w.message) for w in recwarn]  # (on stderr, outside pytest)
    for text in (out, err, capsys.readouterr().err, *warned):
        assert "\x1b" not in text and "\x07" not in text, text


def test_a_chart_of_a_very_long_label_warns_nothing(tmp_path, recwarn) -> None:
    """Campaign 2 phase 2, P310, P311: a 130-character label (a weighted:@ path) left the
    axes no room, and matplotlib's "constrained_layout not applied" warning, naming a
    source file, reached stderr; the chart is drawn all the same."""
    import pandas as pd

    from sim.display import charts

    label = "weighted:@" + "d" * 120 + "/best.json"
    table = pd.DataFrame({"strategy": [label, "greedy"], "rank": [1, 2],
                          "rating": [1550.0, 1450.0], "low": [1500.0, 1400.0],
                          "high": [1600.0, 1500.0]})
    path = charts.save(charts.ratings(table), tmp_path / "ratings.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    assert not [str(w.message) for w in recwarn if "constrained_layout" in str(w.message)]
