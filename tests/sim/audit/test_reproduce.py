"""``sniff verify --replay N`` (``sim.audit.reproduce``): a run proven by playing some of
its games again, a consistent forgery caught, labels that do not follow from the
strategies bad, another code's run refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_main
from tests.helpers.verify import copy_of, edit_json, one_line, play_runs, verify


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A plain run and a compare run (tests/helpers/verify.py)."""
    return play_runs(tmp_path_factory.mktemp("verify"), ("compare", "plain"))


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

    def other_signature(manifest: dict) -> None:
        manifest["identity"]["strategies"]["greedy"] = "0123456789abcdef"

    edit_json(folder / "manifest.json", other_signature)
    code, out, err = run_main(["verify", str(folder), "--replay", "5"], capsys)
    one_line(code, err, "with greedy=0123456789abcdef; this code plays greedy as")
