"""``sniff verify`` binds everything a reader shows (#51): a manifest's ``stopped``, a
compare run's ``compare.json``, a tournament's pairings; and odd ledger or manifest fields
are one line in every reader, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import sim
from sim.errors import SniffError
from sim.tournament import run_tournament
from tests.helpers.cli import run_main
from tests.helpers.verify import copy_of, edit_json, one_line, play_runs, verify


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A compare run (decided H1), a --precision run (stopped at 1,200 of at most 6,000 games) and
    a plain run."""
    return play_runs(tmp_path_factory.mktemp("verify"))


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
