"""``--precision``: stop at the first check where every win rate is precise enough, always at
the same game whatever the chunk size, resumable; and the statistics behind reports.

greedy and random only (the suite's shared kernel).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import sim
from sim.errors import SniffError
from sim.run.chunks import RunInterrupted
from sim.run.plan import resolve_plan
from sim.run.precision import PRECISION_STEP, precision_stop
from sim.run.settings import RunControl
from sim.run.simulation import execute
from sim.stats.intervals import (
    Z95,
    wilson_half_width,
)
from tests.helpers.cli import run_main
from tests.helpers.frames import assert_frame_equal

# random against random is even: a half-width of 0.03 needs about (1.96 * 0.5 / 0.03)**2
# = 1067 games, so the run stops at the second check, 1200 games.
OPTIONS = {"players": 2, "strategies": "random,random", "seed": 9, "precision": 0.03,
           "max_games": 5000}




def without_run_id(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=["run_id"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    folder = tmp_path_factory.mktemp("precision") / "run"
    return sim.simulate(**OPTIONS, chunk_size=500, out=folder)


def test_stops_at_the_first_precise_check(stopped):
    manifest = stopped.manifest
    stop = manifest["stopped"]
    assert stop["reason"] == "precision" and stop["games"] == 2 * PRECISION_STEP
    assert stop["half_width"] <= 0.03 and stop["max_games"] == 5000
    games = stopped.games
    assert len(games) == stop["games"] and list(games["game_id"]) == list(range(stop["games"]))
    assert stopped.rounds["game_id"].max() == stop["games"] - 1
    # the check before was not precise enough, this one is: as computed from the table
    winner = games["winner_side"].to_numpy()
    for n, precise in ((PRECISION_STEP, False), (2 * PRECISION_STEP, True)):
        widest = max(wilson_half_width(int((winner[:n] == k).sum()), n) for k in range(2))
        assert (widest <= 0.03) == precise
    assert manifest["config"]["precision"] == 0.03
    assert manifest["config"]["games"] == 5000 and manifest["summary"]["games"] == 1200
    assert "stopped at 1,200 games (precise enough)" in str(stopped.summary)
    assert sim.load(stopped.path).summary.to_dict() == stopped.summary.to_dict()


def test_the_stop_does_not_depend_on_chunks_and_is_a_prefix(stopped, tmp_path):
    other = sim.simulate(**OPTIONS, chunk_size=5000, out=tmp_path / "one-chunk")
    assert_frame_equal(other.games, stopped.games)
    assert_frame_equal(other.rounds, stopped.rounds)
    memory = sim.simulate(**OPTIONS, chunk_size=700)
    assert_frame_equal(memory.games, stopped.games)
    # The same games as a fixed-length run of the same seed: a prefix of one sequence.
    fixed = sim.simulate(players=2, strategies="random,random", seed=9, games=1500)
    assert_frame_equal(without_run_id(fixed.games[:1200]),
                                  without_run_id(stopped.games))


def test_a_precise_chunk_stops_playing_at_the_batch_that_holds_the_stop(stopped, monkeypatch):
    """One 5,000-game chunk: the stop at 1,200 games is found between batches, so the engine
    plays the first batches only (a slow pairing would otherwise play the whole chunk).
    Batches of a slow pairing (here: every pairing) are one check step long."""
    import sim.kernels.runner
    import sim.run.chunks

    played: list[int] = []
    real = sim.kernels.runner.play_batch

    def counting(lineup, seed, ids, *args, **kwargs):
        played.append(int(ids.size))
        return real(lineup, seed, ids, *args, **kwargs)

    monkeypatch.setattr(sim.kernels.runner, "play_batch", counting)
    monkeypatch.setattr(sim.run.chunks, "PRECISION_BATCH_SECONDS", 0.0)
    run = sim.simulate(**OPTIONS, chunk_size=5000)
    assert len(run.games) == 1200
    batches = [n for n in played if n > 1]  # the warm-up's one game aside
    assert batches == [PRECISION_STEP, PRECISION_STEP]
    assert_frame_equal(run.games, stopped.games.assign(run_id=run.games["run_id"]))


def test_the_cap_ends_an_imprecise_run():
    run = sim.simulate(players=4, strategies="greedy,random", seed=1, precision=0.001,
                       max_games=1000, chunk_size=400)
    stop = run.manifest["stopped"]
    assert stop["reason"] == "max_games" and stop["games"] == 1000 == len(run.games)
    assert stop["half_width"] > 0.001
    assert "the --max-games cap" in str(run.summary)


def test_interrupted_precision_run_resumes_to_the_same_tables(stopped, tmp_path, capsys):
    folder = tmp_path / "stopped"
    plan = resolve_plan({**OPTIONS, "games": OPTIONS["max_games"], "max_games": None,
                         "chunk_size": 500})

    def stop_after_first(chunk):
        if chunk == 0:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        execute(plan, folder, RunControl(on_chunk=stop_after_first))
    assert "stopped" not in json.loads((folder / "manifest.json").read_text())
    code, out, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert "stopped at 1,200 games" in out
    assert_frame_equal(sim.load(folder).games, stopped.games)
    assert_frame_equal(sim.load(folder).rounds, stopped.rounds)
    # A finished precision run resumes to itself: its cut last part is kept.
    code, out, err = run_main(["simulate", "--out", str(folder), "--resume", "-q"], capsys)
    assert code == 0, err
    assert len(sim.load(folder).games) == 1200
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sessions"][-1]["games_played"] == 0
    code, _, err = run_main(["simulate", "--out", str(folder), "--resume", "--precision",
                             "0.02", "-q"], capsys)
    assert code == 2 and "it was started with --precision 0.03" in err


def test_precision_option_errors(capsys, tmp_path):
    cases = [
        (["--precision", "0.01", "--games", "100"], "--games and --precision exclude"),
        (["--max-games", "100"], "--max-games is the cap of a --precision run"),
        (["--precision", "0.7"], "--precision must be a half-width from 0.0001"),
        (["--precision", "0"], "--precision must be a half-width from 0.0001"),
        # #63: accepted, and played on to the cap, which no run can make that precise
        (["--precision", "1e-320"], "--precision must be a half-width from 0.0001 (about 100 "
                                    "million games) to below 0.5"),
        (["--precision", "0.00009"], "--precision must be a half-width from 0.0001"),
    ]
    for args, message in cases:
        code, _, err = run_main(["simulate", *args, "-q", "--out", str(tmp_path / "x")], capsys)
        assert code == 2 and message in err, (args, err)
    assert not (tmp_path / "x").exists()
    with pytest.raises(SniffError, match="too many to keep in memory"):
        sim.simulate(precision=0.01, max_games=2_000_000)


def test_precision_stop_checks_on_the_game_id_grid():
    wins = np.zeros(2, dtype=np.int64)
    sides = np.tile([0, 1], 2000)  # a dead heat: half-width 1.96 * 0.5 / sqrt(n) roughly
    needed = math.ceil((Z95 * 0.5 / 0.02) ** 2)  # about 2401 games
    stop = precision_stop(wins, 0, sides, 0.02)
    assert stop is not None and stop[0] % PRECISION_STEP == 0
    assert stop[0] - PRECISION_STEP < needed <= stop[0] + 50
    # the same stop, fed in two pieces cut anywhere
    cut = 1000
    first = precision_stop(wins, 0, sides[:cut], 0.02)
    assert first is None
    counts = np.bincount(sides[:cut], minlength=2)
    assert precision_stop(counts, cut, sides[cut:], 0.02) == stop
    assert precision_stop(wins, 0, sides[:599], 0.5 - 1e-9) is None  # no check reached yet


# --- statistics
