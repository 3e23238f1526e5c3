"""``sniff query`` and ``Run.query``: SQL over a run's checked parts, read-only.

Small runs (4 players, 300 games in 3 chunks); every answer is checked against pandas on
the same Parquet, every refusal is one line and exit 2, and no query changes the folder.

``sniff query`` is bounded (#51): a time limit with a default, the memory limit over the
whole process (a string function included), Ctrl-C as "sniff: interrupted" and 130, and
``Run.query`` prints nothing unless asked.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import sim
from sim.errors import SniffError
from sim.store import query as store_query
from sim.store.answer import QueryLimits, answer
from sim.store.query import DEFAULT_MEMORY, HEADROOM, Limits, connect, relation, run_sources
from tests.helpers.cli import ROOT, default_sigint, error_lines, run_main


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("query") / "run"
    sim.simulate(4, "greedy,random", 300, 7, chunk_size=100, out=folder)
    return folder


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_answer_is_the_one_pandas_gives(run):
    rounds = pd.read_parquet(run / "rounds")
    answer = sim.load(run).query(
        "SELECT end_reason, count(*) AS n, avg(team0_points) AS points FROM rounds "
        "GROUP BY ALL ORDER BY end_reason")
    expected = rounds.groupby(rounds["end_reason"].astype(str))["team0_points"].agg(
        ["size", "mean"])
    assert list(answer["end_reason"]) == list(expected.index)
    assert list(answer["n"]) == list(expected["size"])
    assert answer["points"].tolist() == pytest.approx(expected["mean"].tolist())


def test_a_lazy_answer_is_a_relation_fetched_in_pieces(run):
    relation = sim.load(run).query("SELECT game_id FROM games ORDER BY game_id", lazy=True)
    from sim.store.answer import batches as reader

    batches = list(reader(relation, 64))
    assert sum(b.num_rows for b in batches) == 300 and len(batches) > 1
    assert batches[0].column(0).to_pylist()[:3] == [0, 1, 2]


def test_the_worked_examples_of_the_docs_run(run):
    """Every ```sql block of docs/data-format.md and docs/query.md answers over a run."""
    blocks = []
    for page in ("data-format.md", "query.md"):
        text = (ROOT / "docs" / page).read_text()
        blocks += re.findall(r"```sql\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 3
    loaded = sim.load(run)
    for sql in blocks:
        answer = loaded.query(sql)
        assert len(answer) > 0 and len(answer.columns) >= 2, sql


def test_the_command_prints_a_table_csv_and_parquet(run, tmp_path, capsys):
    sql = "SELECT rounds, count(*) AS games FROM games GROUP BY rounds ORDER BY rounds"
    games = pd.read_parquet(run / "games")
    expected = games.groupby("rounds").size()
    code, out, err = run_main(["query", str(run), sql], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["rounds", "games"]
    assert [tuple(map(int, line.split())) for line in lines[1:]] == list(expected.items())
    code, out, _ = run_main(["query", str(run), sql, "--csv"], capsys)
    assert code == 0 and out.splitlines()[0] == '"rounds","games"'
    assert [tuple(map(int, line.split(","))) for line in out.splitlines()[1:]] == list(
        expected.items())
    target = tmp_path / "answer.parquet"
    code, out, err = run_main(["query", str(run), sql, "--parquet", str(target)], capsys)
    assert code == 0, err
    written = pd.read_parquet(target)
    assert list(zip(written["rounds"], written["games"])) == list(expected.items())
    code, out, _ = run_main(["query", str(run), "SELECT * FROM rounds", "--max-rows", "5"],
                            capsys)
    assert code == 0 and len(out.splitlines()) == 1 + 5 + 1 and "--csv" in out


def test_control_characters_of_an_answer_never_reach_a_terminal(run, capsys):
    """Q05: a value holding ESC or BEL is printed escaped (as every other command prints
    names from a folder); CSV is escaped on a terminal and left whole in a pipe."""
    import io

    from sim.store.answer import answer

    sql = "select 'a' || chr(27) || '[31mred' || chr(7) as x"
    code, out, err = run_main(["query", str(run), sql], capsys)
    assert code == 0 and "\x1b" not in out and "\x07" not in out, (out, err)
    assert "a\\x1b[31mred\\x07" in out

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, raw in ((Terminal(), False), (io.StringIO(), True)):
        answer(run, sql, csv=True, stream=stream)
        assert ("\x1b" in stream.getvalue()) is raw, stream.getvalue()


def test_bad_queries_are_one_line_and_change_nothing(run, tmp_path, capsys):
    before = digest(run)
    part = run / "games" / "part-000000.parquet"
    target = tmp_path / "exists.parquet"
    target.write_bytes(b"mine")
    cases = [
        (["SELECT"], "does not parse"),
        (["SELECT * FROM nothing"], "names no table"),
        (["SELECT 1; SELECT 2"], "one SELECT statement"),
        ([f"COPY games TO '{part}'"], "only a SELECT is run, not COPY"),
        ([f"ATTACH '{tmp_path / 'x.db'}'"], "not ATTACH"),
        (["INSTALL httpfs"], "only a SELECT"),
        (["LOAD httpfs"], "only a SELECT"),
        (["CREATE TABLE t AS SELECT 1"], "not CREATE"),
        (["SET threads = 1"], "not SET"),
        (["DELETE FROM games"], "not DELETE"),
        (["SELECT * FROM read_csv('/etc/passwd')"], "no other file"),
        ([f"SELECT * FROM read_parquet('{part}')"], "no other file"),
        (["SELECT * FROM glob('/*')"], "no other file"),
        (["SELECT 1", "--parquet", str(target)], "exists"),
        (["SELECT 1", "--parquet", str(run / "answer.parquet")], "never writes into"),
        (["SELECT 1", "--csv", "--parquet", str(tmp_path / "new.parquet")], "exclude"),
        # #63: "new/" wrote a file named new (the slash, which says a folder, dropped)
        (["SELECT 1", "--parquet", f"{tmp_path / 'new'}/"], "names a folder (it ends with"),
        (["SELECT 1", "--parquet", str(tmp_path)], "is a directory"),
    ]
    for args, message in cases:
        code, out, err = run_main(["query", str(run), *args], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and message in lines[0], (args, err)
        assert "Traceback" not in err
    assert not (tmp_path / "new").exists()
    overwrite = ["query", str(run), "SELECT 1 AS a", "--parquet", str(target), "--overwrite"]
    code, _, err = run_main(overwrite, capsys)  # only over a Parquet file (#51)
    assert code == 2 and "not a parquet file" in err
    assert target.read_bytes() == b"mine"
    pd.DataFrame({"b": [2]}).to_parquet(target)
    code, _, err = run_main(overwrite, capsys)
    assert code == 0 and pd.read_parquet(target)["a"].tolist() == [1]
    assert digest(run) == before


def test_a_damaged_part_met_by_a_query_is_named(run, tmp_path, capsys):
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(run, damaged)
    part = damaged / "rounds" / "part-000001.parquet"
    data = bytearray(part.read_bytes())
    data[len(data) // 3] ^= 0x5A  # the same size: the cheap check passes, the page's CRC not
    part.write_bytes(bytes(data))
    code, _, err = run_main(["query", str(damaged), "SELECT * FROM rounds", "--csv"],
                            capsys)  # every column read
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "rounds/part-000001.parquet" in lines[0], err


def test_a_table_too_big_for_memory_is_refused_with_the_alternatives(run, monkeypatch):
    import sim.store.scan as scan

    monkeypatch.setattr(scan, "available_memory", lambda: 1000)
    loaded = sim.load(run)
    with pytest.raises(SniffError) as refused:
        _ = loaded.rounds
    text = str(refused.value)
    assert "\n" not in text and "rows" in text and "memory" in text
    assert "run.query" in text and "sniff query" in text and "dataset" in text
    assert loaded.query("SELECT count(*) AS n FROM rounds")["n"][0] > 300  # still answered
    monkeypatch.undo()
    assert len(sim.load(run).rounds) > 300


def test_an_openings_folder_is_queried_by_its_tables(tmp_path, capsys):
    from sim.openings.study import run_openings

    folder = tmp_path / "openings"
    run_openings(players=2, strategies="greedy", deals=4, seed=3, out=folder)
    code, out, err = run_main(["query", str(folder),
                               "SELECT count(*) AS tiles FROM openings"], capsys)
    assert code == 0, err
    assert out.split() == ["tiles", "28"]
    code, out, err = run_main(["query", str(folder), "SELECT count(*) AS n FROM games"], capsys)
    assert code == 0, err
    games = sum(len(pd.read_parquet(p)) for p in
                ([folder / "games.parquet"] if (folder / "games.parquet").exists()
                 else sorted((folder / "games").glob("part-*.parquet"))))
    assert int(out.split()[-1]) == games


ENDLESS = "select count(*) from range(100000000000) a where a % 7 = 3"


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bounds") / "run"
    sim.simulate(2, "greedy,random", 100, 1, out=folder)
    return folder


def test_a_query_past_its_time_limit_is_one_line(played, capsys) -> None:
    started = time.monotonic()
    code, out, err = run_main(["query", str(played), ENDLESS, "--timeout", "1"], capsys)
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and "time limit of 1 s" in lines[0], err
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("timeout", ["nan", "inf", "1e300", "-1", "0"])
def test_a_time_limit_that_would_switch_itself_off_is_refused(played, capsys,
                                                             timeout) -> None:
    """Q08: NaN passes a range check; infinity and a negative limit mean none at all."""
    started = time.monotonic()
    code, out, err = run_main(["query", str(played), ENDLESS, "--timeout", timeout], capsys)
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and "--timeout" in lines[0], err
    assert time.monotonic() - started < 30 and out == ""
    with pytest.raises(SniffError, match="timeout must be a number of seconds above 0"):
        sim.load(played).query("select 1", timeout=float(timeout))


def test_the_memory_limit_covers_the_whole_process(played, monkeypatch) -> None:
    monkeypatch.setattr(store_query, "HEADROOM", 0)
    with pytest.raises(SniffError, match="more than its memory limit"):
        answer(played, "select length(repeat('x', 400000000)) as n",
               limits=QueryLimits(memory=64 << 20, hard_memory=True))
    assert answer(played, "select count(*) as n from games",
                  limits=QueryLimits(memory=64 << 20, hard_memory=True)) == 1  # lifted after


# Runs sniff and, as it exits, writes its own peak resident memory (VmHWM: the process's
# since its exec, where wait4's ru_maxrss also holds the forking parent's peak) to argv[1].
PEAK_OF_SNIFF = """
import sys
from pathlib import Path
from sim.cli.main import main
try:
    main(sys.argv[2:], prog_name="sniff")
finally:
    status = Path("/proc/self/status").read_text()
    Path(sys.argv[1]).write_text(status.split("VmHWM:")[1].split()[0])
"""


def test_one_allocation_past_the_limit_is_refused_before_it_is_made(played, tmp_path) -> None:
    # A 3 GB string in one call: the resident-memory watch alone let it reach 6 GB for a
    # minute; the address-space cap refuses it at once, while the query is still bound
    # (DuckDB folds the constant then).
    peak = tmp_path / "peak-kb"
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-c", PEAK_OF_SNIFF, str(peak), "query", str(played),
         "SELECT length(repeat('x', 3000000000)) AS n"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = error_lines(child.stderr)
    assert child.returncode == 2 and len(lines) == 1, child.stderr
    assert "more than its memory limit of 1,024 MB and was stopped" in lines[0], child.stderr
    assert int(peak.read_text()) * 1024 < DEFAULT_MEMORY + HEADROOM  # kB
    assert time.monotonic() - started < 60


def test_the_address_space_cap_holds_while_the_query_runs_and_no_longer(played) -> None:
    before = resource.getrlimit(resource.RLIMIT_AS)
    session = connect(run_sources(sim.load(played)), 1)
    with Limits(session, None, DEFAULT_MEMORY):
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        assert soft != resource.RLIM_INFINITY
        assert DEFAULT_MEMORY + HEADROOM < soft < DEFAULT_MEMORY + HEADROOM + (64 << 30)
        with pytest.raises(MemoryError):
            bytearray(soft)  # more than the cap: refused, not allocated
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_a_query_on_many_threads_passes_under_the_cap(played) -> None:
    run = sim.load(played)
    session = connect(run_sources(run), 16)  # each thread's malloc arena reserves space
    sql = ("SELECT winner_side, count(*) AS n, sum(team0_score) AS points FROM games "
           "GROUP BY ALL ORDER BY ALL")
    with Limits(session, 60, DEFAULT_MEMORY):
        frame = relation(session, sql).df()
    games = run.games
    expected = games.groupby("winner_side").agg(n=("game_id", "size"),
                                                points=("team0_score", "sum"))
    assert list(frame["n"]) == list(expected["n"])
    assert list(frame["points"]) == list(expected["points"])


def test_ctrl_c_stops_a_query_at_once(played) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "query", str(played), ENDLESS], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    time.sleep(8)  # imports, the folder's checks, the query under way
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130 and err.strip().endswith("sniff: interrupted"), err
    assert "Traceback" not in err


def test_run_query_prints_no_progress_bar(played, capsys) -> None:
    run = sim.load(played)
    capsys.readouterr()
    frame = run.query("select current_setting('enable_progress_bar') as shown")
    assert not frame["shown"][0]
    out, err = capsys.readouterr()
    assert out == "" and err == ""
