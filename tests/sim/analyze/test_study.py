"""``sniff analyze``: real games valued by the batched hint search.

Tiny runs and small budgets keep the file fast. The ground truth is a small exhaustive
solver in plain Python (tests/helpers/exact_reference.py): with 2 players and an empty boneyard
every hand is known, and the analysis's own compiled solve of such positions must give
every move the value it gives.

``sniff analyze --scheduler local:2``: parts valued as Dask tasks give the tables of an
analysis here.

The reference analysis in this process compiles (or loads) the analysis's search first, so
the two worker processes load it from the cache instead of compiling.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sim
from sim.analyze.folder import CSV_FILES, read_record, table_files
from sim.analyze.settings import AnalyzeSettings, Played
from sim.analyze.sources import GameRef
from sim.analyze.study import Hooks, analyse_games, plan_analysis, run_analysis
from sim.analyze.table import TABLES, column_text
from sim.analyze.valuation import figures, search
from sim.errors import SniffError, Stopped
from tests.helpers import ROOT
from tests.helpers.cli import invoke
from tests.helpers.exact_reference import endgame_positions, exact_values

BUDGET = 32
DOCS = ROOT / "docs" / "analyze.md"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analyze") / "run"
    sim.simulate(players=4, strategies="greedy,random", games=12, seed=5, out=folder)
    return folder


def settings(**changes) -> AnalyzeSettings:
    base = dict(budget=BUDGET, games=4, part_games=2, bootstrap=200, worst=5)
    base.update(changes)
    return AnalyzeSettings(**base)


def test_a_run_is_analysed_into_its_folder(run_folder, tmp_path):
    plan = plan_analysis([run_folder], settings(curve=(8, 16)))
    out = tmp_path / "out"
    tables = run_analysis(plan, out)
    strategies = tables["strategies"].set_index("strategy")
    assert set(strategies.index) == {"greedy", "random"}
    for name in ("loss", "accuracy", "error_rate"):
        assert (strategies[f"{name}_low"] <= strategies[name]).all()
        assert (strategies[name] <= strategies[f"{name}_high"]).all()
    assert set(tables["phases"]["phase"]) <= {"opening", "boneyard", "empty"}
    assert set(tables["curve"]["budget"]) == {8, 16}
    for name in ("strategies.csv", "phases.csv", "kinds.csv", "players.csv", "curve.csv",
                 "summary.json", "costliest.md", "positions/01.txt"):
        assert (out / name).is_file(), name
    files = table_files(out)
    decisions = pd.concat(pd.read_parquet(path) for path in files["decisions"])
    assert list(decisions.columns) == list(column_text("decisions"))
    assert decisions["moves"].min() >= 2
    assert len(decisions) == strategies["decisions"].sum()
    assert read_record(out)["status"] == "complete"
    # the costliest position is one sniff hint reads
    from sim.hint.position import parse_position

    text = (out / "positions/01.txt").read_text()
    assert parse_position(text).legal_moves()
    # every column of the CSVs is documented (a figure's _low and _high with it)
    docs = DOCS.read_text()
    for name in ("strategies.csv", "phases.csv", "kinds.csv", "players.csv", "curve.csv"):
        for column in pd.read_csv(out / name).columns:
            base = column.removesuffix("_low").removesuffix("_high")
            assert f"`{base}`" in docs, (name, column)
    noise = strategies[["noise_share_low", "noise_share", "noise_share_high"]]
    assert (noise.diff(axis=1).iloc[:, 1:] >= 0).all().all()


def test_same_seed_same_rows_whatever_the_parts(run_folder):
    plan = plan_analysis([run_folder], settings(games=3))
    one = analyse_games(plan, list(plan.games))["decisions"]
    parts = [row for ref in reversed(plan.games)
             for row in analyse_games(plan, [ref])["decisions"]]
    key = ["game_id", "decision"]
    assert pd.DataFrame(one).sort_values(key).reset_index(drop=True).equals(
        pd.DataFrame(parts).sort_values(key).reset_index(drop=True))


def test_one_traced_game_is_valued_as_its_file_is(tmp_path):
    """``analyse_trace_game`` (the browser's analysis) on one game's events gives the rows
    the analysis of the trace file gives that game, and a seat's alone when asked."""
    import json

    from sim.analyze.study import analyse_trace_game
    from sim.hint.tracker import game_slice
    from sim.kernels.trace import trace_games

    events = trace_games(2, 4, ["greedy", "random"], 3)  # seed 4, three games
    path = tmp_path / "three.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    plan = plan_analysis([path], settings(games=3))
    ref = plan.games[2]
    assert ref == GameRef("three.jsonl", 2)
    whole = pd.DataFrame(analyse_games(plan, [ref])["decisions"])
    alone = analyse_trace_game(game_slice(events, 2), ref, plan.settings)
    assert len(whole) > 5 and alone["decisions"].equals(
        whole.astype(alone["decisions"].dtypes.to_dict()))
    seat = analyse_trace_game(game_slice(events, 2), ref, plan.settings, (1,))["decisions"]
    assert set(seat["seat"]) == {1}
    assert seat.reset_index(drop=True).equals(
        alone["decisions"][alone["decisions"]["seat"] == 1].reset_index(drop=True))
    marked = (seat["mark"] != "").mean()
    strategies = analyse_trace_game(game_slice(events, 2), ref, plan.settings, (1,))
    assert strategies["strategies"]["accuracy"].tolist() == [pytest.approx(1 - marked)]
    other = analyse_trace_game(game_slice(events, 2), GameRef("renamed.jsonl", 2),
                               plan.settings)["decisions"]
    assert not other["win_played"].equals(alone["decisions"]["win_played"])  # other deals


THREADS_SCRIPT = """
import sys, threading
from sim.analyze.settings import AnalyzeSettings
from sim.analyze.sources import GameRef
from sim.analyze.study import analyse_trace_game
from sim.kernels.trace import trace_games
import numba

events = trace_games(2, 4, ["greedy", "greedy"], 1)
analyse_trace_game(events, GameRef("a.jsonl", 0), AnalyzeSettings(budget=2))
found = []
def analyse():
    tables = analyse_trace_game(events, GameRef("a.jsonl", 0), AnalyzeSettings(budget=200))
    found.append(tables["decisions"][["win_played", "win_best"]].to_numpy().tolist())
threads = [threading.Thread(target=analyse) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(numba.threading_layer(), len(found), all(rows == found[0] for rows in found))
"""


def test_analyses_in_several_threads_take_turns_on_any_threading_layer():
    """Four threads analysing at once (four analyses of ``sniff serve``) under numba's
    workqueue layer, which aborts the process when two threads enter a parallel loop
    together: each analysis waits its turn and all four give the same figures."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2",
               PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", THREADS_SCRIPT], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["workqueue", "4", "True"]


def test_a_stopped_analysis_resumes_to_the_same_tables(run_folder, tmp_path):
    plan = plan_analysis([run_folder], settings())
    whole = run_analysis(plan, tmp_path / "whole")

    def stop() -> None:
        raise Stopped(2)

    with pytest.raises(Stopped):
        run_analysis(plan, tmp_path / "cut", hooks=Hooks(check=stop))
    assert read_record(tmp_path / "cut")["status"] == "interrupted"
    again = run_analysis(None, tmp_path / "cut", resume=True)
    for name in ("strategies", "phases", "kinds", "players"):
        pd.testing.assert_frame_equal(whole[name], again[name])


def test_the_search_s_own_choices_lose_nothing(run_folder):
    """A player who plays the search's own choice (other deals, same budget) comes out
    near zero at a small and a larger budget, where the plain difference would not."""
    for budget in (8, 64):
        plan = plan_analysis([run_folder], settings(budget=budget, games=2,
                                                    played=Played.SEARCH))
        rows = pd.DataFrame(analyse_games(plan, list(plan.games))["decisions"])
        assert set(rows["strategy"]) == {"search"}
        assert abs(rows["loss"].mean()) < 0.004, budget
    assert rows["loss_full"].mean() > rows["loss"].mean()


def test_a_tournament_s_pairings_are_sources(tmp_path):
    from tests.helpers.cli import invoke

    folder = tmp_path / "t"
    code, _, err = invoke(["tournament", "--players", "2", "--strategies",
                           "greedy,random,heavy", "--games-per-pair", "3", "--seed", "2",
                           "-o", str(folder), "-q"])
    assert code == 0, err
    plan = plan_analysis([folder], settings(budget=4, games=1))
    names = [source.name for source in plan.sources]
    assert len(names) == 3 and all(name.startswith("t/") for name in names)
    rows = pd.DataFrame(analyse_games(plan, list(plan.games))["decisions"])
    assert set(rows["source"]) == set(names)
    assert set(rows["strategy"]) == {"greedy", "random", "heavy"}


def test_bad_input_is_one_line(tmp_path):
    with pytest.raises(SniffError, match="no such run folder"):
        plan_analysis([tmp_path / "nothing"], settings())
    with pytest.raises(SniffError, match="budget"):
        settings(budget=1).check()


def test_the_command_line_takes_thresholds_and_refuses_bad_input(run_folder, tmp_path):
    from tests.helpers.cli import invoke, one_line

    out = tmp_path / "a"
    code, text, err = invoke(["analyze", str(run_folder), "--games", "1", "--budget", "4",
                              "--thresholds", "2,5,20", "-o", str(out), "-q"])
    assert code == 0, err
    assert "inaccuracy >= 2, mistake >= 5, blunder >= 20 points" in text
    assert read_record(out)["settings"]["thresholds"] == [0.02, 0.05, 0.2]
    marked = pd.concat(pd.read_parquet(path) for path in table_files(out)["decisions"])
    assert set(marked[marked["mark"] == "mistake"]["loss_full"].round(6)) <= set(
        marked[(marked["loss_full"] >= 0.05) & (marked["loss_full"] < 0.2)]["loss_full"]
        .round(6))
    for args, why in ((["--thresholds", "3,1,10"], "must rise"),
                      (["--thresholds", "1,3"], "three numbers"), (["--budget", "1"], "budget"),
                      (["--endgame", "perfect"], "--endgame")):
        code, _, err = invoke(["analyze", str(run_folder), *args, "-o", str(tmp_path / "b")])
        one_line(code, err, why)
    code, _, err = invoke(["analyze", "--out", str(out), "--resume", "--policy", "blocker"])
    one_line(code, err, "leave out --policy")


def test_every_column_is_documented():
    text = DOCS.read_text()
    for name in TABLES:
        for column in column_text(name):
            assert f"`{column}`" in text, column


# ------------------------------------------------------------ the exact solver


def _pending(positions) -> list:
    from sim.analyze.decisions import Pending, kind_of, phase_of

    return [Pending(GameRef("exact", i), 0, 1, 1, p.seat, 2, "x", phase_of(p),
                    kind_of(p, p.legal_moves()), p.legal_moves(), 0, p, 1000 + i)
            for i, p in enumerate(positions)]


def test_known_hands_are_solved_as_the_exhaustive_solver_solves_them():
    """The analysis's compiled solve of a position whose every hand is known gives each
    move the value the plain-Python solver of tests/helpers/exact_reference.py gives it; so its
    best move is the exact best, and it carries no play-out noise."""
    positions = endgame_positions(40)
    assert len(positions) >= 30
    wins, deals, solved = search(_pending(positions), 2 * 4, 0)
    assert solved.all() and (deals == 1).all()
    for i, position in enumerate(positions):
        exact = exact_values(position)
        assert np.allclose(wins[i, : len(exact)], np.array(exact)[:, None]), i
        found = figures(wins[i, : len(exact)], 0, (0.01, 0.03, 0.1))
        assert exact[found.best] == max(exact)
        assert found.loss == pytest.approx(found.loss_full)


def test_play_outs_alone_value_the_same_positions_as_their_policy_plays_them():
    """``--endgame playout`` values these positions by play-outs instead: nothing is
    marked solved, and a deterministic policy (greedy) gives the same value on every deal
    (one deal is consistent), so only its own choices stand between it and the exact
    value; benchmarks/analyze_exact.py measures how often it agrees."""
    positions = endgame_positions(12)
    wins, _, solved = search(_pending(positions), 2 * 4, 0, exact=False)
    assert not solved.any()
    for i, position in enumerate(positions):
        n = len(position.legal_moves())
        assert np.ptp(wins[i, :n], axis=1).max() == 0.0


def test_the_analysis_records_the_search_by_its_behaviour(run_folder, tmp_path):
    """The record names the engine's version and the search's behaviour signature (the
    values it finds on a fixed game's decisions), which moves with the policy and the
    endgames; a resume under a search that values otherwise is refused naming both."""
    import json

    from sim.analyze.valuation import search_signature
    from sim.core.identity import ENGINE_VERSION
    from sim.errors import SettingError

    ours = search_signature("greedy", True)
    assert len({ours, search_signature("random", True), search_signature("greedy", False)}) == 3
    plan = plan_analysis([run_folder], settings())
    assert plan.code == f"engine {ENGINE_VERSION}, search {ours}"

    def stop() -> None:
        raise Stopped(2)

    with pytest.raises(Stopped):
        run_analysis(plan, tmp_path / "cut", hooks=Hooks(check=stop))
    path = tmp_path / "cut" / "analysis.json"
    record = json.loads(path.read_text())
    record["code"] = f"engine {ENGINE_VERSION}, search 0123abcd"
    path.write_text(json.dumps(record))
    with pytest.raises(SettingError, match=(
            f"it was valued by engine {ENGINE_VERSION}, search 0123abcd; this code values by "
            f"engine {ENGINE_VERSION}, search {ours}, so the remaining parts")):
        run_analysis(None, tmp_path / "cut", resume=True)


def test_a_local_cluster_gives_the_tables_of_an_analysis_here(tmp_path):
    run = tmp_path / "run"
    sim.simulate(players=2, strategies="greedy,random", games=6, seed=4, out=run)
    settings = AnalyzeSettings(budget=4, games=3, part_games=2, worst=3)
    here = tmp_path / "here"
    run_analysis(plan_analysis([run], settings), here)
    there = tmp_path / "there"
    code, out, err = invoke(["analyze", str(run), "--games", "3", "--budget", "4",
                             "--part-games", "1", "--worst", "3", "-o", str(there), "-q",
                             "--scheduler", "local:2"])
    assert code == 0, err
    assert read_record(there)["status"] == "complete"
    assert len(table_files(there)["decisions"]) == 3  # one part per game, each a task
    for name in CSV_FILES:
        assert (there / name).read_bytes() == (here / name).read_bytes(), name
    rows = [pd.concat(pd.read_parquet(path) for path in table_files(folder)["decisions"])
            .reset_index(drop=True) for folder in (here, there)]
    pd.testing.assert_frame_equal(*rows)
    assert "greedy" in out and "random" in out
