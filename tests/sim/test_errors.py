"""A library setting of the wrong type is a ``SettingError`` naming the setting, never an
AttributeError or TypeError from deep inside (#51, campaign 2: K165, K168)."""

from __future__ import annotations

import re

import pytest

import sim
from sim.compare.play import compare
from sim.errors import SettingError
from sim.openings.study import run_openings
from sim.tournament import run_tournament


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return sim.simulate(2, "greedy,random", 20, 1, out=tmp_path_factory.mktemp("types") / "r")


@pytest.mark.parametrize("setting, value", [
    ("players", 2.0), ("players", "2"), ("players", True), ("duplicate", "no"),
    ("rounds", "yes"), ("strategies", 3), ("strategies", [1, 2])])
def test_simulate_names_a_setting_of_the_wrong_type(tmp_path, setting, value) -> None:
    """``players=2.0`` was a TypeError from the lineup code; ``duplicate="no"`` played
    duplicate deals (a non-empty text is true)."""
    settings = {"players": 2, "strategies": "greedy,random", "games": 10, setting: value}
    with pytest.raises(SettingError, match=f"^{setting} must be .*got {re.escape(repr(value))}$"):
        sim.simulate(**settings, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("sql", [None, b"select count(*) from games", 3])
def test_run_query_names_sql_of_the_wrong_type(run, sql) -> None:
    with pytest.raises(SettingError, match="^sql must be the text of one SELECT statement"):
        run.query(sql)
    assert int(run.query("select count(*) as n from games")["n"][0]) == 20


@pytest.mark.parametrize("play", [
    lambda out: run_tournament(2.0, "greedy,random", 20, out=out),
    lambda out: compare("greedy", "random", players=2.0, out=out),
    lambda out: run_openings(2.0, "random", 10, out=out),
    lambda out: run_openings(2, 3, 10, out=out)])
def test_every_command_function_names_a_setting_of_the_wrong_type(tmp_path, play) -> None:
    """The same for a tournament, a comparison and an openings study (an openings study of
    ``players=2.0`` was a TypeError from the lineup code)."""
    with pytest.raises(SettingError, match="^(players|strategies) must be"):
        play(tmp_path / "out")
    assert not (tmp_path / "out").exists()
