"""The benchmark's pieces run and report consistent figures (no timing thresholds here:
speed is measured by `sniff bench`, not by tests)."""

from __future__ import annotations

import pytest

from sim.run.bench import engine_rate, python_model_rate, table


def test_engine_rate_counts_what_it_played():
    row = engine_rate(2, "greedy", 1, 300, 1)
    assert row["games"] == 300 and row["threads"] == 1
    assert row["rounds_per_s"] == pytest.approx(row["games_per_s"] * row["rounds_per_game"])
    assert row["rounds_per_game"] >= 1 and row["ns_per_placement"] > 0


def test_python_model_rate_plays_the_same_kind_of_games():
    model = python_model_rate(2, "greedy", 5)
    assert model is not None and model["games"] == 5 and model["rounds_per_s"] > 0


def test_table_shows_every_measured_row():
    engine = [engine_rate(3, "random", 1, 100, 1)]
    report = {
        "machine": {"cpu": "test cpu", "cores": 2, "python": "3.11", "numba": "0"},
        "quick": True,
        "engine": engine,
        "python_model": [dict(python_model_rate(3, "random", 3), speedup_per_thread=123.0)],
        "strategies": [{"strategy": "random", "ns_per_decision": 250.0, "games": 10}],
        "compile": {"cold_s": 20.0, "warm_s": 2.0},
        "memory": {"games": 1000, "peak_rss_mib": 300.0, "seconds": 3.0},
        "simulate": {"games_per_s": 1000.0, "ratio": 0.8, "no_rounds_games_per_s": 1100.0,
                     "no_rounds_ratio": 0.9},
    }
    text = table(report)
    assert "| 3 | random | 1 |" in text and "123x" in text and "| random | 250 |" in text
    assert "cold (empty cache) 20.0 s, warm 2.0 s" in text and "0.80 of the engine-only" in text
    assert "with --no-rounds 1,100 games/s, 0.90" in text


@pytest.mark.parametrize("games", [10**12 + 1, 10**20, 10])
def test_a_memory_run_no_simulate_plays_is_refused_before_measuring(games, capsys):
    """Campaign 2 K109 (and P236: 10 games with --quick are 0): one line at once, not a
    traceback or a failure after the minutes of measuring."""
    from tests.helpers.cli import one_line, run_main

    code, out, err = run_main(["bench", "--quick", "--memory-games", str(games)], capsys)
    one_line(code, err, "--memory-games")


def test_a_failed_memory_run_is_one_line(monkeypatch):
    """Whatever makes the measured simulate fail, bench says so in one line (its last
    line), not in a CalledProcessError traceback."""
    import subprocess

    from sim.errors import SniffError
    from sim.run import bench

    def failing(*args, **kwargs):
        raise subprocess.CalledProcessError(2, args[0], output="", stderr=(
            "sniff: error: not enough disk space\n"))

    monkeypatch.setattr(bench.subprocess, "run", failing)
    with pytest.raises(SniffError, match=r"peak-memory run of 1,000 games failed \(exit 2\): "
                                         "sniff: error: not enough disk space"):
        bench.peak_memory(1000)


def test_the_measured_runs_import_no_code_from_the_working_folder(tmp_path, monkeypatch):
    """#63: ``sniff bench`` runs ``python -m sim.cli`` (and ``python -c``) in the folder it
    was started from, which puts that folder first on the child's ``sys.path``."""
    from sim.run import bench
    from tests.helpers.cli import imported_from, shadow_modules

    shadow_modules(tmp_path, "numpy", "click")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    assert bench.peak_memory(1000)["peak_rss_mib"] > 0
    assert imported_from(tmp_path) == []
