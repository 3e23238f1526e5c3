"""``sniff openings`` in bounded memory: the same figures as the code that held every game,
whatever the chunking; the games in parts, recorded and checked; a stop leaves no result.

The golden figures (tests/fixtures/openings-golden, made by its ``make_golden.py`` with the
code at 39a7345) are 30 deals each, with ``greedy`` and ``random`` only, so the suite's one
compiled kernel is reused.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sim.errors import SniffError
from sim.openings.folder import (
    folder_problems,
    is_openings_folder,
    read_games,
    table_files,
)
from sim.openings.output import load_openings
from sim.openings.pairs import tile_pairs
from sim.openings.play import SLOTS_PER_DEAL, chunk_ranges, make_config, play_openings
from sim.openings.study import measure_openings
from sim.openings.tally import summarise_openings
from tests.helpers import ROOT
from tests.helpers.openings import stopped_study

GOLDEN = ROOT / "tests" / "fixtures" / "openings-golden"
sys.path.insert(0, str(GOLDEN))
from make_golden import CASES, DROPPED  # noqa: E402

RTOL = 1e-12  # the old code's float sums against the new exact ones: rounding only


def golden_summary(name: str) -> dict:
    return json.loads((GOLDEN / name / "summary.json").read_text())


def close(new, old, path: str = "") -> None:
    """Two JSON values equal, floats to ``RTOL``."""
    if isinstance(old, dict):
        assert set(new) == set(old), path
        for key in old:
            close(new[key], old[key], f"{path}.{key}")
    elif isinstance(old, float):
        assert new == pytest.approx(old, rel=RTOL, abs=1e-15), path
    else:
        assert new == old, path


@pytest.fixture(scope="module", params=CASES, ids=[case[0] for case in CASES])
def case(request, tmp_path_factory):
    name, players, strategies, deals, seed = request.param
    config = make_config(players, strategies, deals, seed)
    folder = tmp_path_factory.mktemp("stream") / name
    measure_openings(config, folder, part_deals=11)  # three parts: 11 + 11 + 8 deals
    return {"name": name, "config": config, "folder": folder}


def test_figures_equal_the_code_that_held_every_game(case):
    """openings.parquet, summary.json and tile-pairs.csv against the golden run (same seed):
    means bit for bit, intervals and p-values to rounding, rank and flags exactly."""
    folder, name = case["folder"], case["name"]
    new, old = pd.read_parquet(folder / "openings.parquet"), pd.read_parquet(
        GOLDEN / name / "openings.parquet")
    pd.testing.assert_frame_equal(new, old, check_exact=False, rtol=RTOL, atol=1e-15)
    for column in ("rank", "held", "chosen", "side_points", "differential", "p_out", "p_win",
                   "p_chosen", "p_out_low", "p_win_high"):
        assert new[column].equals(old[column]), column
    summary = json.loads((folder / "summary.json").read_text())
    for key in DROPPED:
        summary.pop(key)
    close(summary, golden_summary(name))
    with gzip.open(GOLDEN / name / "tile-pairs.csv.gz") as handle:
        old_pairs = pd.read_csv(handle)
    new_pairs = pd.read_csv(folder / "tile-pairs.csv")
    pd.testing.assert_frame_equal(new_pairs, old_pairs, check_exact=False, rtol=1e-9,
                                  atol=1e-15)
    assert new_pairs["different"].equals(old_pairs["different"])
    assert new_pairs[["tile_a", "tile_b", "estimate"]].equals(
        old_pairs[["tile_a", "tile_b", "estimate"]])


def test_chunking_changes_nothing(case):
    """Other chunk and part sizes: the same tables to the last bit, the same games."""
    config = case["config"]
    table, summary = measure_openings(config, chunk_deals=4, part_deals=7)
    other, other_summary = measure_openings(config, chunk_deals=config.deals)
    pd.testing.assert_frame_equal(table, other, check_exact=True)
    assert summary == other_summary
    written = pd.read_parquet(case["folder"] / "openings.parquet")
    pd.testing.assert_frame_equal(table, written, check_exact=True)
    games = play_openings(config, chunk_deals=3)
    pd.testing.assert_frame_equal(read_games(case["folder"]), games, check_categorical=False)
    # The in-memory path (the games held, then summarised) gives the streamed figures too.
    held, held_summary = summarise_openings(games, config)
    pd.testing.assert_frame_equal(held, table, check_exact=True)
    assert held_summary == summary
    pd.testing.assert_frame_equal(tile_pairs(games),
                                  pd.read_csv(case["folder"] / "tile-pairs.csv"),
                                  check_exact=False, rtol=1e-12)


def test_chunks_never_straddle_a_part():
    assert list(chunk_ranges(30, 4, 11)) == [(0, 4), (4, 8), (8, 11), (11, 15), (15, 19),
                                             (19, 22), (22, 26), (26, 30)]
    assert list(chunk_ranges(5, 1000, 10_000)) == [(0, 5)]


def test_the_parts_are_recorded_and_listed_in_order(case):
    folder, config = case["folder"], case["config"]
    summary = json.loads((folder / "summary.json").read_text())
    parts = ["games/part-000000.parquet", "games/part-000001.parquet",
             "games/part-000002.parquet"]
    assert list(summary["files"]) == ["openings.parquet", *parts, "tile-pairs.csv",
                                      "heatmap.png"]
    assert [summary["files"][p]["rows"] for p in parts] == [
        11 * SLOTS_PER_DEAL, 11 * SLOTS_PER_DEAL, 8 * SLOTS_PER_DEAL]
    tables = table_files(folder)
    assert tables == {"openings": [folder / "openings.parquet"],
                      "games": [folder / p for p in parts],
                      "pairs": [folder / "tile-pairs.csv"]}
    metadata = json.loads(pq.read_schema(folder / parts[1]).metadata[b"sniff"])
    assert metadata["table"] == "games" and metadata["part"] == 1
    assert (metadata["first_deal"], metadata["end_deal"]) == (11, 22)
    assert metadata["config"] == config.to_dict()
    games = pd.read_parquet(folder / "games")  # the folder as one dataset, in game id order
    assert games["game_id"].tolist() == list(range(config.deals * SLOTS_PER_DEAL))
    duckdb = pytest.importorskip("duckdb")
    names = ", ".join(f"'{path}'" for path in tables["games"])
    ((count,),) = duckdb.sql(f"select count(*) from read_parquet([{names}])").fetchall()
    assert count == config.deals * SLOTS_PER_DEAL
    assert folder_problems(folder) == (6, 6, [])


def test_a_changed_missing_or_stray_part_is_refused(tmp_path):
    config = make_config(2, "random", 12, 1)
    folder = tmp_path / "run"
    measure_openings(config, folder, part_deals=5)
    part = folder / "games" / "part-000001.parquet"
    stray = folder / "games" / "part-000009.parquet"
    stray.write_bytes(part.read_bytes())
    with pytest.raises(SniffError, match="part-000009.parquet: a games part that"):
        table_files(folder)
    assert folder_problems(folder) == (6, 6, [f"{stray}: not recorded in summary.json (not "
                                              "written with this folder's run)"])
    stray.unlink()
    data = bytearray(part.read_bytes())
    data[100] ^= 1
    part.write_bytes(bytes(data))
    with pytest.raises(SniffError, match="part-000001.parquet: its bytes changed"):
        table_files(folder)
    assert table_files(folder, check="size")["games"][1] == part  # same size: the quick look
    part.unlink()
    with pytest.raises(SniffError, match="part-000001.parquet: missing"):
        table_files(folder, check="size")
    stray.write_bytes(b"not a part of this run")
    code = subprocess.run([sys.executable, "-m", "sim.cli", "verify", str(folder)],
                          capture_output=True, text=True, timeout=300)
    assert code.returncode == 2 and f"bad: {part}: missing" in code.stdout
    assert f"bad: {stray}: not recorded in summary.json" in code.stdout
    assert "5 of 6 recorded files sound" in code.stdout


def test_overwrite_removes_the_previous_runs_parts(tmp_path):
    folder = tmp_path / "run"
    measure_openings(make_config(2, "random", 12, 1), folder, part_deals=5)
    measure_openings(make_config(2, "random", 4, 1), folder, part_deals=5)
    assert sorted(p.name for p in (folder / "games").iterdir()) == ["part-000000.parquet"]
    assert len(read_games(folder)) == 4 * SLOTS_PER_DEAL
    assert load_openings(folder)[1]["deals"] == 4


def test_a_stop_between_chunks_leaves_no_result(tmp_path):
    folder = stopped_study(tmp_path / "run")
    assert sorted(p.name for p in (folder / "games").iterdir()) == ["part-000000.parquet"]
    assert not (folder / "summary.json").exists() and not is_openings_folder(folder)
    with pytest.raises(SniffError, match="no summary.json"):
        table_files(folder)


@pytest.mark.parametrize("special", ["fifo", "sparse"])
def test_a_study_record_that_is_no_file_is_one_line_at_once(tmp_path, capsys, special):
    """Campaign 2 K194, K195: a stopped study whose study.json is a FIFO (named as such, not
    "no study.json") or a 5 GB sparse file (read up to its bound, not whole)."""
    from tests.helpers.cli import one_line, run_main

    folder = stopped_study(tmp_path / "run", stop_at=1)
    study = folder / "study.json"
    study.unlink()
    if special == "fifo":
        os.mkfifo(study)
    else:
        with open(study, "wb") as handle:
            handle.truncate(5 * 2**30)
    code, out, err = run_main(["openings", "--out", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, f"{study}: is a FIFO" if special == "fifo" else
             f"{study}: is larger than 1 MiB")


@pytest.mark.parametrize("edit, text", [
    (lambda study: study["config"].update(seed=5), "its footer's seed is 1"),  # K290
    (lambda study: study.update(part_deals=3), "in parts of 3 give deals 0..3"),  # K291
    (lambda study: study["config"].update(deals=2),  # P223
     "it holds deals 0..4, where study.json's 2 deals in parts of 4 give deals 0..2"),
    (lambda study: study["config"].update(strategies=["greedy", "greedy"]),  # P221
     "its footer's strategies_from_leader is ['random', 'random']"),
])
def test_a_resume_refuses_a_study_record_that_does_not_match_its_parts(tmp_path, capsys,
                                                                       edit, text):
    """Campaign 2 K290, K291: study.json edited after parts were kept (a seed: the rest
    would be played with another; a part size: thousands of tiny parts) is one line."""
    from tests.helpers.cli import one_line, run_main

    folder = stopped_study(tmp_path / "run")
    study = json.loads((folder / "study.json").read_text())
    edit(study)
    (folder / "study.json").write_text(json.dumps(study))
    before = sorted(p.name for p in (folder / "games").iterdir())
    code, out, err = run_main(["openings", "--out", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, "study.json does not match the part it keeps, games/part-000000")
    assert text in err and "--overwrite" in err
    assert sorted(p.name for p in (folder / "games").iterdir()) == before


def test_sigterm_prints_a_notice_and_exits_143(tmp_path):
    folder = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "openings", "--players", "2", "--strategies",
         "random", "--deals", "40000", "--out", str(folder), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "SNIFF_PRECOMPILE": "0"})
    deadline = time.monotonic() + 120
    while not folder.is_dir() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    assert "stopping" in err and "no summary.json (not a result)" in err
    assert err.rstrip().endswith("sniff: terminated") and "Traceback" not in err
    assert not (folder / "summary.json").exists()


def test_memory_does_not_grow_with_the_deals():
    """Python-side peak (tracemalloc: numpy and pandas buffers) for 4x the deals stays
    about one chunk's, where holding the games would take 4x."""
    def peak(deals: int) -> int:
        config = make_config(2, "random", deals, 3)
        measure_openings(make_config(2, "random", 4, 3), chunk_deals=4)  # warm
        tracemalloc.start()
        measure_openings(config, chunk_deals=20)
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    small, large = peak(40), peak(160)
    assert large < 1.5 * small, (small, large)


def test_a_folder_from_before_the_parts_is_refused_in_one_line(tmp_path):
    """A folder whose games are one games.parquet (an older sniff's layout, before the
    parts) is not read: its summary names a file no openings run writes now."""
    folder = tmp_path / "old"
    measure_openings(make_config(2, "random", 6, 2), folder)
    games = read_games(folder)
    summary = json.loads((folder / "summary.json").read_text())
    (folder / "games" / "part-000000.parquet").unlink()
    (folder / "games").rmdir()
    buffer = io.BytesIO()
    games.to_parquet(buffer)
    (folder / "games.parquet").write_bytes(buffer.getvalue())
    summary["files"].pop("games/part-000000.parquet")
    from sim.checks.integrity import part_record

    summary["files"]["games.parquet"] = part_record(folder / "games.parquet", len(games))
    (folder / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(SniffError, match="records no games/"):
        table_files(folder)


def test_a_record_that_leads_out_of_the_folder_or_skips_a_part_is_refused(tmp_path):
    folder = tmp_path / "run"
    measure_openings(make_config(2, "random", 12, 1), folder, part_deals=5)
    path = folder / "summary.json"
    good = json.loads(path.read_text())
    for change, message in [
        (lambda f: f.update({"../outside.parquet": f["openings.parquet"]}),
         "records a file that is not an openings file: '../outside.parquet'"),
        (lambda f: f.pop("games/part-000001.parquet"), "not numbered 0..1 without a gap"),
        (lambda f: f["games/part-000002.parquet"].update(rows=1), "do not add up"),
    ]:
        summary = json.loads(json.dumps(good))
        change(summary["files"])
        path.write_text(json.dumps(summary))
        with pytest.raises(SniffError, match=message):
            table_files(folder)
        recorded, sound, problems = folder_problems(folder)
        assert (recorded, sound) == (0, 0) and len(problems) == 1
        assert message.split(":")[0] in problems[0]


def test_the_in_memory_writer_gives_the_same_folder(tmp_path):
    """``write_outputs`` (a games table held in memory) writes what the streamed run does."""
    from sim.openings.output import write_outputs

    config = make_config(3, "greedy,random", 14, 4)
    measure_openings(config, tmp_path / "streamed")
    games = play_openings(config)
    table, summary = summarise_openings(games, config)
    write_outputs(tmp_path / "held", config, games, table, summary)
    for name in ("openings.parquet", "games/part-000000.parquet", "tile-pairs.csv"):
        assert (tmp_path / "held" / name).read_bytes() == (tmp_path / "streamed" / name
                                                           ).read_bytes(), name


def test_a_resume_of_other_games_is_refused_naming_both_signatures(tmp_path, capsys):
    """A study records the engine's version and its strategies' behaviour signatures
    (``sim.run.signature``); a resume under code that plays them otherwise is one line."""
    from sim.run.signature import strategy_signature
    from strategies import parse_spec
    from tests.helpers.cli import one_line, run_main

    folder = stopped_study(tmp_path / "run")
    study = json.loads((folder / "study.json").read_text())
    assert study["identity"]["strategies"] == {"random": strategy_signature(
        parse_spec("random"), 2)}
    study["identity"]["strategies"]["random"] = "0123abcd"
    (folder / "study.json").write_text(json.dumps(study))
    before = sorted(p.name for p in (folder / "games").iterdir())
    code, out, err = run_main(["openings", "--out", str(folder), "--resume", "-q"], capsys)
    one_line(code, err, "it was written by engine 1 with random=0123abcd; this code plays "
                        f"random as {strategy_signature(parse_spec('random'), 2)}")
    assert "--overwrite" in err
    assert sorted(p.name for p in (folder / "games").iterdir()) == before
