"""``sniff analyze``: real games valued by the batched hint search.

Tiny runs and small budgets keep the file fast. The ground truth is a small exhaustive
solver: with 2 players and an empty boneyard every hand is known, so the rest of the round
can be searched to its end (each side maximising its own chance to win the game, valued
as the search values a round's end), and the analysis's best move must agree with it.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest

import sim
from sim.analyze import kernel as analyze_kernel
from sim.analyze.folder import read_record, table_files
from sim.analyze.settings import AnalyzeSettings, Played
from sim.analyze.sources import GameRef
from sim.analyze.study import Hooks, analyse_games, plan_analysis, run_analysis
from sim.analyze.table import TABLES, column_text
from sim.analyze.valuation import figures, search
from sim.core import engine
from sim.core.layout import POINTS_FOR_COUNT
from sim.core.tiles import N_TILES, TILE_PIPS
from sim.errors import SniffError, Stopped
from sim.hint import kernel as hint_kernel
from sim.kernels.runner import lineup_of
from sim.kernels.trace import game_events
from strategies import parse_spec

BUDGET = 32


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


def test_same_seed_same_rows_whatever_the_parts(run_folder):
    plan = plan_analysis([run_folder], settings(games=3))
    one = analyse_games(plan, list(plan.games))["decisions"]
    parts = [row for ref in reversed(plan.games)
             for row in analyse_games(plan, [ref])["decisions"]]
    key = ["game_id", "decision"]
    assert pd.DataFrame(one).sort_values(key).reset_index(drop=True).equals(
        pd.DataFrame(parts).sort_values(key).reset_index(drop=True))


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


def test_bad_input_is_one_line(tmp_path):
    with pytest.raises(SniffError, match="no such run folder"):
        plan_analysis([tmp_path / "nothing"], settings())
    with pytest.raises(SniffError, match="budget"):
        settings(budget=1).check()


def test_every_column_is_documented():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "analyze.md").read_text()
    for name in TABLES:
        for column in column_text(name):
            assert f"`{column}`" in text, column


# ------------------------------------------------------------ the exact solver


def _state(hands, scores, target, winner=-1):
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    state[engine.PLAYERS], state[engine.TARGET], state[engine.WINNER_TEAM] = 2, target, winner
    for seat in range(2):
        state[engine.HANDS + seat] = hands[seat]
        state[engine.SCORES + seat] = scores[seat]
    return state


def _pips(hand: int) -> int:
    return sum(int(TILE_PIPS[t]) for t in range(N_TILES) if hand >> t & 1)


def exact_values(position) -> list[float]:
    """The value of each legal move (the mover's chance to win the game) with both hands
    known, every reply searched to the round's end."""
    kernel = hint_kernel.load()
    ends = analyze_kernel.load(search=False)
    team, target = position.seat, position.target
    hand = position.hand_mask()
    other = ((1 << N_TILES) - 1) & ~hand & ~position.played_mask()
    hands0 = [0, 0]
    hands0[position.seat], hands0[1 - position.seat] = hand, other
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)

    def moves_of(layout, held):
        count = kernel.moves_of(layout, held, -1, buffer)
        return [int(m) for m in buffer[:count]]

    def end(hands, scores, winner=-1):
        state = _state(hands, scores, target, winner)
        return float(ends.round_end_value(state, state, team))

    def settle(hands, scores):
        scores = list(scores)
        for seat in range(2):
            scores[seat] -= ((_pips(hands[seat]) + 2) // 5) * 5
        return end(hands, scores)

    @cache
    def value(h0, h1, layout, s0, s1, seat, passed):
        hands, scores = [h0, h1], [s0, s1]
        options = moves_of(layout, hands[seat])
        if not options:
            if passed or not moves_of(layout, hands[1 - seat]):
                return settle(hands, scores)
            return value(h0, h1, layout, s0, s1, 1 - seat, True)
        results = [after(hands, scores, layout, seat, move) for move in options]
        return max(results) if seat == team else min(results)

    def after(hands, scores, layout, seat, move):
        hands, scores = list(hands), list(scores)
        tile, arm = move >> 2, move & 3
        layout = int(kernel.place(layout, tile, arm))
        scores[seat] += int(POINTS_FOR_COUNT[int(kernel.count(layout))])
        hands[seat] &= ~(1 << tile)
        if scores[seat] >= target:
            return end(hands, scores, seat)
        if hands[seat] == 0:
            return settle(hands, scores)
        return value(hands[0], hands[1], layout, scores[0], scores[1], 1 - seat, False)

    return [after(hands0, list(position.scores), position.layout, position.seat, move)
            for move in position.legal_moves()]


def endgame_positions(count: int) -> list:
    """Decisions of 2-player games with an empty boneyard and a choice, small hands."""
    from sim.hint.position import decisions

    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    found = []
    for game in range(150):
        for decision in decisions(game_events(lineup, 23, game)):
            position = decision.position
            if (position.boneyard == 0 and len(position.legal_moves()) > 1
                    and position.table and sum(position.sizes) <= 10):
                found.append(position)
        if len(found) >= count:
            break
    return found[:count]


def test_the_best_move_agrees_with_an_exact_solver():
    """With ``learned`` playing the rounds out (``--policy learned``); the measurement over
    some 200 decisions per policy is benchmarks/analyze_exact.py's (docs/analyze.md)."""
    positions = endgame_positions(60)
    assert len(positions) >= 40
    from sim.analyze.decisions import Pending, kind_of, phase_of

    pending = [Pending(GameRef("exact", i), 0, 1, 1, p.seat, 2, "x", phase_of(p),
                       kind_of(p, p.legal_moves()), p.legal_moves(), 0, p, 1000 + i)
               for i, p in enumerate(positions)]
    from strategies.search.playout import POLICIES

    wins, _ = search(pending, 2 * BUDGET, POLICIES.index("learned"))
    agree = separated = 0
    for i, position in enumerate(positions):
        n = len(pending[i].moves)
        found = figures(wins[i, :n], 0, (0.01, 0.03, 0.1))
        if not found.best_separated:
            continue
        separated += 1
        exact = exact_values(position)
        agree += exact[found.best] >= max(exact) - 1e-12
    assert separated >= 20
    assert agree >= 0.9 * separated, (agree, separated)
