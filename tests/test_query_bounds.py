"""``sniff query`` is bounded (#51): a time limit with a default, the memory limit over the
whole process (a string function included), Ctrl-C as "sniff: interrupted" and 130, and
``Run.query`` prints nothing unless asked."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import ROOT, default_sigint, error_lines, run_main

import sim
from sim.errors import SniffError
from sim.store import query as store_query
from sim.store.answer import QueryLimits, answer

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


def test_the_memory_limit_covers_the_whole_process(played, monkeypatch) -> None:
    monkeypatch.setattr(store_query, "HEADROOM", 0)
    with pytest.raises(SniffError, match="more than its memory limit"):
        answer(played, "select length(repeat('x', 400000000)) as n",
               limits=QueryLimits(memory=64 << 20, hard_memory=True))
    assert answer(played, "select count(*) as n from games",
                  limits=QueryLimits(memory=64 << 20, hard_memory=True)) == 1  # lifted after


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
