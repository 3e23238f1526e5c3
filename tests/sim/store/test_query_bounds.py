"""``sniff query`` is bounded (#51): a time limit with a default, the memory limit over the
whole process (a string function included), Ctrl-C as "sniff: interrupted" and 130, and
``Run.query`` prints nothing unless asked."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim
from sim.errors import SniffError
from sim.store import query as store_query
from sim.store.answer import QueryLimits, answer
from sim.store.query import DEFAULT_MEMORY, HEADROOM, Limits, connect, relation, run_sources
from tests.helpers.cli import ROOT, default_sigint, error_lines, run_main

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
