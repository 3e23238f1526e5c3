"""One player-count check and one seed check (``sim.core.checks``), called where a value
enters: every library entry point, ``GameBatch`` included, refuses a bad count or a
negative seed in one line naming it, before anything is compiled or written (the
environments' refusals are in tests/sim/env/test_aec.py and tests/sim/env/test_openspiel.py)."""

from __future__ import annotations

import numpy as np
import pytest

import sim
from sim.compare.play import compare
from sim.core.checks import check_players, check_seed
from sim.errors import SettingError
from sim.hint.estimate import analyse
from sim.hint.position import Position
from sim.kernels.batch import GameBatch
from sim.kernels.trace import trace_games
from sim.learn.config import LearnConfig
from sim.openings.play import make_config
from sim.tournament import run_tournament
from sim.tune.study import tune

PLAYERS = "players must be 2, 3 or 4, got "
SEED = "seed must be an integer from 0 to 2**63-1, got "


def test_one_player_count_check():
    assert [check_players(n) for n in (2, 3, np.int64(4))] == [2, 3, 4]
    assert type(check_players(np.int64(4))) is int
    for bad, shown in ((5, "5"), (1, "1"), (True, "True"), (2.0, "2.0"), ("2", "'2'")):
        with pytest.raises(SettingError) as refused:
            check_players(bad)
        assert str(refused.value) == PLAYERS + shown


def test_one_seed_check():
    assert check_seed(2**63 - 1) == 2**63 - 1 and type(check_seed(np.int64(5))) is int
    for bad in (2**63, -1, True, 1.5, "3"):
        with pytest.raises(SettingError, match=r"^seed must be an integer from 0 to 2\*\*63-1"):
            check_seed(bad)


# Each entry point with a bad ``players`` or ``seed`` (the other setting good).
ENTRIES = {
    "simulate": lambda players, seed, out: sim.simulate(players=players, seed=seed, games=10,
                                                        out=out),
    "tournament": lambda players, seed, out: run_tournament(players, "greedy,random", 10, seed,
                                                            out=out),
    "compare": lambda players, seed, out: compare("greedy", "random", players=players,
                                                  seed=seed, out=out),
    "openings": lambda players, seed, out: make_config(players, "greedy", 10, seed),
    "tune": lambda players, seed, out: tune("weighted", "greedy", out=out, players=players,
                                            seed=seed),
    "learn": lambda players, seed, out: LearnConfig(players=players, seed=seed).check(),
    "trace": lambda players, seed, out: trace_games(players, seed, ["greedy", "random"], 1),
    "batch": lambda players, seed, out: GameBatch(players, ["greedy", "random"], 1, seed),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize(("players", "seed", "message"), [
    (5, 0, PLAYERS + "5"), (2, -1, SEED + "-1")])
def test_every_entry_point_refuses_in_one_line(entry, players, seed, message, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(SettingError) as refused:
        ENTRIES[entry](players, seed, out)
    assert str(refused.value) == message
    assert not out.exists()  # refused before anything was written


def test_a_hint_refuses_a_negative_seed():
    position = Position(players=2, seat=0, hand=(0,), table=(), scores=(0, 0), sizes=(1, 7),
                        boneyard=20, lacks=(0, 0))
    with pytest.raises(SettingError, match=r"^seed must be an integer from 0"):
        analyse(position, seed=-1)
