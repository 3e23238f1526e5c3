"""The tables of a ``sniff simulate`` run (``sim.store.tables``, ``sim.store.io``): every
documented column and nothing else, games and rounds that agree, pandas and pyarrow
reading the same dataset, a summary that matches the tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import sim
from sim.checks.integrity import TABLES
from sim.core import engine
from sim.run.simulation import execute
from sim.stats.intervals import mean_interval, wilson_interval
from tests.helpers.frames import assert_frame_equal
from tests.helpers.simulate import (
    CHUNK,
    GAMES,
    SEED,
    documented_columns,
    frames,
    plan_of,
    play_base_run,
)


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    return play_base_run(tmp_path_factory)


@pytest.mark.parametrize("players, strategies", [(4, "greedy,random"), (3, "greedy,random,random")])
def test_every_documented_column_is_there_and_nothing_else(tmp_path, base_run, players,
                                                           strategies):
    folder = base_run
    if players != 4:
        folder = tmp_path / "three"
        execute(plan_of(players=players, strategies=strategies, games=300, chunk_size=100), folder)
    for table in TABLES:
        schema = ds.dataset(folder / table).schema
        assert schema.names == documented_columns(table, players)
    schema = pq.read_schema(folder / "games" / "part-000000.parquet")
    assert str(schema.field("seat0_strategy").type.value_type) == "string"
    assert schema.field("rotation").type == "int8"
    metadata = json.loads(schema.metadata[b"sniff"])
    assert metadata["config"]["players"] == players
    assert metadata["chunk"]["index"] == 0 and metadata["table"] == "games"


@pytest.fixture(scope="module")
def other_runs(tmp_path_factory) -> dict[str, Path]:
    """Runs of other shapes: long random games (round buffers overflow), 2 and 3 players."""
    root = tmp_path_factory.mktemp("others")
    shapes = {
        "random4": {"strategies": "random,random", "games": 400, "chunk_size": 150},
        "two": {"players": 2, "games": 600, "chunk_size": 250},
        "three": {"players": 3, "strategies": "greedy,random,random", "games": 600,
                  "chunk_size": 250},
    }
    for name, options in shapes.items():
        execute(plan_of(**options), root / name)
    return {name: root / name for name in shapes}


@pytest.mark.parametrize("shape", ["base", "random4", "two", "three"])
def test_games_and_rounds_agree(base_run, other_runs, shape):
    folder = base_run if shape == "base" else other_runs[shape]
    config = sim.load(folder).config
    players, n_games = config["players"], config["games"]
    teams = 2 if players == 4 else players
    games, rounds = frames(folder)
    assert games["game_id"].tolist() == list(range(n_games))
    assert len(list((folder / "games").glob("*.parquet"))) == config["chunks"]
    assert (games["rotation"] == games["game_id"] % players).all()
    assert (games["deal_id"] == games["game_id"]).all()
    assert (games["players"] == players).all() and (games["seed"] == SEED).all()
    per_game = rounds.groupby("game_id")
    assert (per_game.size().to_numpy() == games["rounds"].to_numpy()).all()
    assert (per_game["round_number"].max().to_numpy() == games["rounds"]).all()
    assert (per_game["round_number"].min() == 1).all()
    assert rounds.sort_values(["game_id", "round_number"]).index.equals(rounds.index)
    last = per_game.tail(1).set_index("game_id")
    for team in range(teams):
        # Placements add points, settlement subtracts each seat's penalty from its team.
        seats = [s for s in range(players) if (s % 2 if players == 4 else s) == team]
        penalty = sum(rounds[f"seat{s}_penalty"] for s in seats)
        net = (rounds[f"team{team}_points"] - penalty).groupby(rounds["game_id"]).sum()
        assert (net.to_numpy() == games[f"team{team}_score"].to_numpy()).all()
        assert (last[f"team{team}_score"].to_numpy() == games[f"team{team}_score"]).all()
    finished = games["winner_team"] >= 0
    assert (finished != games["cap_hit"]).all()
    scores = games[[f"team{t}_score" for t in range(teams)]].to_numpy()
    winner_score = scores[np.arange(n_games), games["winner_team"].clip(lower=0)]
    target = engine.TARGET_FOR_PLAYERS[players]
    assert (winner_score[finished] >= target).all()
    assert (scores[~finished] < target).all()
    side = (games["winner_team"] + games["rotation"]) % players % (2 if players == 4 else players)
    assert (games["winner_side"] == np.where(finished, side, -1)).all()
    # The game ends inside its last round, unsettled, and only there.
    assert (last["game_ended"].to_numpy() == finished.to_numpy()).all()
    assert rounds["game_ended"].sum() == finished.sum()
    ended = rounds["game_ended"]
    assert set(rounds.loc[ended, "end_reason"]) <= {"target"}
    assert (rounds.loc[ended, [f"seat{s}_penalty" for s in range(players)]] == 0).all().all()
    assert set(rounds.loc[~ended, "end_reason"]) <= {"domino", "blocked"}
    domino = rounds["end_reason"] == "domino"
    assert (rounds.loc[domino, "domino_seat"] >= 0).all()
    assert (rounds.loc[~domino, "domino_seat"] == -1).all()
    pips = rounds[[f"seat{s}_pips" for s in range(players)]].to_numpy()
    penalties = rounds[[f"seat{s}_penalty" for s in range(players)]].to_numpy()
    assert (penalties[~ended.to_numpy()] == (pips[~ended.to_numpy()] + 2) // 5 * 5).all()
    first = rounds[rounds["round_number"] == 1].set_index("game_id")
    assert (first["leader"].to_numpy() == games["first_leader"].to_numpy()).all()
    assert (per_game["draws"].sum().to_numpy() == games["draws"]).all()
    assert (per_game["placements"].sum().to_numpy() == games["placements"]).all()
    # Rotation: seat s is played by lineup seat (s + rotation) % players.
    lineup = np.array(config["labels"])
    for seat in range(players):
        expected = lineup[(seat + games["rotation"].to_numpy()) % players]
        assert (games[f"seat{seat}_strategy"].astype(str).to_numpy() == expected).all()


def test_pandas_and_pyarrow_read_the_dataset(base_run):
    run = sim.load(base_run)
    for table in TABLES:
        by_pandas = pd.read_parquet(base_run / table)
        by_arrow = ds.dataset(base_run / table, format="parquet").to_table().to_pandas()
        assert_frame_equal(by_pandas, by_arrow)
        assert_frame_equal(by_pandas, run.frame(table))
    assert isinstance(run.games["seat0_strategy"].dtype, pd.CategoricalDtype)
    manifest = json.loads((base_run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["run_id"] == run.games["run_id"][0]
    for key in ("command", "version", "started_at", "finished_at", "games_per_second",
                "summary", "identity"):
        assert manifest[key] is not None, key
    config = manifest["config"]
    assert config["seed"] == SEED and config["players"] == 4
    assert config["strategies"] == ["greedy", "random", "greedy", "random"]
    assert config["chunk_size"] == CHUNK and config["chunks"] == GAMES // CHUNK


def test_summary_matches_the_tables(base_run):
    games, rounds = frames(base_run)
    summary = sim.load(base_run).summary.to_dict()
    side = games["winner_side"]
    assert summary["games"] == GAMES
    assert summary["unfinished"] == int((side < 0).sum())
    rotation = np.repeat(games["rotation"].to_numpy(), games["rounds"].to_numpy())
    for k, row in enumerate(summary["sides"]):
        wins = int((side == k).sum())
        assert row["wins"] == wins
        assert row["win_rate_ci95"] == pytest.approx(list(wilson_interval(wins, GAMES)))
        points = np.where((0 + rotation) % 2 == k, rounds["team0_points"], rounds["team1_points"])
        mean, low, high = mean_interval(points)
        assert row["points_per_round"] == pytest.approx(mean)
        assert row["points_per_round_ci95"] == pytest.approx([low, high])
    text = str(sim.load(base_run).summary)
    assert "seats 0+2: greedy" in text and "95% CI" in text
