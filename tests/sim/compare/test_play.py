"""``sniff compare``: the sequential test's statistics, its runs and its command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sim.checks.integrity import check_run
from sim.compare.play import compare
from sim.errors import SniffError
from sim.run.chunks import RunInterrupted
from sim.run.settings import RunControl
from sim.stats.sprt import DealOutcomes, Sprt, elo_of_difference, simulate_tests
from sim.store.io import read_manifest
from tests.helpers.cli import run_main

DEFAULT = Sprt(0.0, 0.05, 0.05, 0.05)


def test_bounds_and_llr_follow_wald_and_the_normal_gsprt():
    assert DEFAULT.upper == pytest.approx(math.log(0.95 / 0.05))
    assert DEFAULT.lower == pytest.approx(math.log(0.05 / 0.95))
    # n (h1 - h0) (2 mean - h0 - h1) / (2 var): zero half way, signs either side
    assert DEFAULT.llr(1000, 0.025, 0.5) == pytest.approx(0.0)
    assert DEFAULT.llr(1000, 0.05, 0.5) == pytest.approx(1000 * 0.05 * 0.05 / 1.0)
    assert DEFAULT.llr(1000, 0.0, 0.5) < 0 < DEFAULT.llr(1000, 0.06, 0.5)
    assert DEFAULT.decision(3.0) == "H1" and DEFAULT.decision(-3.0) == "H0"
    assert DEFAULT.decision(0.0) is None
    assert elo_of_difference(0.0) == 0 and 17 < elo_of_difference(0.05) < 18


@pytest.mark.parametrize("settings", [(0.1, 0.05, 0.05, 0.05), (0.0, 0.05, 0.5, 0.05),
                                      (0.0, 0.05, 0.05, 0.0), (0.0, 1.5, 0.05, 0.05)])
def test_bad_settings_are_one_line(settings):
    with pytest.raises(SniffError):
        Sprt(*settings)


def test_deal_outcomes_are_the_win_rate_difference_per_deal():
    two = DealOutcomes(sides=2, group=2)
    # deals: A wins both, split, B wins both, A wins one and one game undecided
    two.add(np.array([0, 0, 0, 1, 1, 1, 0, -1]), np.array([0, 0, 1, 1, 2, 2, 3, 3]))
    assert two.deals == 4
    assert two.mean == pytest.approx(np.mean([1, 0, -1, 0.5]))
    assert two.variance == pytest.approx(np.var([1, 0, -1, 0.5]))
    three = DealOutcomes(sides=3, group=3)  # A against the mean of B's two seats
    three.add(np.array([0, 1, 2, 1, 1, 2]), np.array([0, 0, 0, 1, 1, 1]))
    per_game = [[1, -0.5, -0.5], [-0.5, -0.5, -0.5]]
    assert three.mean == pytest.approx(np.mean(np.mean(per_game, axis=1)))
    with pytest.raises(ValueError):
        two.add(np.array([0, 1, 0]), np.array([4, 4, 5]))  # a deal cut by the chunk


def test_error_rates_and_games_on_synthetic_deals():
    """1,000 tests a setting: the planned error rates hold within Monte-Carlo error, and
    the test needs fewer deals than the fixed-size test of the same error rates."""
    tests = 1000
    slack = 3 * math.sqrt(0.05 * 0.95 / tests)
    null = simulate_tests(DEFAULT, 0.0, tests, 50, 200_000, seed=1)
    assert null["h1_share"] <= 0.05 + slack
    alternative = simulate_tests(DEFAULT, 0.05, tests, 50, 200_000, seed=2)
    assert alternative["h0_share"] <= 0.05 + slack
    fixed = DEFAULT.fixed_deals(null["sd"])
    large = simulate_tests(DEFAULT, 0.10, tests, 50, 200_000, seed=3)
    assert large["mean_deals"] <= fixed / 2
    half = simulate_tests(DEFAULT, 0.025, tests, 50, 200_000, seed=4)
    assert half["mean_deals"] <= fixed * 1.05  # within Monte-Carlo error of at most fixed


def test_partner_beats_greedy_fast_and_greedy_equals_itself(tmp_path):
    better = compare("partner", "greedy", players=4, seed=3, out=tmp_path / "pg")
    assert better.decision == "H1" and better.games < 2000
    same = compare("greedy", "greedy", players=4, seed=3, out=tmp_path / "gg")
    assert same.decision == "H0"
    saved = json.loads((tmp_path / "pg" / "compare.json").read_text())
    for key in ("decision", "games", "llr", "lower", "upper", "hypotheses", "estimate"):
        assert key in saved
    assert saved["decision"] == "H1" and saved["games"] == better.games
    assert saved["llr"] >= saved["upper"]
    manifest = read_manifest(tmp_path / "pg")
    assert manifest["stopped"]["reason"] == "sprt" and manifest["summary"]["games"] == better.games
    checked = check_run(tmp_path / "pg", manifest)
    assert not checked.problems and checked.games == better.games


def test_same_seed_same_decision_for_any_threads_and_after_a_stop(tmp_path):
    """random against itself: a real null; interrupted after its first chunk and resumed,
    or on one thread, the games and so the decision are the same."""
    whole = compare("random", "random", players=2, seed=8, out=tmp_path / "whole",
                    control=RunControl(threads=2))

    def stop(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        compare("random", "random", players=2, seed=8, out=tmp_path / "cut", on_line=stop)
    resumed = compare(out=tmp_path / "cut", control=RunControl(mode="resume", threads=1))
    assert (resumed.decision, resumed.games, resumed.llr) == (whole.decision, whole.games,
                                                              whole.llr)
    again = compare(out=tmp_path / "cut", control=RunControl(mode="resume"))  # decided: no play
    assert again.games == whole.games


def test_three_players_play_a_against_two_seats_of_b(tmp_path):
    result = compare("blocker", "greedy", players=3, seed=2, out=tmp_path / "three")
    manifest = read_manifest(tmp_path / "three")
    assert manifest["config"]["strategies"] == ["blocker:block=8.0,reply=0.5,shed=0.1",
                                                "greedy", "greedy"]
    assert result.games % 3 == 0 and result.decision in ("H0", "H1", "undecided")


@pytest.mark.parametrize("args, message", [
    (["partner", "greedy", "--h0", "0.1", "--h1", "0.05"], "--h1 must be above --h0"),
    (["partner", "greedy", "--beta", "0.6"], "--beta must be an error rate"),
    (["partner", "greedy", "--max-games", "10"], "--max-games must be at least one chunk"),
    (["partner", "greedy", "--chunk-size", "5"], "whole duplicate deals"),
    (["partner"], "give two strategies"),
    (["partner", "nosuch"], "unknown strategy"),
    (["--resume"], "--resume needs --out"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys, tmp_path):
    code, out, err = run_main(["compare", *args, "-o", str(tmp_path / "x")]
                              if "--resume" not in args else ["compare", *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_resumed_comparison_announces_its_own_test_and_keeps_its_cap(tmp_path, capsys):
    """#63: ``compare --out X --resume --max-games 100`` of a run started with ``--h1
    0.005`` announced the default ``H1 >= +5.0%`` and played on to the run's own cap."""
    folder = tmp_path / "cut"

    def stop(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        compare("random", "random", players=2, seed=8, out=folder, max_games=4000,
                test=Sprt(0.0, 0.005, 0.05, 0.05), on_line=stop)
    parts = sorted((folder / "games").iterdir())
    code, out, err = run_main(["compare", "--out", str(folder), "--resume", "--max-games",
                               "100"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--max-games 100 differs from the run's own 4,000" in err
    assert sorted((folder / "games").iterdir()) == parts  # nothing played
    code, out, err = run_main(["compare", "--out", str(folder), "--resume"], capsys)
    assert code == 0, err
    assert "against H1 >= +0.5%, alpha 0.05, beta 0.05" in err and "+5.0%" not in err
    assert json.loads((folder / "compare.json").read_text())["games"] <= 4000
