"""The report reads runs chunk by chunk: same figures however a run is cut into
parts, a damaged part named in one line, progress heard, exact tallies.

The figures against the in-memory report of 39a7345 are the golden tests further down.

The streaming report gives the figures the in-memory report gave.

``tests/golden/report-figures.json`` holds every figure of the reports of a fixed set of
small runs (2, 3 and 4 players, ``--duplicate``, a tournament in the aggregate and with
``--pairings``, an openings folder) as computed by the code at 39a7345, before the readers
streamed; ``tests/helpers/report_golden.py`` says how it was made. Here the same runs are played
again and every figure compared (floats to a relative 1e-9).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import sim
from sim.report.build import build
from sim.stats.tally import Tally, merged, tally_difference
from tests.helpers import TESTS
from tests.helpers.cli import run_main
from tests.helpers.report_golden import REPORTS, differences, make_runs, report_figures
from tests.helpers.verify import reledger


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream")
    options = {"players": 4, "strategies": "greedy,random", "games": 600, "seed": 3,
               "duplicate": True}
    sim.simulate(**options, chunk_size=88, out=root / "small-chunks")  # deals cut by chunks
    sim.simulate(**options, chunk_size=600, out=root / "one-chunk")
    return root


def _figures(folder) -> dict:
    report = build([folder], placement_sample=0).to_dict()
    for run in report["runs"]:
        run.pop("path")
    return json.loads(json.dumps(report).replace(folder.name, "RUN"))


def test_the_figures_do_not_depend_on_how_the_run_is_cut(runs):
    cut = _figures(runs / "small-chunks")
    whole = _figures(runs / "one-chunk")
    cut.pop("created_at"), whole.pop("created_at")
    assert cut["summary"][0]["games"] == 600
    assert not differences(whole, cut, tolerance=1e-12)


def test_progress_is_heard_for_every_chunk(runs):
    heard = []
    build([runs / "small-chunks"], placement_sample=0,
          progress=lambda done, total: heard.append((done, total)))
    chunks = len(list((runs / "small-chunks" / "games").glob("part-*.parquet")))
    assert chunks == 7 and heard[-1] == (chunks, chunks)
    assert [done for done, _ in heard] == sorted(done for done, _ in heard)


def test_a_damaged_part_met_by_the_report_is_one_line(runs, tmp_path, capsys, monkeypatch):
    from sim.checks import integrity

    monkeypatch.setattr(integrity, "SMALL_RUN", 0)  # as in a big run: parts not hashed
    damaged = tmp_path / "damaged"
    shutil.copytree(runs / "small-chunks", damaged)
    part = damaged / "rounds" / "part-000003.parquet"
    data = bytearray(part.read_bytes())
    data[len(data) // 3] ^= 0x5A  # same size: the ledger's cheap check passes, a page's CRC not
    part.write_bytes(bytes(data))
    code, _, err = run_main(["report", str(damaged), "--placement-sample", "0", "-o",
                             str(tmp_path / "out")], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert "rounds/part-000003.parquet" in lines[0] and "cannot be decoded" in lines[0]
    assert not (tmp_path / "out" / "report.html").exists()


def test_a_tally_gives_the_figures_of_its_values():
    rng = np.random.default_rng(1)
    values = rng.integers(-40, 90, 5001)
    tally = Tally()
    for part in np.array_split(values, 7):
        tally.add(part)
    assert tally.n == values.size
    assert tally.mean == pytest.approx(values.mean(), rel=1e-15)
    assert tally.std == pytest.approx(values.std(ddof=1), rel=1e-12)
    for q in (0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 0.999, 1.0):
        assert tally.quantile(q) == pytest.approx(np.quantile(values, q), abs=1e-12), q
    assert tally.share_above(0) == pytest.approx((values > 0).mean())
    counts = tally.value_counts("v")
    unique, expected = np.unique(values, return_counts=True)
    assert counts["v"].tolist() == unique.tolist() and counts["count"].tolist() == expected.tolist()
    assert merged([tally.negated()]).mean == pytest.approx(-values.mean())
    other = Tally()
    other.add_counts(-40, np.bincount(values + 40))
    assert other.counts.tolist() == tally.counts.tolist()


def test_a_scaled_tally_tests_its_mean_as_paired_difference_does():
    from sim.stats.intervals import paired_difference

    rng = np.random.default_rng(2)
    sums = rng.integers(-4, 5, 800)  # per-deal sums of 4 games
    tally = Tally(1 / 4)
    tally.add(sums)
    got, expected = tally_difference(tally), paired_difference(sums / 4)
    for field in ("estimate", "se", "p_value", "low", "high"):
        assert getattr(got, field) == pytest.approx(getattr(expected, field), rel=1e-12)
    assert got.n == expected.n == 800


def test_a_value_out_of_range_is_refused_not_used_as_an_index(runs, tmp_path, capsys):
    """A part rewritten with a rotation no run has, its ledger record made to agree (a
    forgery consistent with every hash) is one line, not a wrong figure."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "odd"
    shutil.copytree(runs / "small-chunks", folder)
    path = folder / "games" / "part-000002.parquet"
    table = pq.read_table(path)
    index = table.schema.get_field_index("rotation")
    table = table.set_column(index, table.schema.field(index),
                             pa.array([9] * table.num_rows, pa.int8()))
    pq.write_table(table, path)
    reledger(folder)  # every hash agrees: what is left to find is the value itself
    code, _, err = run_main(["report", str(folder), "--placement-sample", "0", "-o",
                             str(tmp_path / "out")], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "rotation column holds values outside 0..3" in lines[0] and str(folder) in lines[0]


def test_reading_holds_a_few_chunks_whatever_the_run_size(tmp_path):
    """Peak memory of adding up a run's figures grows with the chunk, not the run: ten
    times the games in the same chunk size stays within the same bound (numpy's memory, as
    tracemalloc sees it; Arrow's buffers are the same few chunks)."""
    import tracemalloc

    from sim.report.aggregate import read_figures
    from sim.store.rundata import open_runs

    folders = {}
    for games in (2_000, 20_000):
        folders[games] = tmp_path / f"g{games}"
        sim.simulate(4, "greedy,random", games, 5, chunk_size=500, out=folders[games])
    read_figures(open_runs([folders[2_000]]))  # once first: what is loaded only once
    peaks = {}
    for games, folder in folders.items():
        runs = open_runs([folder])
        tracemalloc.start()
        read_figures(runs)
        peaks[games] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert runs[0].figures.games == games
    # the columns read of the whole 20,000-game rounds table, as numpy arrays, would be
    # about 15 MB (150,000 rows x 13 columns x 8 bytes)
    # ten times the games: a few more score-state cells, not ten times the memory
    assert peaks[20_000] < 2 * peaks[2_000] and peaks[20_000] < 2_000_000, peaks


GOLDEN = TESTS / "golden" / "report-figures.json"


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("golden-runs")
    make_runs(root)
    return report_figures(root)


@pytest.mark.parametrize("name", list(REPORTS))
def test_the_report_has_the_figures_of_the_in_memory_report(figures, name):
    expected = json.loads(GOLDEN.read_text())[name]
    found = differences(expected, figures[name], name)
    assert not found, f"{len(found)} figure(s) differ:\n" + "\n".join(found[:40])


def test_the_comparison_sees_a_changed_figure(figures):
    """The comparison itself fails on a changed number (so the test above can fail)."""
    expected = json.loads(GOLDEN.read_text())["two"]
    changed = json.loads(json.dumps(figures["two"]))
    changed["summary"][0]["points_per_round"] *= 1 + 1e-6
    assert differences(expected, changed)
